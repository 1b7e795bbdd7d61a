package io.cairn.broker.config;

import io.cairn.log.cleaner.LogCleaner;
import io.cairn.metadata.image.ConfigResource;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.MetadataListener;
import io.cairn.metadata.image.MetadataUpdate;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The log cleaner as dynamic broker configs change it (Kafka's {@code LogCleaner} reconfigurable):
 * {@code log.cleaner.threads}, {@code log.cleaner.backoff.ms}, {@code log.cleaner.io.max.bytes.per.second},
 * {@code log.cleaner.dedupe.buffer.size}, {@code log.cleaner.io.buffer.load.factor} and
 * {@code log.cleaner.io.buffer.size}, each this broker's dynamic value, else the cluster default's, else
 * {@code server.properties}'. The result is checked as Kafka's {@code KafkaConfig} checks it (more than 1 MiB of
 * dedupe buffer per thread, refused with Kafka's "requirement failed" text; and, before Kafka would find out when
 * it restarts the threads, an offset map that holds at least one key), then a change of the thread
 * count as Kafka's {@code LogCleaner.validateReconfiguration} checks it (at least 1, at least half and at
 * most double the count now, wrapped as {@link DynamicBrokerConfigs#invalidDynamicConfiguration}); each committed
 * change of this broker's or the cluster default's configs restarts the cleaner threads with the new settings, as
 * Kafka's {@code reconfigure}, and again from the image at start, so the settings survive a restart. With
 * {@code log.cleaner.enable=false} there is no cleaner to reconfigure, as in Kafka.
 *
 * <p>Thread-safe.
 */
public final class DynamicLogCleaner implements MetadataListener, BrokerReconfigurable {

    private static final Logger LOGGER = LogManager.getLogger(DynamicLogCleaner.class);

    private final String brokerId;
    private final CleanerSettings staticSettings;
    private final Supplier<List<LogCleaner>> cleaners;
    private volatile CleanerSettings current;

    /**
     * @param brokerId       this broker's id
     * @param staticSettings the settings of {@code server.properties}, those the cleaners started with
     * @param cleaners       the cleaners of the log directories
     */
    public DynamicLogCleaner(int brokerId, CleanerSettings staticSettings, Supplier<List<LogCleaner>> cleaners) {
        this.brokerId = Integer.toString(brokerId);
        this.staticSettings = staticSettings;
        this.cleaners = cleaners;
        this.current = staticSettings;
    }

    @Override
    public Optional<String> validate(String resourceName, Map<String, String> props, MetadataImage image) {
        if (!staticSettings.enabled()) {
            return Optional.empty();
        }
        Map<String, String> mine = resourceName.isEmpty() ? image.configs(ConfigResource.broker(brokerId)) : props;
        Map<String, String> cluster = resourceName.isEmpty() ? props : image.configs(ConfigResource.broker(""));
        CleanerSettings wanted;
        try {
            wanted = effective(mine, cluster);
        } catch (ConfigException e) {
            return Optional.empty();
        }
        Optional<String> problem = wanted.problem();
        if (problem.isPresent()) {
            return problem;
        }
        return check(wanted.threads()).map(DynamicBrokerConfigs::invalidDynamicConfiguration);
    }

    /** Applies the settings {@code image} gives this broker (at start, for the settings kept in metadata). */
    public synchronized void apply(MetadataImage image) {
        if (!staticSettings.enabled()) {
            return;
        }
        CleanerSettings wanted;
        try {
            wanted = effective(image.configs(ConfigResource.broker(brokerId)),
                    image.configs(ConfigResource.broker("")));
        } catch (ConfigException e) {
            LOGGER.error("Failed to update the log cleaner with the broker configs of metadata offset {}: {}",
                    image.offset(), e.getMessage());
            return;
        }
        if (wanted.equals(current)) {
            return;
        }
        Optional<String> refused = wanted.problem().or(() -> check(wanted.threads()));
        if (refused.isPresent()) {
            LOGGER.error("Failed to update the log cleaner with {} (metadata offset {}): {}", wanted,
                    image.offset(), refused.get());
            return;
        }
        LOGGER.info("Reconfiguring the log cleaner: {} threads, backoff {} ms, {} bytes/s, dedupe buffer {} bytes "
                + "at load factor {}, I/O buffer {} bytes (was {})", wanted.threads(), wanted.backoffMs(),
                wanted.ioMaxBytesPerSecond(), wanted.dedupeBufferSize(), wanted.loadFactor(), wanted.ioBufferSize(),
                current);
        for (LogCleaner cleaner : cleaners.get()) {
            cleaner.reconfigure(wanted.threadsToRun(), wanted.scheduledBackoffMs(), wanted.ioMaxBytesPerSecond(),
                    wanted.bufferSizes());
        }
        current = wanted;
    }

    @Override
    public void onUpdate(MetadataUpdate update) {
        if (BrokerReconfigurable.changesConfigsOf(update, brokerId)) {
            apply(update.image());
        }
    }

    /** The settings in force now. */
    public CleanerSettings current() {
        return current;
    }

    /** Kafka's order: {@code server.properties}, then the cluster default's dynamic values, then this broker's. */
    private CleanerSettings effective(Map<String, String> mine, Map<String, String> cluster) {
        Map<String, String> props = new HashMap<>();
        for (String key : CleanerSettings.LIVE_KEYS) {
            String value = mine.get(key) != null ? mine.get(key) : cluster.get(key);
            if (value != null) {
                props.put(key, value);
            }
        }
        return staticSettings.with(props);
    }

    /** Kafka's {@code LogCleaner.validateReconfiguration} of a new thread count. */
    private Optional<String> check(int threads) {
        int now = current.threads();
        if (threads == now) {
            return Optional.empty();
        }
        if (threads < 1) {
            return Optional.of("Log cleaner threads should be at least 1");
        }
        if (threads < now / 2) {
            return Optional.of("Log cleaner threads cannot be reduced to less than half the current value " + now);
        }
        if (threads > now * 2) {
            return Optional.of("Log cleaner threads cannot be increased to more than double the current value "
                    + now);
        }
        return Optional.empty();
    }
}
