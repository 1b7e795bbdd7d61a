package io.cairn.compat.figures;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.Ellipse2D;
import java.awt.geom.Rectangle2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.TreeMap;
import java.util.stream.Stream;
import javax.imageio.ImageIO;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.CategoryAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.DatasetRenderingOrder;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.renderer.category.ScatterRenderer;
import org.jfree.chart.renderer.category.StandardBarPainter;
import org.jfree.chart.title.TextTitle;
import org.jfree.data.category.DefaultCategoryDataset;
import org.jfree.data.statistics.DefaultMultiValueCategoryDataset;

/**
 * Writes {@code bin/cairn-bench}'s report: reads the figure files {@code bin/cairn-perf --figures} wrote (one per
 * workload, broker kind and round, {@code key=value} lines with {@code workload=} and {@code round=} added by the
 * driver), and writes {@code report.md} with each workload's medians and ranges for Cairn beside Kafka, and one PNG per
 * measure ({@code throughput.png}, {@code consume.png}, {@code p99.png}, {@code e2e.png}, {@code cpu.png}) with a panel
 * per workload that has it: the median of each broker as a bar and every round as a dot.
 *
 * <p>Arguments: {@code --raw DIR --out DIR [--header FILE]}; the header file's text (machine, commit, settings) opens
 * the report. Single-threaded; runs headless.
 */
public final class BenchReport {

    private static final Color CAIRN = new Color(0x2E7D32);
    private static final Color KAFKA = new Color(0x455A64);
    private static final int PANEL_WIDTH = 300;
    private static final int PANEL_HEIGHT = 260;
    private static final int COLUMNS = 4;
    private static final int TITLE_HEIGHT = 52;

    /** A measure of the report: its figure key, its name, its unit and whether more is better. */
    record Measure(String key, String name, String unit, boolean higherIsBetter, String chart) {
    }

    static final List<Measure> MEASURES = List.of(
            new Measure("produce_records_per_s", "produce", "records/s", true, "throughput.png"),
            new Measure("produce_p99_ms", "produce p99 latency, unthrottled", "ms", false, "p99.png"),
            new Measure("e2e_p99_ms", "end-to-end p99 latency at a fixed load", "ms", false, "e2e.png"),
            new Measure("e2e_p50_ms", "end-to-end median latency at a fixed load", "ms", false, null),
            new Measure("consume_records_per_s", "consume", "records/s", true, "consume.png"),
            new Measure("cpu_total_s_per_million", "broker CPU, produce + consume", "s per million records", false,
                    "cpu.png"),
            new Measure("cpu_produce_jit_s_per_million", "of which the JIT compiler threads during produce",
                    "s per million records", false, null),
            new Measure("rss_peak_mb", "broker peak RSS", "MB", false, null),
            new Measure("start_s", "start to first served request", "s", false, null));

    private BenchReport() {
    }

    public static void main(String[] args) throws IOException {
        Path raw = null;
        Path out = null;
        Path header = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--raw" -> raw = Path.of(args[++i]);
                case "--out" -> out = Path.of(args[++i]);
                case "--header" -> header = Path.of(args[++i]);
                default -> throw new IllegalArgumentException("Unknown option " + args[i]
                        + "; usage: --raw DIR --out DIR [--header FILE]");
            }
        }
        if (raw == null || out == null) {
            throw new IllegalArgumentException("usage: --raw DIR --out DIR [--header FILE]");
        }
        System.setProperty("java.awt.headless", "true");
        Map<String, Workload> workloads = read(raw);
        Files.createDirectories(out);
        String headerText = header == null ? "" : Files.readString(header);
        Files.writeString(out.resolve("report.md"), markdown(headerText, workloads));
        for (Measure measure : MEASURES) {
            if (measure.chart() != null) {
                ImageIO.write(chart(measure, workloads), "png", out.resolve(measure.chart()).toFile());
            }
        }
        System.out.println("Wrote " + out.resolve("report.md") + " and its charts");
    }

    /** One workload's figures: per broker kind, per measure key, every round's value. */
    static final class Workload {
        final String name;
        String description = "";
        final Map<String, Map<String, List<Double>>> values = new TreeMap<>();

        Workload(String name) {
            this.name = name;
        }

        List<Double> values(String kind, String key) {
            return values.getOrDefault(kind, Map.of()).getOrDefault(key, List.of());
        }
    }

    static Map<String, Workload> read(Path raw) throws IOException {
        Map<String, Workload> workloads = new LinkedHashMap<>();
        List<Path> files;
        try (Stream<Path> list = Files.list(raw)) {
            files = list.filter(p -> p.getFileName().toString().endsWith(".txt"))
                    .sorted(Comparator.comparing(Path::toString)).toList();
        }
        List<Map<String, String>> runs = new ArrayList<>();
        for (Path file : files) {
            Map<String, String> figures = new LinkedHashMap<>();
            for (String line : Files.readAllLines(file)) {
                int eq = line.indexOf('=');
                if (eq > 0) {
                    figures.put(line.substring(0, eq).trim(), line.substring(eq + 1).trim());
                }
            }
            if (figures.containsKey("workload") && figures.containsKey("kind")) {
                runs.add(figures);
            }
        }
        runs.sort(Comparator.comparing((Map<String, String> f) -> f.getOrDefault("order", "999"),
                Comparator.comparingInt(Integer::parseInt)));
        for (Map<String, String> figures : runs) {
            Workload workload = workloads.computeIfAbsent(figures.get("workload"), Workload::new);
            workload.description = figures.getOrDefault("description", workload.description);
            Map<String, List<Double>> byKey = workload.values.computeIfAbsent(figures.get("kind"),
                    k -> new LinkedHashMap<>());
            figures.put("cpu_total_s_per_million", sum(figures.get("cpu_produce_s_per_million"),
                    figures.get("cpu_consume_s_per_million")));
            for (Measure measure : MEASURES) {
                parse(figures.get(measure.key())).ifPresent(
                        v -> byKey.computeIfAbsent(measure.key(), k -> new ArrayList<>()).add(v));
            }
        }
        return workloads;
    }

    private static String sum(String a, String b) {
        OptionalDouble x = parse(a);
        OptionalDouble y = parse(b);
        return x.isPresent() && y.isPresent() ? String.valueOf(x.getAsDouble() + y.getAsDouble()) : "n/a";
    }

    private static OptionalDouble parse(String value) {
        if (value == null) {
            return OptionalDouble.empty();
        }
        try {
            double v = Double.parseDouble(value);
            return Double.isFinite(v) ? OptionalDouble.of(v) : OptionalDouble.empty();
        } catch (NumberFormatException e) {
            return OptionalDouble.empty();
        }
    }

    static OptionalDouble median(List<Double> values) {
        if (values.isEmpty()) {
            return OptionalDouble.empty();
        }
        List<Double> sorted = values.stream().sorted().toList();
        int n = sorted.size();
        return OptionalDouble.of(n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2);
    }

    static String markdown(String header, Map<String, Workload> workloads) {
        StringBuilder md = new StringBuilder();
        md.append("# Cairn beside Apache Kafka\n\n").append(header.strip()).append("\n\n");
        md.append("![produce throughput](throughput.png)\n\n");
        md.append("## Summary: Cairn's median over Kafka's (same rounds)\n\n");
        md.append("| workload | produce | produce p99 | end-to-end p99 | consume | broker CPU per record | peak RSS |\n");
        md.append("|---|---|---|---|---|---|---|\n");
        for (Workload w : workloads.values()) {
            md.append("| ").append(w.name);
            for (String key : List.of("produce_records_per_s", "produce_p99_ms", "e2e_p99_ms",
                    "consume_records_per_s", "cpu_total_s_per_million", "rss_peak_mb")) {
                md.append(" | ").append(ratio(w, key));
            }
            md.append(" |\n");
        }
        md.append("\nFor produce and consume more is better; for latency, CPU and RSS less is better. The produce p99 is "
                + "`kafka-producer-perf-test`'s, unthrottled: the time records wait in the producer's full buffer, which "
                + "follows the throughput. The end-to-end p99 (workloads that measure it) is from a record's due time "
                + "at a fixed rate to a consumer's poll returning it (`bin/cairn-perf --e2e`).\n");
        for (Workload w : workloads.values()) {
            md.append("\n## ").append(w.name).append("\n\n").append(w.description).append("\n\n");
            md.append("| measure | Cairn median (range) | Kafka median (range) | Cairn / Kafka |\n");
            md.append("|---|---|---|---|\n");
            for (Measure m : MEASURES) {
                List<Double> cairn = w.values("cairn", m.key());
                List<Double> kafka = w.values("kafka", m.key());
                if (cairn.isEmpty() && kafka.isEmpty()) {
                    continue;
                }
                md.append("| ").append(m.name()).append(" (").append(m.unit()).append(") | ")
                        .append(spread(cairn)).append(" | ").append(spread(kafka)).append(" | ")
                        .append(ratio(w, m.key())).append(" |\n");
            }
        }
        md.append("\n![end-to-end p99](e2e.png)\n\n![produce p99](p99.png)\n\n![consume](consume.png)\n\n"
                + "![broker CPU](cpu.png)\n");
        return md.toString();
    }

    private static String ratio(Workload w, String key) {
        OptionalDouble cairn = median(w.values("cairn", key));
        OptionalDouble kafka = median(w.values("kafka", key));
        if (cairn.isEmpty() || kafka.isEmpty() || kafka.getAsDouble() == 0) {
            return "n/a";
        }
        return String.format(Locale.ROOT, "%.2f×", cairn.getAsDouble() / kafka.getAsDouble());
    }

    private static String spread(List<Double> values) {
        if (values.isEmpty()) {
            return "n/a";
        }
        double min = values.stream().mapToDouble(Double::doubleValue).min().orElseThrow();
        double max = values.stream().mapToDouble(Double::doubleValue).max().orElseThrow();
        String median = format(median(values).orElseThrow());
        return values.size() == 1 ? median : median + " (" + format(min) + "–" + format(max) + ")";
    }

    static String format(double v) {
        if (Math.abs(v) >= 1000) {
            return String.format(Locale.ROOT, "%,.0f", v);
        }
        return Math.abs(v) >= 10 ? String.format(Locale.ROOT, "%.1f", v) : String.format(Locale.ROOT, "%.2f", v);
    }

    /** One image for a measure: a panel per workload, each with its own scale (Cairn and Kafka side by side). */
    static BufferedImage chart(Measure measure, Map<String, Workload> allWorkloads) {
        // A panel for each workload that has the measure (end-to-end latency is measured by some only).
        Map<String, Workload> workloads = new LinkedHashMap<>();
        allWorkloads.forEach((name, w) -> {
            if (!w.values("cairn", measure.key()).isEmpty() || !w.values("kafka", measure.key()).isEmpty()) {
                workloads.put(name, w);
            }
        });
        int panels = Math.max(1, workloads.size());
        int rows = (panels + COLUMNS - 1) / COLUMNS;
        int columns = Math.min(COLUMNS, panels);
        BufferedImage image = new BufferedImage(columns * PANEL_WIDTH, TITLE_HEIGHT + rows * PANEL_HEIGHT,
                BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
            g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, image.getWidth(), image.getHeight());
            g.setColor(Color.BLACK);
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
            g.drawString(measure.name() + " (" + measure.unit() + ", " + (measure.higherIsBetter() ? "more" : "less")
                    + " is better)", 10, 22);
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
            g.drawString("Cairn (green) beside Kafka (grey): bar = median, dots = rounds", 10, 42);
            int i = 0;
            for (Workload w : workloads.values()) {
                int x = (i % COLUMNS) * PANEL_WIDTH;
                int y = TITLE_HEIGHT + (i / COLUMNS) * PANEL_HEIGHT;
                panel(measure, w).draw(g, new Rectangle2D.Double(x, y, PANEL_WIDTH, PANEL_HEIGHT));
                i++;
            }
        } finally {
            g.dispose();
        }
        return image;
    }

    private static JFreeChart panel(Measure measure, Workload w) {
        DefaultCategoryDataset medians = new DefaultCategoryDataset();
        DefaultMultiValueCategoryDataset rounds = new DefaultMultiValueCategoryDataset();
        for (String kind : List.of("cairn", "kafka")) {
            String label = kind.equals("cairn") ? "Cairn" : "Kafka";
            List<Double> values = w.values(kind, measure.key());
            OptionalDouble median = median(values);
            medians.addValue(median.isPresent() ? median.getAsDouble() : null, label, label);
            rounds.add(new ArrayList<Number>(values), label, label);
        }
        CategoryAxis categories = new CategoryAxis();
        categories.setCategoryMargin(0.2);
        NumberAxis numbers = new NumberAxis();
        numbers.setAutoRangeIncludesZero(true);
        BarRenderer bars = new BarRenderer();
        bars.setBarPainter(new StandardBarPainter());
        bars.setShadowVisible(false);
        bars.setItemMargin(-1.0);
        bars.setSeriesPaint(0, CAIRN);
        bars.setSeriesPaint(1, KAFKA);
        CategoryPlot plot = new CategoryPlot(medians, categories, numbers, bars);
        ScatterRenderer dots = new ScatterRenderer();
        dots.setUseSeriesOffset(false);
        dots.setUseFillPaint(true);
        dots.setUseOutlinePaint(true);
        dots.setDrawOutlines(true);
        for (int series = 0; series < 2; series++) {
            dots.setSeriesFillPaint(series, Color.WHITE);
            dots.setSeriesOutlinePaint(series, Color.BLACK);
            dots.setSeriesOutlineStroke(series, new BasicStroke(1.5f));
            dots.setSeriesShape(series, new Ellipse2D.Double(-4, -4, 8, 8));
        }
        plot.setDataset(1, rounds);
        plot.setRenderer(1, dots);
        plot.setDatasetRenderingOrder(DatasetRenderingOrder.FORWARD);
        plot.setBackgroundPaint(new Color(0xF5F5F5));
        plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        JFreeChart chart = new JFreeChart(null, JFreeChart.DEFAULT_TITLE_FONT, plot, false);
        chart.setBackgroundPaint(Color.WHITE);
        TextTitle title = new TextTitle(w.name, new Font(Font.SANS_SERIF, Font.BOLD, 12));
        chart.setTitle(title);
        String ratio = ratio(w, measure.key());
        chart.addSubtitle(new TextTitle("Cairn / Kafka " + ratio, new Font(Font.SANS_SERIF, Font.PLAIN, 11)));
        return chart;
    }
}
