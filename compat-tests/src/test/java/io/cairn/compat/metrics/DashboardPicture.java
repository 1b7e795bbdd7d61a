package io.cairn.compat.metrics;

import com.fasterxml.jackson.databind.JsonNode;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.Path2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.imageio.ImageIO;

/**
 * Draws dashboard panels from Prometheus' range answers into one PNG, in Grafana's dark theme: a grid of line
 * charts with the panel title, the y range and a legend from each target's {@code legendFormat}. Grafana itself is
 * not available here; this shows what its panels would plot from the same queries. Headless Java2D only.
 *
 * <p>Stateless.
 */
final class DashboardPicture {

    /** One series to draw: its legend and its points. */
    record Line(String legend, double[] times, double[] values) {
    }

    /** One panel to draw. */
    record Chart(String title, String unit, List<Line> lines) {
    }

    private static final int COLUMNS = 3;
    private static final int WIDTH = 520;
    private static final int HEIGHT = 280;
    private static final int HEADER = 44;
    private static final Color BACKGROUND = new Color(0x11, 0x12, 0x17);
    private static final Color PANEL = new Color(0x18, 0x1b, 0x1f);
    private static final Color GRID = new Color(0x2c, 0x30, 0x35);
    private static final Color TEXT = new Color(0xcc, 0xcc, 0xdc);
    private static final Color[] PALETTE = {new Color(0x73, 0xbf, 0x69), new Color(0xf2, 0xcc, 0x0c),
        new Color(0x57, 0x94, 0xf2), new Color(0xff, 0x78, 0x83), new Color(0xb8, 0x77, 0xd9),
        new Color(0xff, 0x98, 0x30)};
    private static final Pattern PLACEHOLDER = Pattern.compile("\\{\\{\\s*(\\w+)\\s*}}");

    private DashboardPicture() {
    }

    /** The legend of a series: {@code legendFormat} with its {@code {{label}}} placeholders filled in. */
    static String legend(String legendFormat, JsonNode labels) {
        Matcher matcher = PLACEHOLDER.matcher(legendFormat);
        StringBuilder out = new StringBuilder();
        while (matcher.find()) {
            matcher.appendReplacement(out, Matcher.quoteReplacement(labels.path(matcher.group(1)).asText()));
        }
        matcher.appendTail(out);
        return out.toString().isBlank() ? "value" : out.toString().strip();
    }

    /** Writes {@code charts} as a grid under {@code title} to {@code png}. */
    static void write(String title, List<Chart> charts, Path png) throws IOException {
        int rows = (charts.size() + COLUMNS - 1) / COLUMNS;
        BufferedImage image = new BufferedImage(COLUMNS * WIDTH, HEADER + rows * HEIGHT, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
            g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
            g.setColor(BACKGROUND);
            g.fillRect(0, 0, image.getWidth(), image.getHeight());
            g.setColor(TEXT);
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 18));
            g.drawString(title, 12, 28);
            for (int i = 0; i < charts.size(); i++) {
                draw(g, charts.get(i), (i % COLUMNS) * WIDTH, HEADER + (i / COLUMNS) * HEIGHT);
            }
        } finally {
            g.dispose();
        }
        Files.createDirectories(png.toAbsolutePath().getParent());
        ImageIO.write(image, "png", png.toFile());
    }

    private static void draw(Graphics2D g, Chart chart, int x0, int y0) {
        g.setColor(PANEL);
        g.fillRoundRect(x0 + 4, y0 + 4, WIDTH - 8, HEIGHT - 8, 6, 6);
        g.setColor(TEXT);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 13));
        g.drawString(chart.title(), x0 + 14, y0 + 24);
        int left = x0 + 70;
        int right = x0 + WIDTH - 16;
        int top = y0 + 38;
        int bottom = y0 + HEIGHT - 58;
        double[] range = range(chart.lines());
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
        for (int tick = 0; tick <= 3; tick++) {
            int y = bottom - (bottom - top) * tick / 3;
            g.setColor(GRID);
            g.drawLine(left, y, right, y);
            g.setColor(TEXT);
            g.drawString(format(range[2] + (range[3] - range[2]) * tick / 3, chart.unit()), x0 + 12, y + 4);
        }
        g.setStroke(new BasicStroke(1.6f));
        for (int i = 0; i < chart.lines().size(); i++) {
            Line line = chart.lines().get(i);
            g.setColor(PALETTE[i % PALETTE.length]);
            g.draw(path(line, range, left, right, top, bottom));
            if (i < 4) {
                int lx = x0 + 14 + (i % 2) * (WIDTH / 2);
                int ly = bottom + 24 + (i / 2) * 16;
                g.fillRect(lx, ly - 8, 10, 3);
                g.setColor(TEXT);
                g.drawString(shorten(line.legend()), lx + 16, ly - 3);
            }
        }
        g.setStroke(new BasicStroke(1f));
    }

    /** {minTime, maxTime, 0 (or the minimum, if negative), maxValue} of every finite point. */
    private static double[] range(List<Line> lines) {
        double[] range = {Double.MAX_VALUE, -Double.MAX_VALUE, 0, 0};
        for (Line line : lines) {
            for (int i = 0; i < line.times().length; i++) {
                range[0] = Math.min(range[0], line.times()[i]);
                range[1] = Math.max(range[1], line.times()[i]);
                if (Double.isFinite(line.values()[i])) {
                    range[2] = Math.min(range[2], line.values()[i]);
                    range[3] = Math.max(range[3], line.values()[i]);
                }
            }
        }
        if (range[3] <= range[2]) {
            range[3] = range[2] + 1;
        }
        if (range[1] <= range[0]) {
            range[1] = range[0] + 1;
        }
        return range;
    }

    private static Path2D path(Line line, double[] range, int left, int right, int top, int bottom) {
        Path2D.Double path = new Path2D.Double();
        boolean drawing = false;
        for (int i = 0; i < line.times().length; i++) {
            double value = line.values()[i];
            if (!Double.isFinite(value)) {
                drawing = false;
                continue;
            }
            double x = left + (right - left) * (line.times()[i] - range[0]) / (range[1] - range[0]);
            double y = bottom - (bottom - top) * (value - range[2]) / (range[3] - range[2]);
            if (drawing) {
                path.lineTo(x, y);
            } else {
                path.moveTo(x, y);
                drawing = true;
            }
        }
        return path;
    }

    private static String format(double value, String unit) {
        String suffix = switch (unit) {
            case "ms" -> " ms";
            case "bytes" -> " B";
            case "Bps" -> " B/s";
            case "reqps" -> " /s";
            default -> "";
        };
        double abs = Math.abs(value);
        String number = abs >= 1e9 ? String.format(Locale.ROOT, "%.1fG", value / 1e9)
                : abs >= 1e6 ? String.format(Locale.ROOT, "%.1fM", value / 1e6)
                : abs >= 1e3 ? String.format(Locale.ROOT, "%.1fk", value / 1e3)
                : String.format(Locale.ROOT, abs >= 10 || abs == 0 ? "%.0f" : abs >= 0.1 ? "%.2f" : "%.4f", value);
        return number + suffix;
    }

    private static String shorten(String legend) {
        return legend.length() > 36 ? legend.substring(0, 35) + "…" : legend;
    }
}
