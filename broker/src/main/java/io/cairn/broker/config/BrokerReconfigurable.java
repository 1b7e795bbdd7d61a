package io.cairn.broker.config;

import io.cairn.metadata.image.ConfigResource;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.MetadataUpdate;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A part of the broker that applies dynamic broker configs live and checks a change before the broker forwards it,
 * as Kafka's {@code BrokerReconfigurable.validateReconfiguration}.
 */
public interface BrokerReconfigurable {

    /**
     * Checks the dynamic configs {@code props} the change leaves on the broker resource {@code resourceName}
     * ({@code ""} for the cluster default), given the configs committed in {@code image}.
     *
     * @return the refusal's text as Kafka's clients read it (INVALID_REQUEST), or empty
     */
    Optional<String> validate(String resourceName, Map<String, String> props, MetadataImage image);

    /** Whether {@code update} changes the dynamic configs of broker {@code brokerId} or the cluster default's. */
    static boolean changesConfigsOf(MetadataUpdate update, String brokerId) {
        return update.changes().changedConfigs().stream().anyMatch(resource ->
                resource.type() == ConfigResource.BROKER
                        && (resource.name().isEmpty() || resource.name().equals(brokerId)));
    }

    /** All of {@code parts}: the first refusal. */
    static BrokerReconfigurable all(List<? extends BrokerReconfigurable> parts) {
        List<BrokerReconfigurable> copy = List.copyOf(parts);
        return (resourceName, props, image) -> {
            for (BrokerReconfigurable part : copy) {
                Optional<String> refused = part.validate(resourceName, props, image);
                if (refused.isPresent()) {
                    return refused;
                }
            }
            return Optional.empty();
        };
    }
}
