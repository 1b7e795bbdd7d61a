package io.cairn.metadata.image;

import io.cairn.metadata.record.AccessControlEntryRecord;
import io.cairn.metadata.record.BrokerRegistrationChangeRecord;
import io.cairn.metadata.record.ClientQuotaRecord;
import io.cairn.metadata.record.ClusterIdRecord;
import io.cairn.metadata.record.ConfigRecord;
import io.cairn.metadata.record.ControllerChangeRecord;
import io.cairn.metadata.record.DelegationTokenRecord;
import io.cairn.metadata.record.FeatureLevelRecord;
import io.cairn.metadata.record.PartitionRecord;
import io.cairn.metadata.record.ProducerIdsRecord;
import io.cairn.metadata.record.RegisterBrokerRecord;
import io.cairn.metadata.record.TopicRecord;
import io.cairn.metadata.record.UserScramCredentialRecord;
import io.cairn.wire.protocol.ApiMessage;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * Writes an image as the records that rebuild it from {@link MetadataImage#EMPTY}: the content of a snapshot.
 * Records come out in a canonical order (sorted keys), so equal images give equal bytes. Stateless, thread-safe.
 */
public final class ImageRecords {

    private ImageRecords() {
    }

    /** The records that replayed on the empty image give back {@code image} (except its offset). */
    public static List<ApiMessage> of(MetadataImage image) {
        List<ApiMessage> records = new ArrayList<>();
        if (!image.clusterId().isEmpty()) {
            records.add(new ClusterIdRecord().setClusterId(image.clusterId()));
        }
        if (image.controllerId() >= 0) {
            records.add(new ControllerChangeRecord().setControllerId(image.controllerId())
                    .setTerm(image.controllerTerm()));
        }
        image.features().entrySet().stream().sorted(Map.Entry.comparingByKey())
                .forEach(f -> records.add(new FeatureLevelRecord().setName(f.getKey()).setFeatureLevel(f.getValue())));
        image.brokers().values().stream().sorted(Comparator.comparingInt(BrokerRegistration::id))
                .forEach(b -> addBroker(records, b));
        image.topicsById().values().stream().sorted(Comparator.comparing(TopicImage::name))
                .forEach(t -> addTopic(records, t));
        image.configs().entrySet().stream()
                .sorted(Comparator.comparing((Map.Entry<ConfigResource, Map<String, String>> e) -> e.getKey().type())
                        .thenComparing(e -> e.getKey().name()))
                .forEach(e -> e.getValue().entrySet().stream().sorted(Map.Entry.comparingByKey())
                        .forEach(c -> records.add(new ConfigRecord().setResourceType(e.getKey().type())
                                .setResourceName(e.getKey().name()).setName(c.getKey()).setValue(c.getValue()))));
        if (image.nextProducerId() > 0) {
            records.add(new ProducerIdsRecord().setBrokerId(-1).setBrokerEpoch(-1)
                    .setNextProducerId(image.nextProducerId()));
        }
        image.acls().values().stream().sorted(Comparator.comparing(a -> a.id().toString()))
                .forEach(a -> records.add(new AccessControlEntryRecord().setId(a.id())
                        .setResourceType(a.resourceType()).setResourceName(a.resourceName())
                        .setPatternType(a.patternType()).setPrincipal(a.principal()).setHost(a.host())
                        .setOperation(a.operation()).setPermissionType(a.permissionType())));
        image.scram().entrySet().stream().sorted(Map.Entry.comparingByKey())
                .forEach(u -> u.getValue().values().stream().sorted(Comparator.comparingInt(ScramCredential::mechanism))
                        .forEach(c -> records.add(new UserScramCredentialRecord().setName(c.user())
                                .setMechanism(c.mechanism()).setSalt(c.salt()).setStoredKey(c.storedKey())
                                .setServerKey(c.serverKey()).setIterations(c.iterations()))));
        image.clientQuotas().entrySet().stream()
                .sorted(Comparator.comparing((Map.Entry<ClientQuotaEntity, Map<String, Double>> e) ->
                        e.getKey().entries().toString()))
                .forEach(e -> e.getValue().entrySet().stream().sorted(Map.Entry.comparingByKey())
                        .forEach(q -> records.add(clientQuotaRecord(e.getKey(), q.getKey()).setValue(q.getValue()))));
        image.delegationTokens().values().stream().sorted(Comparator.comparing(DelegationToken::tokenId))
                .forEach(t -> records.add(delegationTokenRecord(t)));
        return records;
    }

    /** The record that sets {@code token}. */
    public static DelegationTokenRecord delegationTokenRecord(DelegationToken token) {
        return new DelegationTokenRecord().setTokenId(token.tokenId()).setOwner(token.owner())
                .setRequester(token.requester()).setRenewers(new ArrayList<>(token.renewers()))
                .setIssueTimestamp(token.issueTimestamp()).setMaxTimestamp(token.maxTimestamp())
                .setExpirationTimestamp(token.expirationTimestamp());
    }

    /** A ClientQuotaRecord of one key of {@code entity}, its entries in Kafka's order. */
    public static ClientQuotaRecord clientQuotaRecord(ClientQuotaEntity entity, String key) {
        List<ClientQuotaRecord.EntityData> entries = new ArrayList<>();
        entity.kafkaOrder().forEach((type, name) -> entries.add(new ClientQuotaRecord.EntityData()
                .setEntityType(type).setEntityName(name)));
        return new ClientQuotaRecord().setEntity(entries).setKey(key);
    }

    private static void addBroker(List<ApiMessage> records, BrokerRegistration broker) {
        List<RegisterBrokerRecord.BrokerEndpoint> endpoints = new ArrayList<>();
        for (BrokerEndpoint e : broker.endpoints()) {
            endpoints.add(new RegisterBrokerRecord.BrokerEndpoint().setName(e.name()).setHost(e.host())
                    .setPort(e.port()).setSecurityProtocol(e.securityProtocol()));
        }
        records.add(new RegisterBrokerRecord().setBrokerId(broker.id()).setIncarnationId(broker.incarnationId())
                .setBrokerEpoch(broker.epoch()).setEndpoints(endpoints).setRack(broker.rack().orElse(null))
                .setFenced(broker.fenced()));
        if (broker.inControlledShutdown()) {
            records.add(new BrokerRegistrationChangeRecord().setBrokerId(broker.id()).setBrokerEpoch(broker.epoch())
                    .setInControlledShutdown((byte) 1));
        }
    }

    private static void addTopic(List<ApiMessage> records, TopicImage topic) {
        records.add(new TopicRecord().setName(topic.name()).setTopicId(topic.id()));
        topic.partitions().entrySet().stream().sorted(Map.Entry.comparingByKey())
                .forEach(e -> records.add(new PartitionRecord().setPartitionId(e.getKey()).setTopicId(topic.id())
                        .setReplicas(e.getValue().replicas()).setIsr(e.getValue().isr())
                        .setLeader(e.getValue().leader()).setLeaderEpoch(e.getValue().leaderEpoch())
                        .setPartitionEpoch(e.getValue().partitionEpoch())
                        .setRemovingReplicas(e.getValue().removingReplicas())
                        .setAddingReplicas(e.getValue().addingReplicas())
                        .setEligibleLeaderReplicas(e.getValue().elr())
                        .setLastKnownElr(e.getValue().lastKnownElr())));
    }
}
