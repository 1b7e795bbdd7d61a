package io.cairn.broker.handler;

import static java.util.concurrent.CompletableFuture.completedFuture;

import io.cairn.broker.group.share.ShareGroupConfigs;
import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.controller.TopicNames;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.ConfigResource;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.DescribeConfigsRequestData;
import io.cairn.wire.message.DescribeConfigsRequestData.DescribeConfigsResource;
import io.cairn.wire.message.DescribeConfigsResponseData;
import io.cairn.wire.message.DescribeConfigsResponseData.DescribeConfigsResourceResult;
import io.cairn.wire.message.DescribeConfigsResponseData.DescribeConfigsResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * DescribeConfigs v1-v4 for topics and brokers, as Kafka's {@code ConfigHelper} answers it ({@link ConfigEntries}
 * builds the entries from the config table): a topic lists every topic config, a broker every broker key Kafka
 * describes (plus the keys set for it), the cluster default broker resource (empty name) its dynamic defaults; each
 * with its source, synonyms ({@code includeSynonyms}), read-only and sensitive flags, and from v3 Kafka's type and,
 * with {@code includeDocumentation}, its documentation. {@code configurationKeys} filters. BROKER_LOGGER lists this
 * broker's log4j2 loggers with their levels (DYNAMIC_BROKER_LOGGER_CONFIG). Other resource types get
 * INVALID_REQUEST. Immutable, thread-safe, never blocks.
 */
public final class DescribeConfigsHandler
        implements ApiHandler<DescribeConfigsRequestData, DescribeConfigsResponseData> {

    static final byte DYNAMIC_BROKER_LOGGER_CONFIG = 6;
    static final byte GROUP_CONFIG = 8;
    private static final byte TYPE_STRING = 2;
    private static final byte TYPE_INT = 3;

    private final MetadataNode metadata;
    private final int nodeId;
    private final ConfigEntries configs;
    private final ShareGroupConfigs groupConfigs;

    /**
     * @param staticConfigs the broker's server.properties (and overrides)
     * @param cairnDefaults Cairn's defaults where they differ from Kafka's ({@code ConfigTable.cairnDefaults})
     */
    public DescribeConfigsHandler(MetadataNode metadata, int nodeId, Map<String, String> staticConfigs,
                                  Map<String, String> cairnDefaults) {
        this(metadata, nodeId, staticConfigs, cairnDefaults, ShareGroupConfigs.defaults());
    }

    /** @param groupConfigs the group-level configs and their defaults (the broker's keys) */
    public DescribeConfigsHandler(MetadataNode metadata, int nodeId, Map<String, String> staticConfigs,
                                  Map<String, String> cairnDefaults, ShareGroupConfigs groupConfigs) {
        this.metadata = metadata;
        this.nodeId = nodeId;
        this.configs = new ConfigEntries(staticConfigs, cairnDefaults);
        this.groupConfigs = groupConfigs;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.DESCRIBE_CONFIGS;
    }

    @Override
    public short minVersion() {
        return ApiKey.DESCRIBE_CONFIGS.lowestSupportedVersion();
    }

    @Override
    public short maxVersion() {
        return 4;
    }

    @Override
    public CompletionStage<DescribeConfigsResponseData> handle(RequestContext ctx,
                                                               DescribeConfigsRequestData request) {
        MetadataImage image = metadata.currentImage();
        DescribeConfigsResponseData response = new DescribeConfigsResponseData().setThrottleTimeMs(0);
        List<DescribeConfigsResult> refused = new ArrayList<>();
        for (DescribeConfigsResource resource : request.resources()) {
            Errors denied = ConfigAuthorization.denied(ctx, AclOperation.DESCRIBE_CONFIGS, resource.resourceType(),
                    resource.resourceName());
            if (denied != null) {
                refused.add(new DescribeConfigsResult().setResourceType(resource.resourceType())
                        .setResourceName(resource.resourceName()).setErrorCode(denied.code())
                        .setErrorMessage(denied.message()));
                continue;
            }
            DescribeConfigsResult result = new DescribeConfigsResult().setResourceType(resource.resourceType())
                    .setResourceName(resource.resourceName()).setErrorCode(Errors.NONE.code());
            response.results().add(result);
            List<DescribeConfigsResourceResult> entries = new ArrayList<>();
            String problem = describe(image, resource, request, entries, result);
            if (problem != null) {
                result.setErrorMessage(problem);
                continue;
            }
            for (DescribeConfigsResourceResult entry : entries) {
                if (resource.configurationKeys() == null || resource.configurationKeys().contains(entry.name())) {
                    if (ctx.apiVersion() < 3) {
                        entry.setConfigType((byte) 0).setDocumentation(null);
                    }
                    result.configs().add(entry);
                }
            }
        }
        // Kafka's ConfigHelper: the resources the caller may not describe come after the others.
        response.results().addAll(refused);
        return completedFuture(response);
    }

    /** Fills {@code entries}; returns the error message (with the code set on {@code result}) or null. */
    private String describe(MetadataImage image, DescribeConfigsResource resource, DescribeConfigsRequestData request,
                            List<DescribeConfigsResourceResult> entries, DescribeConfigsResult result) {
        String name = resource.resourceName();
        boolean synonyms = request.includeSynonyms();
        boolean docs = request.includeDocumentation();
        Map<String, String> clusterDefaults = image.configs(ConfigResource.broker(""));
        Map<String, String> dynamic = image.configs(ConfigResource.broker(Integer.toString(nodeId)));
        if (resource.resourceType() == ConfigResource.TOPIC) {
            Optional<String> illegal = TopicNames.validate(name);
            if (illegal.isPresent()) {
                result.setErrorCode(Errors.INVALID_TOPIC_EXCEPTION.code());
                return illegal.get();
            }
            if (image.topic(name).isEmpty()) {
                result.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
                return "The topic '" + name + "' does not exist.";
            }
            entries.addAll(configs.topic(image.configs(ConfigResource.topic(name)), dynamic, clusterDefaults,
                    synonyms, docs));
            return null;
        }
        if (resource.resourceType() == ConfigResource.BROKER) {
            if (name == null || name.isEmpty()) {
                entries.addAll(configs.clusterDefaults(clusterDefaults, synonyms, docs));
                return null;
            }
            if (!name.equals(Integer.toString(nodeId))) {
                result.setErrorCode(Errors.INVALID_REQUEST.code());
                return "Unexpected broker id, expected " + nodeId + " or empty string, but received " + name;
            }
            entries.addAll(configs.broker(dynamic, clusterDefaults, synonyms, docs));
            return null;
        }
        if (resource.resourceType() == ConfigAlterations.BROKER_LOGGER) {
            return describeLoggers(name, entries, result);
        }
        if (resource.resourceType() == ConfigResource.GROUP) {
            if (name == null || name.isEmpty()) {
                result.setErrorCode(Errors.INVALID_REQUEST.code());
                return "Group name must not be empty";
            }
            describeGroup(image.configs(new ConfigResource(ConfigResource.GROUP, name)), synonyms, docs, entries);
            return null;
        }
        result.setErrorCode(Errors.INVALID_REQUEST.code());
        return "Unsupported resource type " + resource.resourceType() + " for DescribeConfigs";
    }

    /**
     * Kafka's GROUP answer (any group name, existing or not): each group key, GROUP_CONFIG where the group sets it,
     * else DEFAULT_CONFIG with the broker's value; the synonym of a set key is itself.
     */
    private void describeGroup(Map<String, String> dynamic, boolean synonyms, boolean docs,
                               List<DescribeConfigsResourceResult> entries) {
        groupConfigs.brokerDefaults().forEach((key, brokerValue) -> {
            String set = dynamic.get(key);
            byte source = set != null ? GROUP_CONFIG : ConfigEntries.DEFAULT_CONFIG;
            String value = set != null ? set : brokerValue;
            DescribeConfigsResourceResult entry = new DescribeConfigsResourceResult().setName(key).setValue(value)
                    .setConfigSource(source).setReadOnly(false).setIsSensitive(false)
                    .setConfigType(key.equals(ShareGroupConfigs.RECORD_LOCK_DURATION_MS) ? TYPE_INT : TYPE_STRING)
                    .setDocumentation(null);
            if (synonyms && set != null) {
                entry.synonyms().add(new DescribeConfigsResponseData.DescribeConfigsSynonym().setName(key)
                        .setValue(set).setSource(GROUP_CONFIG));
            }
            entries.add(entry);
        });
    }

    /** Kafka's BROKER_LOGGER answer: every logger's level, DYNAMIC_BROKER_LOGGER_CONFIG, no synonyms or type. */
    private String describeLoggers(String name, List<DescribeConfigsResourceResult> entries,
                                   DescribeConfigsResult result) {
        result.setErrorCode(Errors.INVALID_REQUEST.code());
        if (name == null || name.isEmpty()) {
            return "Broker id must not be empty";
        }
        try {
            if (Integer.parseInt(name) != nodeId) {
                return "Unexpected broker id, expected " + nodeId + " but received " + name;
            }
        } catch (NumberFormatException e) {
            return "Broker id must be an integer, but it is: " + name;
        }
        result.setErrorCode(Errors.NONE.code());
        BrokerLoggers.loggers().forEach((logger, level) -> entries.add(new DescribeConfigsResourceResult()
                .setName(logger).setValue(level).setConfigSource(DYNAMIC_BROKER_LOGGER_CONFIG).setReadOnly(false)
                .setIsSensitive(false).setConfigType((byte) 0).setDocumentation(null)));
        return null;
    }

    @Override
    public DescribeConfigsResponseData errorResponse(RequestContext ctx, DescribeConfigsRequestData request,
                                                     Errors error) {
        DescribeConfigsResponseData response = new DescribeConfigsResponseData().setThrottleTimeMs(0);
        for (DescribeConfigsResource resource : request.resources()) {
            response.results().add(new DescribeConfigsResult().setErrorCode(error.code())
                    .setErrorMessage(error.message()).setResourceType(resource.resourceType())
                    .setResourceName(resource.resourceName()));
        }
        return response;
    }
}
