package io.cairn.broker.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.metadata.image.ConfigResource;
import io.cairn.metadata.image.MetadataImage;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Kafka's per-listener processors: each listener sized by its own {@code listener.name.<l>.num.network.threads}, else
 * {@code num.network.threads}, checked per listener against its count now with Kafka's messages.
 */
class DynamicNetworkThreadsTest {

    /** INTERNAL with 4 threads of its own in server.properties, PLAINTEXT with num.network.threads (3). */
    private final Map<String, Integer> sizes = new LinkedHashMap<>();
    private final DynamicNetworkThreads threads = new DynamicNetworkThreads(BrokerConfig.fromMap(Map.of(
            "listeners", "PLAINTEXT://:9092,INTERNAL://:9093,CONTROLLER://:9094",
            "listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "listener.name.internal.num.network.threads", "4")), () -> new DynamicNetworkThreads.Listeners() {
                @Override
                public Map<String, Integer> networkThreads() {
                    return Map.copyOf(sizes);
                }

                @Override
                public void resizeNetworkThreads(String listenerName, int size) {
                    sizes.put(listenerName, size);
                }
            });

    DynamicNetworkThreadsTest() {
        sizes.put("PLAINTEXT", 3);
        sizes.put("INTERNAL", 4);
    }

    private static MetadataImage image(Map<String, String> broker1, Map<String, String> cluster) {
        return new MetadataImage(1L, "c", 1, 1L, Map.of(), Map.of(), Map.of(),
                Map.of(ConfigResource.broker("1"), broker1, ConfigResource.broker(""), cluster), 0L, 0L, Map.of(),
                Map.of(), Map.of());
    }

    private static String wrapped(String refusal) {
        return DynamicBrokerConfigs.invalidDynamicConfiguration(refusal);
    }

    @Test
    void aListenersOwnSizeWinsAtAnyLevelOverNumNetworkThreads() {
        // When: the cluster default raises num.network.threads and this broker gives PLAINTEXT its own size
        threads.apply(image(Map.of("listener.name.plaintext.num.network.threads", "5"),
                Map.of("num.network.threads", "6")));

        // Then: INTERNAL keeps the size of its own key in server.properties
        assertThat(sizes).containsExactly(Map.entry("PLAINTEXT", 5), Map.entry("INTERNAL", 4));

        // When: PLAINTEXT's own size is deleted
        threads.apply(image(Map.of(), Map.of("num.network.threads", "6")));

        // Then
        assertThat(sizes).containsExactly(Map.entry("PLAINTEXT", 6), Map.entry("INTERNAL", 4));

        // When: the INTERNAL listener gets a size of its own per broker, and the cluster default goes
        threads.apply(image(Map.of("listener.name.internal.num.network.threads", "2"), Map.of()));

        // Then
        assertThat(sizes).containsExactly(Map.entry("PLAINTEXT", 3), Map.entry("INTERNAL", 2));
    }

    @Test
    void eachListenerChecksItsNewSizeAgainstItsOwnCountWithKafkasMessages() {
        // Given
        MetadataImage none = image(Map.of(), Map.of());

        // Then: PLAINTEXT has 3, INTERNAL 4
        assertThat(threads.validate("1", Map.of("listener.name.plaintext.num.network.threads", "6"), none))
                .isEmpty();
        assertThat(threads.validate("1", Map.of("listener.name.plaintext.num.network.threads", "7"), none))
                .contains(wrapped("Dynamic thread count update validation failed for num.network.threads=7, value "
                        + "should not be greater than double the current value 3"));
        assertThat(threads.validate("", Map.of("listener.name.internal.num.network.threads", "1"), none))
                .contains(wrapped("Dynamic thread count update validation failed for num.network.threads=1, value "
                        + "should be at least half the current value 4"));
        // num.network.threads reaches PLAINTEXT only: 7 is within INTERNAL's bounds (4) but not PLAINTEXT's (3)
        assertThat(threads.validate("1", Map.of("num.network.threads", "7"), none))
                .contains(wrapped("Dynamic thread count update validation failed for num.network.threads=7, value "
                        + "should not be greater than double the current value 3"));
        assertThat(threads.validate("1", Map.of("num.network.threads", "7",
                "listener.name.plaintext.num.network.threads", "3"), none)).isEmpty();
        assertThat(threads.validate("1", Map.of("listener.name.plaintext.num.network.threads", "0"), none))
                .contains(wrapped("Dynamic thread count update validation failed for num.network.threads=0, value "
                        + "should be at least 1"));
    }

    @Test
    void aCommittedSizeOutsideKafkasBoundsIsNotApplied() {
        // When: a value another broker accepted against its own sizes
        threads.apply(image(Map.of(), Map.of("num.network.threads", "64")));

        // Then
        assertThat(sizes).containsExactly(Map.entry("PLAINTEXT", 3), Map.entry("INTERNAL", 4));
    }

    @Test
    void theListenerKeysAreLiveAndTypeCheckedAsTheKeyTheyOverride() {
        // Then
        assertThat(DynamicNetworkThreads.isListenerKey("listener.name.plaintext.num.network.threads")).isTrue();
        assertThat(DynamicNetworkThreads.isListenerKey("num.network.threads")).isFalse();
        assertThat(DynamicBrokerConfigs.validate(Map.of("listener.name.plaintext.num.network.threads", "4"), false))
                .isEmpty();
        assertThat(DynamicBrokerConfigs.validate(Map.of("listener.name.plaintext.num.network.threads", "x"), true))
                .map(DynamicBrokerConfigs.Refusal::message)
                .contains("Invalid value x for configuration num.network.threads: Not a number of type INT");
        assertThatThrownBy(() -> BrokerConfig.fromMap(Map.of("listener.name.plaintext.num.network.threads", "0"))
                .numNetworkThreads("PLAINTEXT")).isInstanceOf(ConfigException.class)
                .hasMessage("Invalid value 0 for configuration listener.name.plaintext.num.network.threads: Value "
                        + "must be at least 1");
    }
}
