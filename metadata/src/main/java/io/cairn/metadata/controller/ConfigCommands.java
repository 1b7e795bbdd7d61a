package io.cairn.metadata.controller;

import io.cairn.metadata.image.ConfigResource;
import io.cairn.metadata.image.Features;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.record.ClearElrRecord;
import io.cairn.metadata.record.ConfigRecord;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.IncrementalAlterConfigsRequestData;
import io.cairn.wire.message.IncrementalAlterConfigsResponseData;
import io.cairn.wire.protocol.ApiMessage;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * IncrementalAlterConfigs on the controller: SET, DELETE, APPEND and SUBTRACT of topic configs (validated as
 * Kafka does, INVALID_CONFIG with Kafka's messages) and of broker or cluster-default configs (stored as given; the
 * broker validates its own keys). With eligible leader replicas enabled, a change of {@code min.insync.replicas}
 * clears the ELRs of the topic (a broker or cluster-default change: of every topic) in the same batch, as Kafka's
 * {@code createClearElrRecordsAsNeeded}: they were computed against the old minimum. Stateless, thread-safe.
 */
final class ConfigCommands {

    private static final String MIN_INSYNC_REPLICAS = "min.insync.replicas";
    private static final byte SET = 0;
    private static final byte DELETE = 1;
    private static final byte APPEND = 2;
    private static final byte SUBTRACT = 3;
    private static final Set<String> LIST_CONFIGS = Set.of("cleanup.policy", "leader.replication.throttled.replicas",
            "follower.replication.throttled.replicas");

    private ConfigCommands() {
    }

    static ControllerResult<IncrementalAlterConfigsResponseData> incrementalAlterConfigs(MetadataImage image,
            IncrementalAlterConfigsRequestData request) {
        IncrementalAlterConfigsResponseData response = new IncrementalAlterConfigsResponseData();
        List<ApiMessage> records = new ArrayList<>();
        for (IncrementalAlterConfigsRequestData.AlterConfigsResource resource : request.resources()) {
            IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse result =
                    new IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse()
                            .setResourceType(resource.resourceType()).setResourceName(resource.resourceName());
            response.responses().add(result);
            List<ApiMessage> resourceRecords = new ArrayList<>();
            Optional<String> error = alter(image, resource, resourceRecords, result);
            if (error.isPresent()) {
                result.setErrorMessage(error.get());
            } else if (!request.validateOnly()) {
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

    private static Optional<String> alter(MetadataImage image,
                                          IncrementalAlterConfigsRequestData.AlterConfigsResource resource,
                                          List<ApiMessage> records,
                                          IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse result) {
        byte type = resource.resourceType();
        String name = resource.resourceName();
        if (type != ConfigResource.TOPIC && type != ConfigResource.BROKER) {
            result.setErrorCode(Errors.INVALID_REQUEST.code());
            return Optional.of("Unsupported resource type " + type);
        }
        if (type == ConfigResource.TOPIC && image.topic(name).isEmpty()) {
            result.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
            return Optional.of("The topic '" + name + "' does not exist.");
        }
        Set<String> keys = new HashSet<>();
        for (IncrementalAlterConfigsRequestData.AlterableConfig config : resource.configs()) {
            if (!keys.add(config.name())) {
                result.setErrorCode(Errors.INVALID_REQUEST.code());
                return Optional.of("Error due to duplicate config keys");
            }
        }
        ConfigResource owner = new ConfigResource(type, name);
        Map<String, String> current = image.configs(owner);
        Map<String, String> changes = new LinkedHashMap<>();
        for (IncrementalAlterConfigsRequestData.AlterableConfig config : resource.configs()) {
            String key = config.name();
            byte op = config.configOperation();
            String next;
            if (op == SET) {
                next = config.value();
            } else if (op == DELETE) {
                next = null;
            } else if (op == APPEND || op == SUBTRACT) {
                if (type == ConfigResource.TOPIC && !LIST_CONFIGS.contains(key)) {
                    result.setErrorCode(Errors.INVALID_CONFIG.code());
                    return Optional.of("Config value " + (op == APPEND ? "append" : "subtract")
                            + " is not allowed for config key: " + key);
                }
                next = listOp(current.get(key), config.value(), op == APPEND);
            } else {
                result.setErrorCode(Errors.INVALID_REQUEST.code());
                return Optional.of("Unknown config operation " + op);
            }
            if (type == ConfigResource.TOPIC) {
                Optional<String> invalid = next == null ? TopicConfigs.validate(key, "")
                        .filter(message -> message.startsWith("Unknown")) : TopicConfigs.validate(key, next);
                if (invalid.isPresent()) {
                    result.setErrorCode(Errors.INVALID_CONFIG.code());
                    return invalid;
                }
            }
            changes.put(key, next);
        }
        changes.forEach((key, value) -> records.add(new ConfigRecord().setResourceType(type).setResourceName(name)
                .setName(key).setValue(value)));
        return Optional.empty();
    }

    private static String listOp(String current, String value, boolean append) {
        List<String> items = new ArrayList<>();
        if (current != null && !current.isBlank()) {
            for (String item : current.split(",")) {
                items.add(item.trim());
            }
        }
        for (String item : value == null ? new String[0] : value.split(",")) {
            String trimmed = item.trim();
            if (append && !items.contains(trimmed)) {
                items.add(trimmed);
            } else if (!append) {
                items.remove(trimmed);
            }
        }
        return String.join(",", items);
    }
}
