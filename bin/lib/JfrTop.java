import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;

/**
 * The CPU samples of JFR recordings (or async-profiler's collapsed stacks with thread names, {@code *.collapsed})
 * summed up (what bin/cairn-jfr-top runs, as a single-file source program):
 * {@code jdk.ExecutionSample} events (threads running Java code; a thread blocked in a system call is not in them)
 * by thread group (the thread name with its numbers replaced by {@code #}), then per group and overall the top
 * frames by self samples (the frame on top of the stack) and by total samples (the frame anywhere on the stack,
 * counted once per sample). Arguments: {@code [--top N] [--group SUBSTRING] FILE...}; the files are summed.
 */
public final class JfrTop {

    private JfrTop() {
    }

    public static void main(String[] args) throws IOException {
        int top = 15;
        String only = null;
        List<Path> files = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--top" -> top = Integer.parseInt(args[++i]);
                case "--group" -> only = args[++i];
                default -> files.add(Path.of(args[i]));
            }
        }
        if (files.isEmpty()) {
            System.err.println("usage: cairn-jfr-top [--top N] [--group SUBSTRING] FILE.jfr...");
            System.exit(2);
        }
        Map<String, Long> groups = new HashMap<>();
        Map<String, Map<String, Long>> self = new HashMap<>();
        Map<String, Map<String, Long>> total = new HashMap<>();
        long samples = 0;
        for (Path file : files) {
            if (file.toString().endsWith(".collapsed")) {
                for (String line : Files.readAllLines(file)) {
                    int space = line.lastIndexOf(' ');
                    if (space < 0) {
                        continue;
                    }
                    long count = Long.parseLong(line.substring(space + 1));
                    List<String> frames = new ArrayList<>(List.of(line.substring(0, space).split(";")));
                    String group = frames.remove(0).replaceAll("^\\[|( tid=[0-9]+)?\\]$", "")
                        .replaceAll("[0-9]+", "#");
                    if (only != null && !group.contains(only) || frames.isEmpty()) {
                        continue;
                    }
                    Collections.reverse(frames);
                    samples += count;
                    groups.merge(group, count, Long::sum);
                    count(self, total, group, frames.stream().map(JfrTop::shortName).toList(), count);
                }
                continue;
            }
            for (RecordedEvent event : RecordingFile.readAllEvents(file)) {
                if (!event.getEventType().getName().equals("jdk.ExecutionSample")) {
                    continue;
                }
                String group = group(event);
                if (only != null && !group.contains(only)) {
                    continue;
                }
                RecordedStackTrace stack = event.getStackTrace();
                if (stack == null || stack.getFrames().isEmpty()) {
                    continue;
                }
                samples++;
                groups.merge(group, 1L, Long::sum);
                List<String> frames = new ArrayList<>();
                frames.add(frame(stack.getFrames().get(0)));
                stack.getFrames().stream().skip(1).map(JfrTop::method).forEach(frames::add);
                count(self, total, group, frames, 1L);
            }
        }
        System.out.printf("%d CPU samples in %d file(s)%n%n", samples, files.size());
        System.out.println("== samples by thread group");
        print(groups, samples, 30);
        long all = samples;
        List<String> order = new ArrayList<>();
        order.add("(all)");
        groups.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed())
            .filter(e -> e.getValue() * 100 >= all * 2).forEach(e -> order.add(e.getKey()));
        for (String group : order) {
            long n = group.equals("(all)") ? samples : groups.get(group);
            System.out.printf("%n== %s: %d samples (%.1f %%)%n-- self (top frame)%n", group, n, 100.0 * n / samples);
            print(self.get(group), samples, top);
            System.out.println("-- total (anywhere on the stack)");
            print(total.get(group), samples, top);
        }
    }

    /** Counts one stack ({@code frames}, the top first) {@code n} times. */
    private static void count(Map<String, Map<String, Long>> self, Map<String, Map<String, Long>> total,
                              String group, List<String> frames, long n) {
        for (String g : List.of(group, "(all)")) {
            self.computeIfAbsent(g, k -> new HashMap<>()).merge(frames.get(0), n, Long::sum);
            Set<String> seen = new HashSet<>();
            for (String f : frames) {
                String method = f.replaceAll(":-?[0-9]+$", "");
                if (seen.add(method)) {
                    total.computeIfAbsent(g, k -> new HashMap<>()).merge(method, n, Long::sum);
                }
            }
        }
    }

    /** An async-profiler frame without its package: {@code a/b/C.m} → {@code C.m}; native and kernel frames as they are. */
    private static String shortName(String frame) {
        int paren = frame.indexOf('(');
        String head = paren < 0 ? frame : frame.substring(0, paren);
        int slash = head.lastIndexOf('/');
        return slash < 0 || head.contains(" ") ? frame : frame.substring(slash + 1);
    }

    private static String group(RecordedEvent event) {
        Object thread = event.getValue("sampledThread");
        String name = thread == null ? "?" : event.getThread("sampledThread").getJavaName();
        return name == null ? "?" : name.replaceAll("[0-9]+", "#");
    }

    private static String method(RecordedFrame f) {
        if (f.getMethod() == null) {
            return "?";
        }
        String type = f.getMethod().getType().getName();
        return type.substring(type.lastIndexOf('.') + 1) + "." + f.getMethod().getName();
    }

    private static String frame(RecordedFrame f) {
        return method(f) + ":" + f.getLineNumber();
    }

    private static void print(Map<String, Long> counts, long samples, int top) {
        if (counts == null) {
            return;
        }
        counts.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed()).limit(top)
            .forEach(e -> System.out.printf("%6d %5.1f %%  %s%n", e.getValue(), 100.0 * e.getValue() / samples,
                e.getKey()));
    }
}
