package io.cairn.metadata.image;

import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The cluster metadata at one committed offset of the metadata log: the state every node rebuilds by applying the
 * same records in the same order. Immutable, thread-safe; a node publishes a new instance per committed batch
 * through a volatile field, so hot-path readers never lock.
 *
 * @param offset           the log index of the last record applied, -1 before any
 * @param clusterId        the cluster id, "" until the first controller commits it
 * @param controllerId     the node id of the last active controller, -1 before any
 * @param controllerTerm   the Raft term of that controller
 * @param brokers          broker id to registration
 * @param topicsById       topic id to topic
 * @param topicIds         topic name to topic id
 * @param configs          config overrides per resource (topic, broker, cluster default)
 * @param nextProducerId   the first producer id not handed out yet
 * @param lastBrokerEpoch  the highest broker epoch assigned so far
 * @param acls             ACL id to entry
 * @param scram            user to mechanism to credential
 * @param features         finalized feature levels by name (a feature at level 0 is absent), Kafka's
 *                         {@code FeaturesImage}
 * @param clientQuotas     client quota entity to quota key to value, Kafka's {@code ClientQuotasImage} (an entity
 *                         without any key is absent)
 * @param delegationTokens token id to delegation token, Kafka's {@code DelegationTokenImage}
 */
public record MetadataImage(long offset, String clusterId, int controllerId, long controllerTerm,
                            Map<Integer, BrokerRegistration> brokers, Map<Uuid, TopicImage> topicsById,
                            Map<String, Uuid> topicIds, Map<ConfigResource, Map<String, String>> configs,
                            long nextProducerId, long lastBrokerEpoch, Map<Uuid, AclEntry> acls,
                            Map<String, Map<Byte, ScramCredential>> scram, Map<String, Short> features,
                            Map<ClientQuotaEntity, Map<String, Double>> clientQuotas,
                            Map<String, DelegationToken> delegationTokens) {

    /** The image before any record. */
    public static final MetadataImage EMPTY = new MetadataImage(-1L, "", -1, 0L, Map.of(), Map.of(), Map.of(),
            Map.of(), 0L, 0L, Map.of(), Map.of(), Map.of(), Map.of(), Map.of());

    /** An image without delegation tokens. */
    public MetadataImage(long offset, String clusterId, int controllerId, long controllerTerm,
                         Map<Integer, BrokerRegistration> brokers, Map<Uuid, TopicImage> topicsById,
                         Map<String, Uuid> topicIds, Map<ConfigResource, Map<String, String>> configs,
                         long nextProducerId, long lastBrokerEpoch, Map<Uuid, AclEntry> acls,
                         Map<String, Map<Byte, ScramCredential>> scram, Map<String, Short> features,
                         Map<ClientQuotaEntity, Map<String, Double>> clientQuotas) {
        this(offset, clusterId, controllerId, controllerTerm, brokers, topicsById, topicIds, configs, nextProducerId,
                lastBrokerEpoch, acls, scram, features, clientQuotas, Map.of());
    }

    /** An image without client quotas. */
    public MetadataImage(long offset, String clusterId, int controllerId, long controllerTerm,
                         Map<Integer, BrokerRegistration> brokers, Map<Uuid, TopicImage> topicsById,
                         Map<String, Uuid> topicIds, Map<ConfigResource, Map<String, String>> configs,
                         long nextProducerId, long lastBrokerEpoch, Map<Uuid, AclEntry> acls,
                         Map<String, Map<Byte, ScramCredential>> scram, Map<String, Short> features) {
        this(offset, clusterId, controllerId, controllerTerm, brokers, topicsById, topicIds, configs, nextProducerId,
                lastBrokerEpoch, acls, scram, features, Map.of(), Map.of());
    }

    public MetadataImage {
        brokers = Map.copyOf(brokers);
        topicsById = Map.copyOf(topicsById);
        topicIds = Map.copyOf(topicIds);
        configs = Map.copyOf(configs);
        acls = Map.copyOf(acls);
        scram = Map.copyOf(scram);
        features = Map.copyOf(features);
        clientQuotas = Map.copyOf(clientQuotas);
        delegationTokens = Map.copyOf(delegationTokens);
    }

    /** The finalized level of a feature, 0 when it is not finalized. */
    public short featureLevel(String name) {
        return features.getOrDefault(name, (short) 0);
    }

    public Optional<BrokerRegistration> broker(int id) {
        return Optional.ofNullable(brokers.get(id));
    }

    public Optional<TopicImage> topic(String name) {
        Uuid id = topicIds.get(name);
        return id == null ? Optional.empty() : Optional.ofNullable(topicsById.get(id));
    }

    public Optional<TopicImage> topic(Uuid id) {
        return Optional.ofNullable(topicsById.get(id));
    }

    public Optional<PartitionRegistration> partition(TopicPartition tp) {
        return topic(tp.topic()).flatMap(t -> t.partition(tp.partition()));
    }

    /** The config overrides of a resource (empty when none). */
    public Map<String, String> configs(ConfigResource resource) {
        return configs.getOrDefault(resource, Map.of());
    }

    /** Every partition the broker currently leads. */
    public List<TopicPartition> leaderships(int brokerId) {
        List<TopicPartition> led = new ArrayList<>();
        for (TopicImage topic : topicsById.values()) {
            topic.partitions().forEach((index, p) -> {
                if (p.leader() == brokerId) {
                    led.add(new TopicPartition(topic.name(), index));
                }
            });
        }
        return led;
    }

    /** The number of partitions over all topics. */
    public int partitionCount() {
        int count = 0;
        for (TopicImage topic : topicsById.values()) {
            count += topic.partitions().size();
        }
        return count;
    }
}
