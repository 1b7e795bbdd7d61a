package io.cairn.metadata.controller;

import io.cairn.metadata.image.ConfigResource;
import io.cairn.metadata.image.Features;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.record.ClearElrRecord;
import io.cairn.metadata.record.ConfigRecord;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AlterConfigsRequestData;
import io.cairn.wire.message.AlterConfigsResponseData;
import io.cairn.wire.message.IncrementalAlterConfigsRequestData;
import io.cairn.wire.message.IncrementalAlterConfigsResponseData;
import io.cairn.wire.protocol.ApiMessage;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * IncrementalAlterConfigs (SET, DELETE, APPEND, SUBTRACT) and the legacy AlterConfigs (every config of a resource
 * replaced) on the controller, as Kafka's {@code ConfigurationControlManager} with its
 * {@code ControllerConfigurationValidator}: topic configs validated (INVALID_CONFIG with Kafka's messages, default
 * topic resources refused, unknown topics UNKNOWN_TOPIC_OR_PARTITION), broker names checked (the forwarding broker
 * has validated the broker keys), group resources (the forwarding broker has validated the group keys) other than the
 * default one, other resource types INVALID_REQUEST. Only changed values become records, except
 * for brokers, where Kafka writes a record even for an unchanged value. With eligible leader replicas enabled, a
 * change of {@code min.insync.replicas} clears the ELRs of the topic (a broker or cluster-default change: of every
 * topic) in the same batch, as Kafka's {@code createClearElrRecordsAsNeeded}: they were computed against the old
 * minimum; then a broker's own {@code min.insync.replicas} is refused, and so is removing the cluster default's
 * (Kafka's {@code isDisallowedBrokerMinIsrTransition}, {@code isDisallowedClusterMinIsrTransition}). Stateless,
 * thread-safe.
 */
final class ConfigCommands {

    private static final byte SET = 0;
    private static final byte DELETE = 1;
    private static final byte APPEND = 2;
    private static final byte SUBTRACT = 3;
    private static final String MIN_INSYNC_REPLICAS = "min.insync.replicas";
    private static final Set<String> LIST_CONFIGS = Set.of("cleanup.policy", "leader.replication.throttled.replicas",
            "follower.replication.throttled.replicas");

    /** Why a resource's change was refused. */
    private record Failure(Errors error, String message) {
    }

    private ConfigCommands() {
    }

    static ControllerResult<IncrementalAlterConfigsResponseData> incrementalAlterConfigs(MetadataImage image,
            IncrementalAlterConfigsRequestData request) {
        IncrementalAlterConfigsResponseData response = new IncrementalAlterConfigsResponseData();
        List<ApiMessage> records = new ArrayList<>();
        for (IncrementalAlterConfigsRequestData.AlterConfigsResource resource : request.resources()) {
            List<ApiMessage> resourceRecords = new ArrayList<>();
            Optional<Failure> failure = checkResource(image, resource.resourceType(), resource.resourceName())
                    .or(() -> incremental(image, resource, resourceRecords));
            response.responses().add(new IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse()
                    .setResourceType(resource.resourceType()).setResourceName(resource.resourceName())
                    .setErrorCode(failure.map(f -> f.error().code()).orElse(Errors.NONE.code()))
                    .setErrorMessage(failure.map(Failure::message).orElse(null)));
            if (failure.isEmpty() && !request.validateOnly()) {
                records.addAll(resourceRecords);
            }
        }
        if (Features.elrEnabled(image)) {
            records.addAll(clearElrRecords(records));
        }
        return new ControllerResult<>(records, response);
    }

    static ControllerResult<AlterConfigsResponseData> alterConfigs(MetadataImage image,
                                                                   AlterConfigsRequestData request) {
        AlterConfigsResponseData response = new AlterConfigsResponseData();
        List<ApiMessage> records = new ArrayList<>();
        for (AlterConfigsRequestData.AlterConfigsResource resource : request.resources()) {
            List<ApiMessage> resourceRecords = new ArrayList<>();
            Optional<Failure> failure = checkResource(image, resource.resourceType(), resource.resourceName())
                    .or(() -> replace(image, resource, resourceRecords));
            response.responses().add(new AlterConfigsResponseData.AlterConfigsResourceResponse()
                    .setResourceType(resource.resourceType()).setResourceName(resource.resourceName())
                    .setErrorCode(failure.map(f -> f.error().code()).orElse(Errors.NONE.code()))
                    .setErrorMessage(failure.map(Failure::message).orElse(null)));
            if (failure.isEmpty() && !request.validateOnly()) {
                records.addAll(resourceRecords);
            }
        }
        if (Features.elrEnabled(image)) {
            records.addAll(clearElrRecords(records));
        }
        return new ControllerResult<>(records, response);
    }

    private static List<ApiMessage> clearElrRecords(List<ApiMessage> records) {
        List<ApiMessage> clears = new ArrayList<>();
        for (ApiMessage record : records) {
            if (record instanceof ConfigRecord config && config.name().equals(MIN_INSYNC_REPLICAS)) {
                clears.add(new ClearElrRecord().setTopicName(config.resourceType() == ConfigResource.TOPIC
                        ? config.resourceName() : ""));
            }
        }
        return clears;
    }

    /** Kafka's resource checks: the type, a topic's name and existence, a broker's id. */
    private static Optional<Failure> checkResource(MetadataImage image, byte type, String name) {
        if (type == ConfigResource.TOPIC) {
            if (name.isEmpty()) {
                return Optional.of(new Failure(Errors.INVALID_REQUEST, "Default topic resources are not allowed."));
            }
            Optional<String> illegal = TopicNames.validate(name);
            if (illegal.isPresent()) {
                return Optional.of(new Failure(Errors.INVALID_TOPIC_EXCEPTION, illegal.get()));
            }
            if (image.topic(name).isEmpty()) {
                return Optional.of(new Failure(Errors.UNKNOWN_TOPIC_OR_PARTITION,
                        "The topic '" + name + "' does not exist."));
            }
            return Optional.empty();
        }
        if (type == ConfigResource.BROKER) {
            if (name.isEmpty()) {
                return Optional.empty();
            }
            int id;
            try {
                id = Integer.parseInt(name);
            } catch (NumberFormatException e) {
                return Optional.of(new Failure(Errors.INVALID_REQUEST,
                        "Unable to parse broker name as a base 10 number."));
            }
            return id < 0 ? Optional.of(new Failure(Errors.INVALID_REQUEST, "Invalid negative broker ID."))
                    : Optional.empty();
        }
        if (type == ConfigResource.GROUP) {
            // Kafka's validateGroupName; the forwarding broker has checked the group keys (GroupConfig.validate)
            return name.isEmpty() ? Optional.of(new Failure(Errors.INVALID_REQUEST,
                    "Default group resources are not allowed.")) : Optional.empty();
        }
        return Optional.of(new Failure(Errors.INVALID_REQUEST, "Unknown resource type " + type));
    }

    private static Optional<Failure> incremental(MetadataImage image,
                                                 IncrementalAlterConfigsRequestData.AlterConfigsResource resource,
                                                 List<ApiMessage> records) {
        Set<String> keys = new HashSet<>();
        for (IncrementalAlterConfigsRequestData.AlterableConfig config : resource.configs()) {
            if (!keys.add(config.name())) {
                return Optional.of(new Failure(Errors.INVALID_REQUEST, "Error due to duplicate config keys"));
            }
        }
        ConfigResource owner = new ConfigResource(resource.resourceType(), resource.resourceName());
        Map<String, String> current = image.configs(owner);
        Map<String, String> changes = new LinkedHashMap<>();
        for (IncrementalAlterConfigsRequestData.AlterableConfig config : resource.configs()) {
            String key = config.name();
            byte op = config.configOperation();
            if (op == SET) {
                changes.put(key, config.value());
            } else if (op == DELETE) {
                changes.put(key, null);
            } else if (op == APPEND || op == SUBTRACT) {
                if (!LIST_CONFIGS.contains(key)) {
                    return Optional.of(new Failure(Errors.INVALID_CONFIG, "Can't " + (op == APPEND ? "APPEND"
                            : "SUBTRACT") + " to key " + key + " because its type is not LIST."));
                }
                String base = current.get(key);
                if (base == null && owner.type() == ConfigResource.TOPIC && key.equals("cleanup.policy")) {
                    base = "delete"; // Kafka's getParts starts from the config's default
                }
                changes.put(key, listOp(base, config.value(), op == APPEND));
            } else {
                return Optional.of(new Failure(Errors.INVALID_REQUEST, "Unknown operations type " + op));
            }
        }
        return write(owner, current, changes, records, Features.elrEnabled(image));
    }

    private static Optional<Failure> replace(MetadataImage image,
                                             AlterConfigsRequestData.AlterConfigsResource resource,
                                             List<ApiMessage> records) {
        ConfigResource owner = new ConfigResource(resource.resourceType(), resource.resourceName());
        Map<String, String> current = image.configs(owner);
        Map<String, String> changes = new LinkedHashMap<>();
        for (AlterConfigsRequestData.AlterableConfig config : resource.configs()) {
            if (changes.put(config.name(), config.value()) != null) {
                return Optional.of(new Failure(Errors.INVALID_REQUEST, "Error due to duplicate config keys"));
            }
        }
        for (String key : current.keySet()) {
            changes.putIfAbsent(key, null);
        }
        return write(owner, current, changes, records, Features.elrEnabled(image));
    }

    /** Validates the resulting topic configs and the min.insync.replicas rules, then adds a record per change. */
    private static Optional<Failure> write(ConfigResource owner, Map<String, String> current,
                                           Map<String, String> changes, List<ApiMessage> records, boolean elr) {
        if (elr && owner.type() == ConfigResource.BROKER && changes.containsKey(MIN_INSYNC_REPLICAS)) {
            Optional<Failure> minIsr = elrMinIsrRule(owner, changes.get(MIN_INSYNC_REPLICAS));
            if (minIsr.isPresent()) {
                return minIsr;
            }
        }
        if (owner.type() == ConfigResource.TOPIC) {
            for (Map.Entry<String, String> change : changes.entrySet()) {
                if (change.getValue() != null) {
                    Optional<String> invalid = TopicConfigs.validate(change.getKey(), change.getValue());
                    if (invalid.isPresent()) {
                        return Optional.of(new Failure(Errors.INVALID_CONFIG, invalid.get()));
                    }
                }
            }
        }
        changes.forEach((key, value) -> {
            if (owner.type() == ConfigResource.BROKER || !Objects.equals(current.get(key), value)) {
                records.add(new ConfigRecord().setResourceType(owner.type()).setResourceName(owner.name())
                        .setName(key).setValue(value));
            }
        });
        return Optional.empty();
    }

    /**
     * Kafka's {@code maybeGenerateElrSafetyRecords}: the config records that make enabling eligible leader replicas
     * safe, written ahead of the feature record that enables them. A cluster-level {@code min.insync.replicas} with
     * {@code staticMinInsyncReplicas} (the active controller's own setting) when there is none, and the removal of
     * every broker-level one. Nothing when both already hold.
     */
    static List<ApiMessage> elrSafetyRecords(MetadataImage image, int staticMinInsyncReplicas) {
        List<ApiMessage> records = new ArrayList<>();
        ConfigResource cluster = ConfigResource.broker("");
        if (!image.configs(cluster).containsKey(MIN_INSYNC_REPLICAS)) {
            records.add(new ConfigRecord().setResourceType(ConfigResource.BROKER).setResourceName("")
                    .setName(MIN_INSYNC_REPLICAS).setValue(Integer.toString(staticMinInsyncReplicas)));
        }
        image.configs().forEach((resource, values) -> {
            if (resource.type() == ConfigResource.BROKER && !resource.name().isEmpty()
                    && values.containsKey(MIN_INSYNC_REPLICAS)) {
                records.add(new ConfigRecord().setResourceType(ConfigResource.BROKER)
                        .setResourceName(resource.name()).setName(MIN_INSYNC_REPLICAS).setValue(null));
            }
        });
        return records;
    }

    /**
     * Kafka's rules for a broker resource's {@code min.insync.replicas} while eligible leader replicas are enabled:
     * the ELRs follow one cluster-wide minimum, so a broker's own value is refused, and so is removing the cluster
     * default's.
     */
    private static Optional<Failure> elrMinIsrRule(ConfigResource owner, String value) {
        if (!owner.name().isEmpty()) {
            return Optional.of(new Failure(Errors.INVALID_CONFIG, "Broker-level " + MIN_INSYNC_REPLICAS
                    + " cannot be altered while ELR is enabled."));
        }
        if (value == null) {
            return Optional.of(new Failure(Errors.INVALID_CONFIG, "Cluster-level " + MIN_INSYNC_REPLICAS
                    + " cannot be removed while ELR is enabled."));
        }
        return Optional.empty();
    }

    /** Kafka's APPEND and SUBTRACT of a list config's comma-separated items. */
    private static String listOp(String current, String value, boolean append) {
        List<String> items = new ArrayList<>();
        if (current != null && !current.isEmpty()) {
            items.addAll(List.of(current.split(",")));
        }
        for (String item : value == null ? new String[0] : value.split(",")) {
            if (append && !items.contains(item)) {
                items.add(item);
            } else if (!append) {
                items.remove(item);
            }
        }
        return String.join(",", items);
    }
}
