package io.cairn.broker.handler;

import io.cairn.wire.error.Errors;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.config.Configurator;
import org.apache.logging.log4j.core.config.LoggerConfig;

/**
 * The BROKER_LOGGER resource (KIP-412): this process's log4j2 logger levels, read and changed at run time as Kafka's
 * {@code RuntimeLoggerManager} and {@code Log4jController} do. Changes are not stored: they last until the process
 * ends, as in Kafka. Validation and messages are Kafka's: a logger must exist (configured or created), a level must
 * be one of Kafka's six, the root logger's level cannot be removed, APPEND and SUBTRACT are INVALID_REQUEST.
 * Thread-safe (log4j2's configuration is).
 */
final class BrokerLoggers {

    static final String ROOT = "root";
    private static final Set<String> LEVELS = Set.of("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL");
    private static final String LEVEL_LIST = "DEBUG, ERROR, FATAL, INFO, TRACE, WARN";
    private static final Logger LOGGER = LogManager.getLogger(BrokerLoggers.class);

    private BrokerLoggers() {
    }

    /** Every configured or created logger with its effective level, and {@code root}. */
    static Map<String, String> loggers() {
        LoggerContext context = (LoggerContext) LogManager.getContext(false);
        Map<String, String> loggers = new TreeMap<>();
        context.getConfiguration().getLoggers().forEach((name, config) -> {
            if (!name.isEmpty()) {
                loggers.put(name, config.getLevel().toString());
            }
        });
        for (org.apache.logging.log4j.core.Logger logger : context.getLoggers()) {
            if (!logger.getName().isEmpty()) {
                loggers.put(logger.getName(), logger.getLevel().toString());
            }
        }
        loggers.put(ROOT, context.getRootLogger().getLevel().toString());
        return loggers;
    }

    private static boolean exists(String name) {
        return loggers().containsKey(name);
    }

    /** Kafka's {@code validateLogLevelConfigs}: the first refused operation, or empty. */
    static Optional<ConfigAlterations.Outcome> validate(List<ConfigAlterations.Op> ops) {
        for (ConfigAlterations.Op op : ops) {
            String name = op.name();
            switch (op.op()) {
                case ConfigAlterations.SET -> {
                    if (!exists(name)) {
                        return invalidConfig("Logger " + name + " does not exist!");
                    }
                    if (!LEVELS.contains(op.value())) {
                        return invalidConfig("Cannot set the log level of " + name + " to " + op.value()
                                + " as it is not a supported log level. Valid log levels are " + LEVEL_LIST);
                    }
                }
                case ConfigAlterations.DELETE -> {
                    if (!exists(name)) {
                        return invalidConfig("Logger " + name + " does not exist!");
                    }
                    if (name.equals(ROOT)) {
                        return invalidRequest("Removing the log level of the root logger is not allowed");
                    }
                }
                case ConfigAlterations.APPEND -> {
                    return invalidRequest("APPEND operation is not allowed for the BROKER_LOGGER resource");
                }
                case ConfigAlterations.SUBTRACT -> {
                    return invalidRequest("SUBTRACT operation is not allowed for the BROKER_LOGGER resource");
                }
                default -> {
                    return invalidRequest("Unknown operation type " + op.op()
                            + " is not allowed for the BROKER_LOGGER resource");
                }
            }
        }
        return Optional.empty();
    }

    /** Applies validated operations: SET a level, DELETE a logger's own level (it inherits its parent's again). */
    static void apply(List<ConfigAlterations.Op> ops) {
        for (ConfigAlterations.Op op : ops) {
            if (op.op() == ConfigAlterations.SET) {
                Level level = Level.toLevel(op.value());
                if (op.name().equals(ROOT)) {
                    Configurator.setRootLevel(level);
                } else {
                    Configurator.setLevel(op.name(), level);
                }
                LOGGER.warn("Updated the log level of {} to {}", op.name(), op.value());
            } else {
                unset(op.name());
                LOGGER.warn("Unset the log level of {}", op.name());
            }
        }
    }

    private static void unset(String name) {
        LoggerContext context = (LoggerContext) LogManager.getContext(false);
        LoggerConfig config = context.getConfiguration().getLoggerConfig(name);
        if (config.getName().equals(name)) {
            config.setLevel(null);
            context.updateLoggers();
        }
    }

    private static Optional<ConfigAlterations.Outcome> invalidConfig(String message) {
        return Optional.of(new ConfigAlterations.Outcome(Errors.INVALID_CONFIG, message));
    }

    private static Optional<ConfigAlterations.Outcome> invalidRequest(String message) {
        return Optional.of(new ConfigAlterations.Outcome(Errors.INVALID_REQUEST, message));
    }
}
