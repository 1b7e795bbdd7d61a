package io.cairn.broker.handler;

import io.cairn.broker.config.BrokerReconfigurable;
import io.cairn.broker.config.DynamicBrokerConfigs;
import io.cairn.broker.group.share.ShareGroupConfigs;
import io.cairn.metadata.image.ConfigResource;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.wire.error.Errors;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The broker's step of AlterConfigs and IncrementalAlterConfigs before they are forwarded to the controller, as
 * Kafka's {@code ConfigAdminManager.preprocess}: a resource named twice, a key named twice in a resource, a null
 * value (other than for DELETE) and an unknown resource type are INVALID_REQUEST; a broker resource must name this
 * broker or be the cluster default ({@code ""}), and its resulting dynamic configs must pass
 * {@link DynamicBrokerConfigs#validate} and the checks of what the broker applies live
 * ({@link BrokerReconfigurable#validate}: thread counts, connection limits).
 * BROKER_LOGGER (IncrementalAlterConfigs only) is answered here ({@link BrokerLoggers}). Topic resources are left to
 * the controller. Stateless, thread-safe.
 */
final class ConfigAlterations {

    static final byte SET = 0;
    static final byte DELETE = 1;
    static final byte APPEND = 2;
    static final byte SUBTRACT = 3;
    /** Kafka's ConfigResource.Type.BROKER_LOGGER id. */
    static final byte BROKER_LOGGER = 8;

    /** One requested change; {@code op} is SET for the legacy API. */
    record Op(String name, byte op, String value) {
    }

    /** One resource of a request. */
    record Resource(byte type, String name, List<Op> ops) {
    }

    /** The broker's verdict on a resource; a resource without one is forwarded. */
    record Outcome(Errors error, String message) {
    }

    private final int nodeId;
    private final Supplier<MetadataImage> image;
    private final BrokerReconfigurable reconfigurables;
    private final ShareGroupConfigs groupConfigs;

    /**
     * @param reconfigurables what the broker applies live (thread pools, connection limits), whose checks a broker
     *     change must pass; null for none
     * @param groupConfigs    the group-level configs' defaults and checks
     */
    ConfigAlterations(int nodeId, Supplier<MetadataImage> image, BrokerReconfigurable reconfigurables,
                      ShareGroupConfigs groupConfigs) {
        this.nodeId = nodeId;
        this.image = image;
        this.reconfigurables = reconfigurables;
        this.groupConfigs = groupConfigs;
    }

    /**
     * The verdicts, index by index; null where the resource goes to the controller.
     *
     * @param legacy       AlterConfigs: every config of the resource is replaced by the given ones
     * @param validateOnly BROKER_LOGGER changes are only validated
     */
    Outcome[] preprocess(List<Resource> resources, boolean legacy, boolean validateOnly) {
        Outcome[] outcomes = new Outcome[resources.size()];
        Map<ConfigResource, Integer> seen = new HashMap<>();
        for (int i = 0; i < resources.size(); i++) {
            Resource r = resources.get(i);
            Integer earlier = seen.put(new ConfigResource(r.type(), Objects.requireNonNullElse(r.name(), "")), i);
            if (earlier != null) {
                Outcome twice = new Outcome(Errors.INVALID_REQUEST, "Each resource must appear at most once.");
                outcomes[earlier] = twice;
                outcomes[i] = twice;
            }
        }
        for (int i = 0; i < resources.size(); i++) {
            if (outcomes[i] == null) {
                outcomes[i] = check(resources.get(i), legacy, validateOnly);
            }
        }
        return outcomes;
    }

    private Outcome check(Resource resource, boolean legacy, boolean validateOnly) {
        Set<String> keys = new HashSet<>();
        List<String> nulls = new ArrayList<>();
        for (Op op : resource.ops()) {
            if (!keys.add(op.name())) {
                return new Outcome(Errors.INVALID_REQUEST, "Error due to duplicate config keys");
            }
            if (op.value() == null && op.op() != DELETE) {
                nulls.add(op.name());
            }
        }
        if (!nulls.isEmpty()) {
            return new Outcome(Errors.INVALID_REQUEST, "Null value not supported for : " + String.join(", ", nulls));
        }
        if (resource.type() == ConfigResource.TOPIC) {
            return null;
        }
        if (resource.type() == BROKER_LOGGER && !legacy) {
            return changeLoggers(resource, validateOnly);
        }
        if (resource.type() == ShareGroupConfigs.GROUP) {
            return checkGroup(resource, legacy);
        }
        if (resource.type() != ConfigResource.BROKER) {
            return new Outcome(Errors.INVALID_REQUEST, "Unknown resource type " + resource.type());
        }
        String name = resource.name();
        if (!name.isEmpty()) {
            try {
                int id = Integer.parseInt(name);
                if (id != nodeId) {
                    return new Outcome(Errors.INVALID_REQUEST, "Unexpected broker id, expected " + nodeId
                            + ", but received " + name);
                }
            } catch (NumberFormatException e) {
                return new Outcome(Errors.INVALID_REQUEST, "Node id must be an integer, but it is: " + name);
            }
        }
        return checkBroker(resource, legacy);
    }

    /** KIP-412 log levels, handled on this broker alone (Kafka's {@code RuntimeLoggerManager}). */
    private Outcome changeLoggers(Resource resource, boolean validateOnly) {
        try {
            if (Integer.parseInt(resource.name()) != nodeId) {
                // Kafka's message names its own id twice
                return new Outcome(Errors.INVALID_REQUEST, "Unexpected node id. Expected " + nodeId
                        + ", but received " + nodeId);
            }
        } catch (NumberFormatException e) {
            return new Outcome(Errors.INVALID_REQUEST, "Node id must be an integer, but it is: " + resource.name());
        }
        Optional<Outcome> refused = BrokerLoggers.validate(resource.ops());
        if (refused.isPresent()) {
            return refused.get();
        }
        if (!validateOnly) {
            BrokerLoggers.apply(resource.ops());
        }
        return new Outcome(Errors.NONE, null);
    }

    /**
     * Kafka's {@code GroupConfig.validate} (its controller's check) of the configs the change leaves the group: the
     * default group resource ({@code ""}) is INVALID_REQUEST, a broken rule INVALID_CONFIG; APPEND and SUBTRACT are
     * left to the controller, which refuses them (no group config is a list).
     */
    private Outcome checkGroup(Resource resource, boolean legacy) {
        if (resource.name() == null || resource.name().isEmpty()) {
            return new Outcome(Errors.INVALID_REQUEST, "Default group resources are not allowed.");
        }
        Map<String, String> props = legacy ? new HashMap<>()
                : new HashMap<>(image.get().configs(new ConfigResource(ShareGroupConfigs.GROUP, resource.name())));
        for (Op op : resource.ops()) {
            switch (op.op()) {
                case SET -> props.put(op.name(), op.value());
                case DELETE -> props.remove(op.name());
                case APPEND, SUBTRACT -> {
                    return null;
                }
                default -> {
                    return new Outcome(Errors.INVALID_REQUEST, "Unknown operations type " + op.op());
                }
            }
        }
        return groupConfigs.validate(props).map(message -> new Outcome(Errors.INVALID_CONFIG, message)).orElse(null);
    }

    /** Kafka's {@code validateBrokerConfigChange}: the dynamic configs the change leaves. */
    private Outcome checkBroker(Resource resource, boolean legacy) {
        Map<String, String> props = legacy ? new HashMap<>()
                : new HashMap<>(image.get().configs(ConfigResource.broker(resource.name())));
        for (Op op : resource.ops()) {
            switch (op.op()) {
                case SET -> props.put(op.name(), op.value());
                case DELETE -> props.remove(op.name());
                case APPEND, SUBTRACT -> {
                    // None of the broker keys Cairn can change is a list.
                    return new Outcome(Errors.INVALID_CONFIG, "Config value " + (op.op() == APPEND ? "append"
                            : "subtract") + " is not allowed for config key: " + op.name());
                }
                default -> {
                    return new Outcome(Errors.INVALID_REQUEST, "Unknown operations type " + op.op());
                }
            }
        }
        Optional<Outcome> refused = DynamicBrokerConfigs.validate(props, !resource.name().isEmpty())
                .map(refusal -> new Outcome(refusal.invalidRequest() ? Errors.INVALID_REQUEST : Errors.INVALID_CONFIG,
                        refusal.message()));
        if (refused.isEmpty() && reconfigurables != null) {
            // Kafka's validateReconfiguration of each part, through validateBrokerConfigChange: INVALID_REQUEST
            refused = reconfigurables.validate(resource.name(), props, image.get())
                    .map(message -> new Outcome(Errors.INVALID_REQUEST, message));
        }
        return refused.orElse(null);
    }
}
