package io.cairn.broker.handler;

import static java.util.concurrent.CompletableFuture.completedFuture;

import io.cairn.broker.config.DynamicBrokerConfigs;
import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.controller.TopicNames;
import io.cairn.metadata.image.ConfigResource;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.DescribeConfigsRequestData;
import io.cairn.wire.message.DescribeConfigsRequestData.DescribeConfigsResource;
import io.cairn.wire.message.DescribeConfigsResponseData;
import io.cairn.wire.message.DescribeConfigsResponseData.DescribeConfigsResourceResult;
import io.cairn.wire.message.DescribeConfigsResponseData.DescribeConfigsResult;
import io.cairn.wire.message.DescribeConfigsResponseData.DescribeConfigsSynonym;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletionStage;

/**
 * DescribeConfigs v1-v4 for topics and for this broker, as Kafka's {@code ConfigHelper} answers it: a topic's
 * configs are every topic config with its default (DEFAULT_CONFIG), the value a broker synonym set in
 * server.properties (STATIC_BROKER_CONFIG, named by the broker key) or its override (DYNAMIC_TOPIC_CONFIG); the
 * broker's are the settings it was started with (STATIC_BROKER_CONFIG when set in server.properties, else
 * DEFAULT_CONFIG) plus dynamic overrides; the cluster default broker resource (empty name) lists the dynamic
 * defaults. {@code configurationKeys} filters, {@code includeSynonyms} adds the sources in precedence order (v1+),
 * v3+ carries the config type; BROKER_LOGGER lists this broker's log4j2 loggers with their levels
 * (DYNAMIC_BROKER_LOGGER_CONFIG). Documentation is not provided (null). Other resource types get INVALID_REQUEST.
 * Immutable, thread-safe, never blocks.
 */
public final class DescribeConfigsHandler
        implements ApiHandler<DescribeConfigsRequestData, DescribeConfigsResponseData> {

    static final byte TOPIC_CONFIG = 1;
    static final byte DYNAMIC_BROKER_CONFIG = 2;
    static final byte DYNAMIC_DEFAULT_BROKER_CONFIG = 3;
    static final byte STATIC_BROKER_CONFIG = 4;
    static final byte DEFAULT_CONFIG = 5;
    static final byte DYNAMIC_BROKER_LOGGER_CONFIG = 6;

    private final MetadataNode metadata;
    private final int nodeId;
    private final Map<String, String> brokerValues;
    private final Set<String> brokerExplicit;
    private final Map<String, String> brokerTopicDefaults;
    private final Map<String, String> brokerTopicSources;

    /**
     * @param brokerValues   the broker's effective settings by key
     * @param brokerExplicit the keys set in server.properties (or overrides)
     */
    public DescribeConfigsHandler(MetadataNode metadata, int nodeId, Map<String, String> brokerValues,
                                  Set<String> brokerExplicit) {
        this(metadata, nodeId, brokerValues, brokerExplicit, Map.of(), Map.of());
    }

    /**
     * @param brokerTopicDefaults topic config defaults server.properties sets through broker synonyms
     *                            ({@code flush.ms} from {@code log.flush.interval.ms}, ...)
     * @param brokerTopicSources  for each of them, the broker key that set it
     */
    public DescribeConfigsHandler(MetadataNode metadata, int nodeId, Map<String, String> brokerValues,
                                  Set<String> brokerExplicit, Map<String, String> brokerTopicDefaults,
                                  Map<String, String> brokerTopicSources) {
        this.metadata = metadata;
        this.nodeId = nodeId;
        this.brokerValues = Map.copyOf(brokerValues);
        this.brokerExplicit = Set.copyOf(brokerExplicit);
        this.brokerTopicDefaults = Map.copyOf(brokerTopicDefaults);
        this.brokerTopicSources = Map.copyOf(brokerTopicSources);
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
        for (DescribeConfigsResource resource : request.resources()) {
            DescribeConfigsResult result = new DescribeConfigsResult().setResourceType(resource.resourceType())
                    .setResourceName(resource.resourceName()).setErrorCode(Errors.NONE.code());
            response.results().add(result);
            List<Entry> entries = new ArrayList<>();
            String problem = describe(image, resource, entries, result);
            if (problem != null) {
                result.setErrorMessage(problem);
                continue;
            }
            for (Entry entry : entries) {
                if (resource.configurationKeys() == null || resource.configurationKeys().contains(entry.name)) {
                    result.configs().add(entry.toResult(request.includeSynonyms(), ctx.apiVersion()));
                }
            }
        }
        return completedFuture(response);
    }

    /** Fills {@code entries}; returns the error message (with the code set on {@code result}) or null. */
    private String describe(MetadataImage image, DescribeConfigsResource resource, List<Entry> entries,
                            DescribeConfigsResult result) {
        String name = resource.resourceName();
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
            Map<String, String> overrides = image.configs(ConfigResource.topic(name));
            Map<String, String> all = new TreeMap<>(TopicConfigDefaults.defaults());
            all.putAll(brokerTopicDefaults);
            all.putAll(overrides);
            all.forEach((key, value) -> {
                Entry entry = new Entry(key, value, TopicConfigDefaults.type(key).id);
                if (overrides.containsKey(key)) {
                    entry.synonym(key, value, TOPIC_CONFIG);
                }
                String brokerKey = brokerTopicSources.get(key);
                if (brokerKey != null && brokerTopicDefaults.containsKey(key)) {
                    // Kafka names a broker synonym by its broker key (log.retention.hours for retention.ms)
                    entry.synonym(brokerKey, brokerTopicDefaults.get(key), STATIC_BROKER_CONFIG);
                }
                String defaultSynonym = TopicConfigDefaults.defaultSynonym(key);
                if (defaultSynonym != null) {
                    entry.synonym(defaultSynonym, TopicConfigDefaults.defaults().get(key), DEFAULT_CONFIG);
                }
                entries.add(entry);
            });
            return null;
        }
        if (resource.resourceType() == ConfigResource.BROKER) {
            if (name == null || name.isEmpty()) {
                image.configs(ConfigResource.broker("")).forEach((key, value) -> entries.add(
                        new Entry(key, value, brokerType(key))
                                .synonym(key, value, DYNAMIC_DEFAULT_BROKER_CONFIG)));
                return null;
            }
            if (!name.equals(Integer.toString(nodeId))) {
                result.setErrorCode(Errors.INVALID_REQUEST.code());
                return "Unexpected broker id, expected " + nodeId + " or empty string, but received " + name;
            }
            Map<String, String> dynamic = image.configs(ConfigResource.broker(name));
            Map<String, String> clusterDefaults = image.configs(ConfigResource.broker(""));
            Map<String, String> all = new TreeMap<>(brokerValues);
            all.putAll(clusterDefaults);
            all.putAll(dynamic);
            all.forEach((key, value) -> {
                Entry entry = new Entry(key, value, brokerType(key));
                Optional.ofNullable(dynamic.get(key)).ifPresent(v -> entry.synonym(key, v, DYNAMIC_BROKER_CONFIG));
                Optional.ofNullable(clusterDefaults.get(key))
                        .ifPresent(v -> entry.synonym(key, v, DYNAMIC_DEFAULT_BROKER_CONFIG));
                if (brokerValues.containsKey(key)) {
                    entry.synonym(key, brokerValues.get(key),
                            brokerExplicit.contains(key) ? STATIC_BROKER_CONFIG : DEFAULT_CONFIG);
                }
                entries.add(entry);
            });
            return null;
        }
        if (resource.resourceType() == ConfigAlterations.BROKER_LOGGER) {
            return describeLoggers(name, entries, result);
        }
        result.setErrorCode(Errors.INVALID_REQUEST.code());
        return "Unsupported resource type " + resource.resourceType() + " for DescribeConfigs";
    }

    /** The config type of a broker key: LONG for the throttle rates, else (for now) STRING. */
    private static byte brokerType(String key) {
        return DynamicBrokerConfigs.isLive(key) ? TopicConfigDefaults.Type.LONG.id : TopicConfigDefaults.Type.STRING.id;
    }

    /** Kafka's BROKER_LOGGER answer: every logger's level, DYNAMIC_BROKER_LOGGER_CONFIG, no synonyms or type. */
    private String describeLoggers(String name, List<Entry> entries, DescribeConfigsResult result) {
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
        BrokerLoggers.loggers().forEach((logger, level) -> entries.add(new Entry(logger, level, (byte) 0)
                .synonym(logger, level, DYNAMIC_BROKER_LOGGER_CONFIG).withoutSynonyms()));
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

    /** One config with its synonyms, the first of which is the effective source. Not thread-safe. */
    private static final class Entry {
        private final String name;
        private final String value;
        private final byte type;
        private final List<DescribeConfigsSynonym> synonyms = new ArrayList<>();
        private boolean reportSynonyms = true;

        Entry(String name, String value, byte type) {
            this.name = name;
            this.value = value;
            this.type = type;
        }

        Entry synonym(String synonymName, String synonymValue, byte source) {
            synonyms.add(new DescribeConfigsSynonym().setName(synonymName).setValue(synonymValue)
                    .setSource(source));
            return this;
        }

        /** The first synonym gives the source, but none is reported. */
        Entry withoutSynonyms() {
            reportSynonyms = false;
            return this;
        }

        DescribeConfigsResourceResult toResult(boolean includeSynonyms, short version) {
            byte source = synonyms.isEmpty() ? DEFAULT_CONFIG : synonyms.get(0).source();
            DescribeConfigsResourceResult result = new DescribeConfigsResourceResult().setName(name).setValue(value)
                    .setReadOnly(false).setIsSensitive(false).setConfigSource(source)
                    .setSynonyms(includeSynonyms && reportSynonyms ? new ArrayList<>(synonyms) : new ArrayList<>());
            if (version >= 3) {
                result.setConfigType(type).setDocumentation(null);
            }
            return result;
        }
    }
}
