package io.cairn.broker.quota;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.metadata.image.ClientQuotaEntity;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Kafka's quota resolution, sampled rate and throttle time, on explicit clock values. */
class ClientQuotaManagerTest {

    private static final String KEY = "producer_byte_rate";

    private static Map<String, Double> rate(double value) {
        return Map.of(KEY, value);
    }

    private static ClientQuotaEntity entity(String... typeAndName) {
        Map<String, String> entries = new HashMap<>();
        for (int i = 0; i < typeAndName.length; i += 2) {
            entries.put(typeAndName[i], typeAndName[i + 1]);
        }
        return new ClientQuotaEntity(entries);
    }

    private static ClientQuotaManager manager(Map<ClientQuotaEntity, Map<String, Double>> quotas) {
        ClientQuotaManager manager = new ClientQuotaManager(KEY, 11, 1000, Long.MAX_VALUE);
        manager.update(quotas);
        return manager;
    }

    @Test
    void theMostSpecificEntityNamesTheSensorAndItsBound() {
        // Given
        Map<ClientQuotaEntity, Double> bounds = Map.of(
                entity("user", "alice", "client-id", "app"), 1.0,
                entity("user", "alice"), 2.0,
                entity("user", null), 3.0,
                entity("client-id", "app"), 4.0,
                entity("client-id", null), 5.0);

        // When
        ClientQuotaManager.Tags aliceApp = ClientQuotaManager.tags(bounds, "alice", "app");
        ClientQuotaManager.Tags aliceOther = ClientQuotaManager.tags(bounds, "alice", "other");
        ClientQuotaManager.Tags bobApp = ClientQuotaManager.tags(bounds, "bob", "app");

        // Then
        assertThat(aliceApp).isEqualTo(new ClientQuotaManager.Tags("alice", "app"));
        assertThat(ClientQuotaManager.bound(bounds, aliceApp)).isEqualTo(1.0);
        assertThat(aliceOther).isEqualTo(new ClientQuotaManager.Tags("alice", ""));
        assertThat(ClientQuotaManager.bound(bounds, aliceOther)).isEqualTo(2.0);
        assertThat(bobApp).isEqualTo(new ClientQuotaManager.Tags("bob", ""));
        assertThat(ClientQuotaManager.bound(bounds, bobApp)).isEqualTo(3.0);
    }

    @Test
    void clientIdQuotasApplyWhenNoUserQuotaMatchesAndDefaultsFillIn() {
        // Given
        Map<ClientQuotaEntity, Double> bounds = Map.of(entity("client-id", "app"), 4.0, entity("client-id", null),
                5.0);

        // When
        ClientQuotaManager.Tags app = ClientQuotaManager.tags(bounds, "alice", "app");
        ClientQuotaManager.Tags other = ClientQuotaManager.tags(bounds, "alice", "other");

        // Then
        assertThat(app).isEqualTo(new ClientQuotaManager.Tags("", "app"));
        assertThat(ClientQuotaManager.bound(bounds, app)).isEqualTo(4.0);
        assertThat(ClientQuotaManager.bound(bounds, other)).isEqualTo(5.0);
    }

    @Test
    void aFirstBurstIsSpreadOverTheWholeWindowAndTheThrottleTimeIsKafkas() {
        // Given: 1000 bytes/s for client app
        ClientQuotaManager manager = manager(Map.of(entity("client-id", "app"), rate(1000)));

        // When: 10,000 bytes at once are exactly the bound over the 10 s minimum window; 11,000 exceed it
        int within = manager.recordAndGetThrottleTimeMs("alice", "app", 10_000, 0);
        int over = manager.recordAndGetThrottleTimeMs("alice", "app", 1_000, 0);

        // Then: rate 1100/s against 1000/s over a 10 s window is 1 s of throttle
        assertThat(within).isZero();
        assertThat(over).isEqualTo(1000);
    }

    @Test
    void aClientWithoutAQuotaIsNeverThrottledAndKeepsNoSensor() {
        // Given
        ClientQuotaManager manager = manager(Map.of(entity("client-id", "app"), rate(1)));

        // When
        int throttle = manager.recordAndGetThrottleTimeMs("alice", "other", 1_000_000, 0);

        // Then
        assertThat(throttle).isZero();
        assertThat(manager.sensorCount()).isZero();
    }

    @Test
    void sensorsIdleForAnHourAreDroppedAndTheirCountIsBounded() {
        // Given
        ClientQuotaManager manager = manager(Map.of(entity("client-id", null), rate(1000)));
        for (int i = 0; i < ClientQuotaManager.MAX_SENSORS + 10; i++) {
            manager.recordAndGetThrottleTimeMs("u", "client-" + i, 1, 0);
        }
        assertThat(manager.sensorCount()).isEqualTo(ClientQuotaManager.MAX_SENSORS);

        // When
        manager.recordAndGetThrottleTimeMs("u", "late", 1, ClientQuotaManager.INACTIVE_SENSOR_EXPIRATION_MS);

        // Then
        assertThat(manager.sensorCount()).isEqualTo(1);
    }

    @Test
    void anUnrecordedValueNoLongerCounts() {
        // Given
        ClientQuotaManager manager = manager(Map.of(entity("client-id", "app"), rate(1000)));
        manager.recordAndGetThrottleTimeMs("alice", "app", 20_000, 0);

        // When
        manager.unrecord("alice", "app", 20_000, 0);

        // Then
        assertThat(manager.recordAndGetThrottleTimeMs("alice", "app", 5_000, 0)).isZero();
    }
}
