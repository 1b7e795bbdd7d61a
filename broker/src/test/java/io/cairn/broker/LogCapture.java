package io.cairn.broker;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.Property;

/**
 * Records every log event of this JVM while open, so tests can assert on WARN lines and on Netty leak reports
 * ({@code LEAK:} lines of {@code ResourceLeakDetector}). Thread-safe.
 */
public final class LogCapture implements AutoCloseable {

    private final List<LogEvent> events = new CopyOnWriteArrayList<>();
    private final Appender appender = new Appender();

    private LogCapture() {
    }

    public static LogCapture start() {
        LogCapture capture = new LogCapture();
        LoggerContext context = (LoggerContext) LogManager.getContext(false);
        Configuration config = context.getConfiguration();
        capture.appender.start();
        config.addAppender(capture.appender);
        config.getRootLogger().addAppender(capture.appender, Level.ALL, null);
        context.updateLoggers();
        return capture;
    }

    public List<String> messages(Level level, Predicate<String> filter) {
        return events.stream().filter(e -> e.getLevel() == level).map(e -> e.getMessage().getFormattedMessage())
                .filter(filter).toList();
    }

    public List<String> warnings(String containing) {
        return messages(Level.WARN, m -> m.contains(containing));
    }

    /** A position in the captured events, for {@link #warningsSince(int, String)}. */
    public int mark() {
        return events.size();
    }

    /**
     * WARN messages containing {@code containing} logged after {@code mark}: connections of one test run can reuse an
     * ephemeral port, so a filter on the port alone can match an earlier connection's line.
     */
    public List<String> warningsSince(int mark, String containing) {
        return events.subList(mark, events.size()).stream().filter(e -> e.getLevel() == Level.WARN)
                .map(e -> e.getMessage().getFormattedMessage()).filter(m -> m.contains(containing)).toList();
    }

    /** Messages at {@code level} logged after {@code mark}. */
    public List<String> messagesSince(int mark, Level level) {
        return events.subList(mark, events.size()).stream().filter(e -> e.getLevel() == level)
                .map(e -> e.getMessage().getFormattedMessage()).toList();
    }

    /** Netty leak reports (logged at ERROR by ResourceLeakDetector). */
    public List<String> leakReports() {
        return events.stream().map(e -> e.getMessage().getFormattedMessage()).filter(m -> m.contains("LEAK:"))
                .toList();
    }

    /** Events that carry a stack trace, at WARN or above. */
    public List<String> stackTracesAtWarnOrAbove() {
        return events.stream().filter(e -> e.getThrown() != null && e.getLevel().isMoreSpecificThan(Level.WARN))
                .map(e -> e.getMessage().getFormattedMessage()).toList();
    }

    @Override
    public void close() {
        LoggerContext context = (LoggerContext) LogManager.getContext(false);
        context.getConfiguration().getRootLogger().removeAppender(appender.getName());
        context.updateLoggers();
        appender.stop();
    }

    private final class Appender extends AbstractAppender {

        Appender() {
            super("test-capture-" + System.identityHashCode(LogCapture.this), null, null, true, Property.EMPTY_ARRAY);
        }

        @Override
        public void append(LogEvent event) {
            events.add(event.toImmutable());
        }
    }
}
