package io.cairn.broker.config;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.metadata.image.ConfigResource;
import io.cairn.metadata.image.MetadataImage;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** Kafka's DynamicListenerConfig: listeners added and removed live, with Kafka's checks and messages. */
class DynamicListenersTest {

    private static final String MAP = "PLAINTEXT:PLAINTEXT,EXTRA:PLAINTEXT,CONTROLLER:PLAINTEXT";
    private final List<String> changes = new CopyOnWriteArrayList<>();
    private final BrokerConfig config = BrokerConfig.fromMap(Map.of("node.id", "1",
            "listeners", "PLAINTEXT://:9092,CONTROLLER://:9093", "controller.listener.names", "CONTROLLER",
            "ssl.keystore.location", "/unused.p12", "ssl.keystore.password", "unused"));
    private final DynamicListeners listeners = new DynamicListeners(config, () -> new DynamicListeners.Binder() {
        @Override
        public void addListener(BrokerConfig next, Endpoint endpoint) {
            changes.add("add " + endpoint);
            SaslSettings sasl = next.saslSettings(endpoint.listenerName());
            if (sasl != null) {
                changes.add(endpoint.listenerName() + " " + sasl.enabledMechanisms() + " users "
                        + sasl.jaasOf("PLAIN").options().keySet().stream().filter(k -> k.startsWith("user_")).toList());
            }
        }

        @Override
        public void removeListener(String listenerName) {
            changes.add("remove " + listenerName);
        }
    });

    private static MetadataImage image(Map<String, String> broker1) {
        return new MetadataImage(1L, "c", 1, 1L, Map.of(), Map.of(), Map.of(),
                Map.of(ConfigResource.broker("1"), broker1), 0L, 0L, Map.of(), Map.of(), Map.of());
    }

    private static String wrapped(String refusal) {
        return DynamicBrokerConfigs.invalidDynamicConfiguration(refusal);
    }

    @Test
    void aChangeIsCheckedAsKafkaChecksIt() {
        // Given
        MetadataImage none = image(Map.of());

        // Then: without advertised.listeners the listeners are advertised, so they must stay
        assertThat(listeners.validate("1", Map.of("listeners", "PLAINTEXT://:9092,CONTROLLER://:9093,"
                + "EXTRA://:9094", "listener.security.protocol.map", MAP), none)).isEmpty();
        // (the listener left must be the inter-broker one, else that check of the config comes first, as in Kafka)
        DynamicListeners twoAdvertised = new DynamicListeners(BrokerConfig.fromMap(Map.of("node.id", "1",
                "listeners", "PLAINTEXT://:9092,EXTRA://:9094,CONTROLLER://:9093", "controller.listener.names",
                "CONTROLLER", "listener.security.protocol.map", MAP, "inter.broker.listener.name", "EXTRA")), null);
        assertThat(twoAdvertised.validate("1", Map.of("listeners", "EXTRA://:9094,CONTROLLER://:9093"), none))
                .contains(wrapped("Advertised listeners 'Set(ListenerName(PLAINTEXT), ListenerName(EXTRA))' must be "
                + "a subset of listeners 'Set(ListenerName(EXTRA), ListenerName(CONTROLLER))'"));
        assertThat(listeners.validate("1", Map.of("listeners", "PLAINTEXT://:9092,CONTROLLER://:9093",
                "listener.security.protocol.map", "PLAINTEXT:SSL,CONTROLLER:PLAINTEXT"), none)).contains(
                wrapped("Security protocol cannot be updated for existing listener ListenerName(PLAINTEXT)"));
        assertThat(listeners.validate("1", Map.of("listeners", "PLAINTEXT://:9092"), none)).hasValueSatisfying(
                refusal -> assertThat(refusal).contains("controller listeners"));
        assertThat(listeners.validate("2", Map.of("listeners", "EXTRA://:9094"), none)).isEmpty();
    }

    @Test
    void aListenerAddedLiveTakesItsDynamicListenerKeysAsKafkasDoes() {
        // When: a SASL listener added with its mechanisms and JAAS users in the broker's dynamic configs
        listeners.apply(image(Map.of("listeners", "PLAINTEXT://:9092,CONTROLLER://:9093,EXTRA://127.0.0.1:9094",
                "listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,EXTRA:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
                "listener.name.extra.sasl.enabled.mechanisms", "PLAIN",
                "listener.name.extra.plain.sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule "
                        + "required user_carol=\"carol-secret\";")));

        // Then
        assertThat(changes).containsExactly("add EXTRA://127.0.0.1:9094", "EXTRA [PLAIN] users [user_carol]");
    }

    @Test
    void listenersNewlyNamedAreBoundAndThoseNoLongerNamedClosedAtStartAndOnChange() {
        // When: the broker's dynamic listeners add EXTRA
        listeners.apply(image(Map.of("listeners", "PLAINTEXT://:9092,CONTROLLER://:9093,EXTRA://127.0.0.1:9094",
                "listener.security.protocol.map", MAP)));

        // Then
        assertThat(changes).containsExactly("add EXTRA://127.0.0.1:9094");

        // When: deleted again, and a refused set left in metadata
        changes.clear();
        listeners.apply(image(Map.of()));
        listeners.apply(image(Map.of("listeners", "EXTRA://:9094,CONTROLLER://:9093",
                "listener.security.protocol.map", MAP)));

        // Then
        assertThat(changes).containsExactly("remove EXTRA");
    }
}
