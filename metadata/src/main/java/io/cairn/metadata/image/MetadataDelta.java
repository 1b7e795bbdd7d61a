package io.cairn.metadata.image;

import io.cairn.metadata.record.AccessControlEntryRecord;
import io.cairn.metadata.record.BrokerRegistrationChangeRecord;
import io.cairn.metadata.record.ClusterIdRecord;
import io.cairn.metadata.record.ConfigRecord;
import io.cairn.metadata.record.ClearElrRecord;
import io.cairn.metadata.record.ClientQuotaRecord;
import io.cairn.metadata.record.ControllerChangeRecord;
import io.cairn.metadata.record.DelegationTokenRecord;
import io.cairn.metadata.record.FeatureLevelRecord;
import io.cairn.metadata.record.PartitionChangeRecord;
import io.cairn.metadata.record.PartitionRecord;
import io.cairn.metadata.record.ProducerIdsRecord;
import io.cairn.metadata.record.RegisterBrokerRecord;
import io.cairn.metadata.record.RemoveAccessControlEntryRecord;
import io.cairn.metadata.record.RemoveDelegationTokenRecord;
import io.cairn.metadata.record.RemoveTopicRecord;
import io.cairn.metadata.record.RemoveUserScramCredentialRecord;
import io.cairn.metadata.record.TopicRecord;
import io.cairn.metadata.record.UnregisterBrokerRecord;
import io.cairn.metadata.record.UserScramCredentialRecord;
import io.cairn.wire.protocol.ApiMessage;
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Applies metadata records to an image, producing the next image and the summary of what changed. Application is
 * total and deterministic: every node replaying the same records from the same image reaches an equal image, and a
 * record that no longer applies (a change to a deleted topic) is skipped the same way everywhere. Maps are copied
 * only when first touched. Not thread-safe: one delta is used by one thread, then discarded.
 */
public final class MetadataDelta {

    private static final Logger LOGGER = LogManager.getLogger(MetadataDelta.class);

    private final MetadataImage base;
    private String clusterId;
    private int controllerId;
    private long controllerTerm;
    private long nextProducerId;
    private long lastBrokerEpoch;
    private Map<Integer, BrokerRegistration> brokers;
    private Map<Uuid, TopicImage> topicsById;
    private Map<String, Uuid> topicIds;
    private Map<ConfigResource, Map<String, String>> configs;
    private Map<Uuid, AclEntry> acls;
    private Map<String, Map<Byte, ScramCredential>> scram;
    private Map<String, Short> features;
    private Map<ClientQuotaEntity, Map<String, Double>> clientQuotas;
    private Map<String, DelegationToken> delegationTokens;
    private final Map<Uuid, Map<Integer, PartitionRegistration>> touchedPartitions = new HashMap<>();

    private final Set<String> createdTopics = new LinkedHashSet<>();
    private final List<TopicImage> deletedTopics = new ArrayList<>();
    private final Map<TopicPartition, PartitionRegistration> changedPartitions = new LinkedHashMap<>();
    private final Set<Integer> changedBrokers = new LinkedHashSet<>();
    private final Set<ConfigResource> changedConfigs = new LinkedHashSet<>();
    private boolean producerIdsChanged;
    private boolean aclsChanged;
    private boolean scramChanged;
    private boolean controllerChanged;
    private boolean featuresChanged;
    private boolean quotasChanged;

    public MetadataDelta(MetadataImage base) {
        this.base = base;
        this.clusterId = base.clusterId();
        this.controllerId = base.controllerId();
        this.controllerTerm = base.controllerTerm();
        this.nextProducerId = base.nextProducerId();
        this.lastBrokerEpoch = base.lastBrokerEpoch();
        this.brokers = base.brokers();
        this.topicsById = base.topicsById();
        this.topicIds = base.topicIds();
        this.configs = base.configs();
        this.acls = base.acls();
        this.scram = base.scram();
        this.features = base.features();
        this.clientQuotas = base.clientQuotas();
        this.delegationTokens = base.delegationTokens();
    }

    /** Applies every record of a batch. */
    public MetadataDelta replayAll(List<? extends ApiMessage> records) {
        records.forEach(this::replay);
        return this;
    }

    /** Applies one record. */
    public MetadataDelta replay(ApiMessage record) {
        switch (MetadataRecordType.of(record)) {
            case CLUSTER_ID -> replayClusterId((ClusterIdRecord) record);
            case REGISTER_BROKER -> replayRegisterBroker((RegisterBrokerRecord) record);
            case UNREGISTER_BROKER -> replayUnregisterBroker((UnregisterBrokerRecord) record);
            case BROKER_REGISTRATION_CHANGE -> replayBrokerChange((BrokerRegistrationChangeRecord) record);
            case TOPIC -> replayTopic((TopicRecord) record);
            case PARTITION -> replayPartition((PartitionRecord) record);
            case PARTITION_CHANGE -> replayPartitionChange((PartitionChangeRecord) record);
            case REMOVE_TOPIC -> replayRemoveTopic((RemoveTopicRecord) record);
            case CONFIG -> replayConfig((ConfigRecord) record);
            case PRODUCER_IDS -> replayProducerIds((ProducerIdsRecord) record);
            case ACCESS_CONTROL_ENTRY -> replayAcl((AccessControlEntryRecord) record);
            case REMOVE_ACCESS_CONTROL_ENTRY -> replayRemoveAcl((RemoveAccessControlEntryRecord) record);
            case USER_SCRAM_CREDENTIAL -> replayScram((UserScramCredentialRecord) record);
            case REMOVE_USER_SCRAM_CREDENTIAL -> replayRemoveScram((RemoveUserScramCredentialRecord) record);
            case CONTROLLER_CHANGE -> replayControllerChange((ControllerChangeRecord) record);
            case FEATURE_LEVEL -> replayFeatureLevel((FeatureLevelRecord) record);
            case CLEAR_ELR -> replayClearElr((ClearElrRecord) record);
            case CLIENT_QUOTA -> replayClientQuota((ClientQuotaRecord) record);
            case DELEGATION_TOKEN -> replayDelegationToken((DelegationTokenRecord) record);
            case REMOVE_DELEGATION_TOKEN -> mutableDelegationTokens()
                    .remove(((RemoveDelegationTokenRecord) record).tokenId());
            default -> throw new IllegalStateException("Unhandled record type " + record.apiKey());
        }
        return this;
    }

    /** The image with every replayed record applied, at the given log offset. */
    public MetadataImage apply(long offset) {
        Map<Uuid, TopicImage> topics = topicsById;
        if (!touchedPartitions.isEmpty()) {
            topics = new HashMap<>(topicsById);
            for (Map.Entry<Uuid, Map<Integer, PartitionRegistration>> e : touchedPartitions.entrySet()) {
                TopicImage topic = topics.get(e.getKey());
                if (topic != null) {
                    topics.put(e.getKey(), new TopicImage(topic.name(), topic.id(), e.getValue()));
                }
            }
        }
        return new MetadataImage(offset, clusterId, controllerId, controllerTerm, brokers, topics, topicIds,
                configs, nextProducerId, lastBrokerEpoch, acls, scram, features, clientQuotas, delegationTokens);
    }

    /** What the replayed records changed. */
    public MetadataChanges changes() {
        return new MetadataChanges(createdTopics, deletedTopics, changedPartitions, changedBrokers, changedConfigs,
                producerIdsChanged, aclsChanged, scramChanged, controllerChanged, featuresChanged, quotasChanged);
    }

    private void replayClusterId(ClusterIdRecord record) {
        if (clusterId.isEmpty()) {
            clusterId = record.clusterId();
            controllerChanged = true;
        }
    }

    private void replayControllerChange(ControllerChangeRecord record) {
        controllerId = record.controllerId();
        controllerTerm = record.term();
        controllerChanged = true;
    }

    private void replayFeatureLevel(FeatureLevelRecord record) {
        Map<String, Short> next = new HashMap<>(features);
        if (record.featureLevel() == 0) {
            next.remove(record.name());
        } else {
            next.put(record.name(), record.featureLevel());
        }
        features = Map.copyOf(next);
        featuresChanged = true;
    }

    /** Kafka's {@code ClearElrRecord} replay: ELR and last known ELR emptied for one topic (by name) or all. */
    private void replayClearElr(ClearElrRecord record) {
        if (record.topicName().isEmpty()) {
            topicsById.values().forEach(this::clearElrs);
        } else {
            Uuid id = topicIds.get(record.topicName());
            if (id != null && topicsById.containsKey(id)) {
                clearElrs(topicsById.get(id));
            }
        }
    }

    private void clearElrs(TopicImage topic) {
        Map<Integer, PartitionRegistration> partitions = touchedPartitions.containsKey(topic.id())
                ? touchedPartitions.get(topic.id()) : topic.partitions();
        List<Integer> indexes = new ArrayList<>();
        partitions.forEach((index, p) -> {
            if (!p.elr().isEmpty() || !p.lastKnownElr().isEmpty()) {
                indexes.add(index);
            }
        });
        if (indexes.isEmpty()) {
            return;
        }
        Map<Integer, PartitionRegistration> mutable = partitionsOf(topic);
        for (int index : indexes) {
            PartitionRegistration p = mutable.get(index);
            PartitionRegistration next = new PartitionRegistration(p.replicas(), p.isr(), p.leader(), p.leaderEpoch(),
                    p.partitionEpoch(), p.removingReplicas(), p.addingReplicas(), List.of(), List.of());
            mutable.put(index, next);
            changedPartitions.put(new TopicPartition(topic.name(), index), next);
        }
    }

    private void replayRegisterBroker(RegisterBrokerRecord record) {
        List<BrokerEndpoint> endpoints = new ArrayList<>();
        for (RegisterBrokerRecord.BrokerEndpoint e : record.endpoints()) {
            endpoints.add(new BrokerEndpoint(e.name(), e.host(), e.port(), e.securityProtocol()));
        }
        BrokerRegistration registration = new BrokerRegistration(record.brokerId(), record.incarnationId(),
                record.brokerEpoch(), endpoints, Optional.ofNullable(record.rack()), record.fenced(), false);
        mutableBrokers().put(record.brokerId(), registration);
        lastBrokerEpoch = Math.max(lastBrokerEpoch, record.brokerEpoch());
        changedBrokers.add(record.brokerId());
    }

    private void replayUnregisterBroker(UnregisterBrokerRecord record) {
        BrokerRegistration current = brokers.get(record.brokerId());
        if (current != null && current.epoch() == record.brokerEpoch()) {
            mutableBrokers().remove(record.brokerId());
            changedBrokers.add(record.brokerId());
        }
    }

    private void replayBrokerChange(BrokerRegistrationChangeRecord record) {
        BrokerRegistration current = brokers.get(record.brokerId());
        if (current == null || current.epoch() != record.brokerEpoch()) {
            LOGGER.debug("Skipping change of broker {} epoch {}: not registered at that epoch", record.brokerId(),
                    record.brokerEpoch());
            return;
        }
        BrokerRegistration next = current;
        if (record.fenced() != 0) {
            next = next.withFenced(record.fenced() > 0);
        }
        if (record.inControlledShutdown() != 0) {
            next = next.withControlledShutdown(record.inControlledShutdown() > 0);
        }
        mutableBrokers().put(record.brokerId(), next);
        changedBrokers.add(record.brokerId());
    }

    private void replayTopic(TopicRecord record) {
        if (topicIds.containsKey(record.name()) || topicsById.containsKey(record.topicId())) {
            LOGGER.warn("Skipping TopicRecord for {} ({}): name or id already in use", record.name(),
                    record.topicId());
            return;
        }
        mutableTopics().put(record.topicId(), new TopicImage(record.name(), record.topicId(), Map.of()));
        mutableTopicIds().put(record.name(), record.topicId());
        createdTopics.add(record.name());
    }

    private void replayPartition(PartitionRecord record) {
        TopicImage topic = topicsById.get(record.topicId());
        if (topic == null) {
            return;
        }
        PartitionRegistration registration = new PartitionRegistration(record.replicas(), record.isr(),
                record.leader(), record.leaderEpoch(), record.partitionEpoch(), record.removingReplicas(),
                record.addingReplicas(), record.eligibleLeaderReplicas(), record.lastKnownElr());
        partitionsOf(topic).put(record.partitionId(), registration);
        changedPartitions.put(new TopicPartition(topic.name(), record.partitionId()), registration);
    }

    private void replayPartitionChange(PartitionChangeRecord record) {
        TopicImage topic = topicsById.get(record.topicId());
        if (topic == null) {
            return;
        }
        Map<Integer, PartitionRegistration> partitions = partitionsOf(topic);
        PartitionRegistration current = partitions.get(record.partitionId());
        if (current == null) {
            return;
        }
        List<Integer> isr = record.isr() == null ? current.isr() : record.isr();
        List<Integer> replicas = record.replicas() == null ? current.replicas() : record.replicas();
        int leader = record.leader() == -2 ? current.leader() : record.leader();
        // As Kafka: a record that names the leader, even the same one, starts a new leader epoch (a reassignment
        // that drops replicas fences their fetches that way).
        int leaderEpoch = record.leader() != -2 ? current.leaderEpoch() + 1 : current.leaderEpoch();
        List<Integer> removing = record.removingReplicas() == null ? current.removingReplicas()
                : record.removingReplicas();
        List<Integer> adding = record.addingReplicas() == null ? current.addingReplicas() : record.addingReplicas();
        List<Integer> elr = record.eligibleLeaderReplicas() == null ? current.elr()
                : record.eligibleLeaderReplicas();
        List<Integer> lastKnownElr = record.lastKnownElr() == null ? current.lastKnownElr() : record.lastKnownElr();
        PartitionRegistration next = new PartitionRegistration(replicas, isr, leader, leaderEpoch,
                current.partitionEpoch() + 1, removing, adding, elr, lastKnownElr);
        partitions.put(record.partitionId(), next);
        changedPartitions.put(new TopicPartition(topic.name(), record.partitionId()), next);
    }

    private void replayRemoveTopic(RemoveTopicRecord record) {
        TopicImage topic = topicsById.get(record.topicId());
        if (topic == null) {
            return;
        }
        Map<Integer, PartitionRegistration> touched = touchedPartitions.remove(record.topicId());
        deletedTopics.add(touched == null ? topic : new TopicImage(topic.name(), topic.id(), touched));
        mutableTopics().remove(record.topicId());
        mutableTopicIds().remove(topic.name());
        createdTopics.remove(topic.name());
        changedPartitions.keySet().removeIf(tp -> tp.topic().equals(topic.name()));
        ConfigResource resource = ConfigResource.topic(topic.name());
        if (configs.containsKey(resource)) {
            mutableConfigs().remove(resource);
            changedConfigs.add(resource);
        }
    }

    private void replayConfig(ConfigRecord record) {
        ConfigResource resource = new ConfigResource(record.resourceType(), record.resourceName());
        Map<String, String> values = new HashMap<>(configs.getOrDefault(resource, Map.of()));
        if (record.value() == null) {
            values.remove(record.name());
        } else {
            values.put(record.name(), record.value());
        }
        if (values.isEmpty()) {
            mutableConfigs().remove(resource);
        } else {
            mutableConfigs().put(resource, Map.copyOf(values));
        }
        changedConfigs.add(resource);
    }

    private void replayProducerIds(ProducerIdsRecord record) {
        nextProducerId = Math.max(nextProducerId, record.nextProducerId());
        producerIdsChanged = true;
    }

    private void replayAcl(AccessControlEntryRecord r) {
        mutableAcls().put(r.id(), new AclEntry(r.id(), r.resourceType(), r.resourceName(), r.patternType(),
                r.principal(), r.host(), r.operation(), r.permissionType()));
        aclsChanged = true;
    }

    private void replayRemoveAcl(RemoveAccessControlEntryRecord record) {
        if (acls.containsKey(record.id())) {
            mutableAcls().remove(record.id());
            aclsChanged = true;
        }
    }

    private void replayScram(UserScramCredentialRecord r) {
        Map<Byte, ScramCredential> forUser = new HashMap<>(scram.getOrDefault(r.name(), Map.of()));
        forUser.put(r.mechanism(), new ScramCredential(r.name(), r.mechanism(), r.salt(), r.storedKey(),
                r.serverKey(), r.iterations()));
        mutableScram().put(r.name(), Map.copyOf(forUser));
        scramChanged = true;
    }

    private void replayRemoveScram(RemoveUserScramCredentialRecord record) {
        Map<Byte, ScramCredential> forUser = new HashMap<>(scram.getOrDefault(record.name(), Map.of()));
        if (forUser.remove(record.mechanism()) == null) {
            return;
        }
        if (forUser.isEmpty()) {
            mutableScram().remove(record.name());
        } else {
            mutableScram().put(record.name(), Map.copyOf(forUser));
        }
        scramChanged = true;
    }

    /** Kafka's {@code ClientQuotaDelta}: sets or removes one key; an entity left without keys goes away. */
    private void replayClientQuota(ClientQuotaRecord record) {
        Map<String, String> entries = new HashMap<>();
        record.entity().forEach(e -> entries.put(e.entityType(), e.entityName()));
        ClientQuotaEntity entity = new ClientQuotaEntity(entries);
        Map<String, Double> values = new HashMap<>(clientQuotas.getOrDefault(entity, Map.of()));
        if (record.remove()) {
            if (values.remove(record.key()) == null) {
                return;
            }
        } else {
            values.put(record.key(), record.value());
        }
        if (clientQuotas == base.clientQuotas()) {
            clientQuotas = new HashMap<>(clientQuotas);
        }
        if (values.isEmpty()) {
            clientQuotas.remove(entity);
        } else {
            clientQuotas.put(entity, Map.copyOf(values));
        }
        quotasChanged = true;
    }

    private Map<Integer, PartitionRegistration> partitionsOf(TopicImage topic) {
        return touchedPartitions.computeIfAbsent(topic.id(), id -> new HashMap<>(topic.partitions()));
    }

    private Map<Integer, BrokerRegistration> mutableBrokers() {
        if (brokers == base.brokers()) {
            brokers = new HashMap<>(brokers);
        }
        return brokers;
    }

    private Map<Uuid, TopicImage> mutableTopics() {
        if (topicsById == base.topicsById()) {
            topicsById = new HashMap<>(topicsById);
        }
        return topicsById;
    }

    private Map<String, Uuid> mutableTopicIds() {
        if (topicIds == base.topicIds()) {
            topicIds = new HashMap<>(topicIds);
        }
        return topicIds;
    }

    private Map<ConfigResource, Map<String, String>> mutableConfigs() {
        if (configs == base.configs()) {
            configs = new HashMap<>(configs);
        }
        return configs;
    }

    private Map<Uuid, AclEntry> mutableAcls() {
        if (acls == base.acls()) {
            acls = new HashMap<>(acls);
        }
        return acls;
    }

    private void replayDelegationToken(DelegationTokenRecord r) {
        mutableDelegationTokens().put(r.tokenId(), new DelegationToken(r.tokenId(), r.owner(), r.requester(),
                r.renewers(), r.issueTimestamp(), r.maxTimestamp(), r.expirationTimestamp()));
    }

    private Map<String, DelegationToken> mutableDelegationTokens() {
        if (delegationTokens == base.delegationTokens()) {
            delegationTokens = new HashMap<>(delegationTokens);
        }
        return delegationTokens;
    }

    private Map<String, Map<Byte, ScramCredential>> mutableScram() {
        if (scram == base.scram()) {
            scram = new HashMap<>(scram);
        }
        return scram;
    }
}
