package io.cairn.compat.admin;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.compat.group.GroupClients;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListConfigResourcesOptions;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * ListConfigResources (KIP-1142) through {@code Admin.listConfigResources}, the same on Cairn and the reference
 * Kafka: every topic, the broker and its loggers by id, only the types asked for, and UNSUPPORTED_VERSION for a
 * type the API does not list.
 */
@Timeout(120)
@ExtendWith(BrokerLogsExtension.class)
class ListConfigResourcesIT {

    static List<BrokerKind> kinds() {
        return GroupClients.kinds().toList();
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void theAdminClientListsTopicsBrokersAndBrokerLoggers(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = GroupClients.createTopic(broker, "config-resources", 1);
        try (Admin admin = GroupClients.admin(broker)) {
            // When
            Collection<ConfigResource> all = admin.listConfigResources().all().get(30, TimeUnit.SECONDS);
            Collection<ConfigResource> brokers = admin.listConfigResources(Set.of(ConfigResource.Type.BROKER),
                    new ListConfigResourcesOptions()).all().get(30, TimeUnit.SECONDS);
            Throwable unsupported = failure(admin, ConfigResource.Type.UNKNOWN);

            // Then
            assertThat(all).contains(new ConfigResource(ConfigResource.Type.TOPIC, topic),
                    new ConfigResource(ConfigResource.Type.BROKER, "1"),
                    new ConfigResource(ConfigResource.Type.BROKER_LOGGER, "1"));
            assertThat(brokers).containsExactly(new ConfigResource(ConfigResource.Type.BROKER, "1"));
            assertThat(unsupported).isInstanceOf(UnsupportedVersionException.class);
        }
    }

    private static Throwable failure(Admin admin, ConfigResource.Type type) throws Exception {
        try {
            admin.listConfigResources(Set.of(type), new ListConfigResourcesOptions()).all().get(30, TimeUnit.SECONDS);
            throw new AssertionError("listConfigResources(" + type + ") succeeded");
        } catch (ExecutionException e) {
            return e.getCause();
        }
    }
}
