package io.cairn.metadata.controller;

import io.cairn.metadata.controller.ControllerMutationQuotas.MutationQuota;
import io.cairn.metadata.image.BrokerRegistration;
import io.cairn.metadata.image.ConfigResource;
import io.cairn.metadata.image.Features;
import io.cairn.metadata.image.MetadataDelta;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.ScramCredential;
import io.cairn.metadata.image.TopicImage;
import io.cairn.metadata.record.BrokerRegistrationChangeRecord;
import io.cairn.metadata.record.FeatureLevelRecord;
import io.cairn.metadata.record.PartitionChangeRecord;
import io.cairn.metadata.record.ProducerIdsRecord;
import io.cairn.metadata.record.RegisterBrokerRecord;
import io.cairn.metadata.record.UnregisterBrokerRecord;
import io.cairn.metadata.record.UserScramCredentialRecord;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AllocateProducerIdsRequestData;
import io.cairn.wire.message.AlterClientQuotasRequestData;
import io.cairn.wire.message.AllocateProducerIdsResponseData;
import io.cairn.wire.message.AlterConfigsRequestData;
import io.cairn.wire.message.AlterPartitionReassignmentsRequestData;
import io.cairn.wire.message.AlterPartitionRequestData;
import io.cairn.wire.message.AlterPartitionResponseData;
import io.cairn.wire.message.AlterUserScramCredentialsRequestData;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.BrokerHeartbeatRequestData;
import io.cairn.wire.message.BrokerHeartbeatResponseData;
import io.cairn.wire.message.BrokerRegistrationRequestData;
import io.cairn.wire.message.BrokerRegistrationResponseData;
import io.cairn.wire.message.CreateAclsRequestData;
import io.cairn.wire.message.CreateDelegationTokenRequestData;
import io.cairn.wire.message.CreatePartitionsRequestData;
import io.cairn.wire.message.CreatePartitionsResponseData;
import io.cairn.wire.message.CreateTopicsRequestData;
import io.cairn.wire.message.CreateTopicsResponseData;
import io.cairn.wire.message.DeleteAclsRequestData;
import io.cairn.wire.message.DeleteTopicsRequestData;
import io.cairn.wire.message.DeleteTopicsResponseData;
import io.cairn.wire.message.ElectLeadersRequestData;
import io.cairn.wire.message.ExpireDelegationTokenRequestData;
import io.cairn.wire.message.IncrementalAlterConfigsRequestData;
import io.cairn.wire.message.ListPartitionReassignmentsRequestData;
import io.cairn.wire.message.RenewDelegationTokenRequestData;
import io.cairn.wire.message.UnregisterBrokerRequestData;
import io.cairn.wire.message.UnregisterBrokerResponseData;
import io.cairn.wire.message.UpdateFeaturesRequestData;
import io.cairn.wire.protocol.ApiMessage;
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.IntPredicate;
import java.util.function.Supplier;

/**
 * The controller's decisions as pure functions: a command and the current image in, the records to commit and the
 * Kafka response out. Nothing here touches the clock, the log or the network, which is what makes the quorum
 * deterministic and the simulation test possible (an ip quota entity named by host is resolved, as Kafka does; see
 * {@link ClientQuotaCommands}). Topic commands are in {@link TopicCommands}, config changes in
 * {@link ConfigCommands}, SCRAM credentials in {@link ScramCommands}, client quotas in {@link ClientQuotaCommands}.
 * Stateless apart from its settings, thread-safe.
 */
public final class ControllerLogic {

    /** Kafka's bound on the records of one operator request (QuorumController.MAX_RECORDS_PER_USER_OP). */
    static final int MAX_RECORDS_PER_USER_OP = 10_000;
    /** Kafka's message for a request over that bound (answered with POLICY_VIOLATION). */
    static final String TOO_LARGE = "Unable to perform excessively large batch operation.";

    private static final String MIN_INSYNC_REPLICAS = "min.insync.replicas";
    private static final String UNCLEAN_LEADER_ELECTION_ENABLE = "unclean.leader.election.enable";

    private final ControllerSettings settings;
    private final TopicCommands topics;
    /** The source of new ACL ids (the topic ids' source: random in production, seeded in simulations). */
    private final Supplier<Uuid> aclIds;
    private final Map<String, Short> bootstrapFeatures;
    private final List<ScramCredential> bootstrapScram;

    public ControllerLogic(ControllerSettings settings) {
        this(settings, TopicCommands::randomTopicId);
    }

    /** With random topic ids and the given bootstrap feature levels. */
    public ControllerLogic(ControllerSettings settings, Map<String, Short> bootstrapFeatures) {
        this(settings, TopicCommands::randomTopicId, bootstrapFeatures);
    }

    /** With random topic ids, the given bootstrap feature levels and bootstrap SCRAM credentials. */
    public ControllerLogic(ControllerSettings settings, Map<String, Short> bootstrapFeatures,
                           List<ScramCredential> bootstrapScram) {
        this(settings, TopicCommands::randomTopicId, bootstrapFeatures, bootstrapScram);
    }

    /**
     * @param settings the controller's settings
     * @param topicIds the source of new topic ids (random in production, seeded in simulations); ids go into the
     *                 records, so replaying the log never calls it
     */
    public ControllerLogic(ControllerSettings settings, Supplier<Uuid> topicIds) {
        this(settings, topicIds, Features.bootstrapLevels());
    }

    /**
     * @param bootstrapFeatures the feature levels a new cluster finalizes (from {@code cairn-storage format}),
     *                          validated by {@link Features#invalidLevel}
     */
    public ControllerLogic(ControllerSettings settings, Supplier<Uuid> topicIds,
                           Map<String, Short> bootstrapFeatures) {
        this(settings, topicIds, bootstrapFeatures, List.of());
    }

    /**
     * @param bootstrapScram the SCRAM credentials a new cluster starts with ({@code cairn-storage format
     *                       --add-scram}), committed with the bootstrap feature levels
     */
    public ControllerLogic(ControllerSettings settings, Supplier<Uuid> topicIds,
                           Map<String, Short> bootstrapFeatures, List<ScramCredential> bootstrapScram) {
        this.settings = settings;
        this.topics = new TopicCommands(settings, topicIds);
        this.aclIds = topicIds;
        this.bootstrapFeatures = new TreeMap<>(bootstrapFeatures);
        this.bootstrapScram = List.copyOf(bootstrapScram);
    }

    public ControllerSettings settings() {
        return settings;
    }

    /**
     * Handles any supported request.
     *
     * @param image the image the decision is based on (the controller's pending image)
     * @param request a Kafka controller request
     * @param liveness whether a broker's session is still alive (heartbeat within the session timeout)
     * @return the records and the response
     */
    public ControllerResult<? extends ApiMessage> handle(MetadataImage image, ApiMessage request,
                                                         IntPredicate liveness) {
        ApiKey key = ApiKey.forId(request.apiKey());
        if (key == null) {
            throw new IllegalArgumentException("Unknown API key " + request.apiKey());
        }
        return switch (key) {
            case BROKER_REGISTRATION -> registerBroker(image, (BrokerRegistrationRequestData) request, liveness);
            case BROKER_HEARTBEAT -> heartbeat(image, (BrokerHeartbeatRequestData) request);
            case UNREGISTER_BROKER -> unregisterBroker(image, (UnregisterBrokerRequestData) request);
            case CREATE_TOPICS -> topics.createTopics(image, (CreateTopicsRequestData) request);
            case DELETE_TOPICS -> topics.deleteTopics(image, (DeleteTopicsRequestData) request);
            case CREATE_PARTITIONS -> topics.createPartitions(image, (CreatePartitionsRequestData) request);
            case ALTER_PARTITION -> alterPartition(image, (AlterPartitionRequestData) request);
            case ALLOCATE_PRODUCER_IDS -> allocateProducerIds(image, (AllocateProducerIdsRequestData) request);
            case INCREMENTAL_ALTER_CONFIGS -> ConfigCommands.incrementalAlterConfigs(image,
                    (IncrementalAlterConfigsRequestData) request);
            case ALTER_CONFIGS -> ConfigCommands.alterConfigs(image, (AlterConfigsRequestData) request);
            case ELECT_LEADERS -> LeaderCommands.electLeaders(this, image, (ElectLeadersRequestData) request);
            case ALTER_PARTITION_REASSIGNMENTS -> ReassignmentCommands.alter(this, image,
                    (AlterPartitionReassignmentsRequestData) request);
            case LIST_PARTITION_REASSIGNMENTS -> ReassignmentCommands.list(image,
                    (ListPartitionReassignmentsRequestData) request);
            case UPDATE_FEATURES -> FeatureCommands.updateFeatures(image, (UpdateFeaturesRequestData) request,
                    settings.nodeId(), settings.minInsyncReplicas());
            case CREATE_ACLS -> AclCommands.createAcls(image, (CreateAclsRequestData) request, aclIds);
            case DELETE_ACLS -> AclCommands.deleteAcls(image, (DeleteAclsRequestData) request);
            case ALTER_USER_SCRAM_CREDENTIALS -> ScramCommands.alter(image,
                    (AlterUserScramCredentialsRequestData) request);
            case ALTER_CLIENT_QUOTAS -> ClientQuotaCommands.alter(image, (AlterClientQuotasRequestData) request);
            default -> throw new IllegalArgumentException("Not a controller command: " + key);
        };
    }

    /**
     * A command forwarded with the principal of its client ({@link ForwardedRequest}): the delegation-token commands
     * of {@link DelegationTokenCommands}, decided at wall-clock time {@code nowMs}, without controller mutation quotas.
     */
    public ControllerResult<? extends ApiMessage> handleForwarded(MetadataImage image, ForwardedRequest forwarded,
                                                                  long nowMs) {
        return handleForwarded(image, forwarded, nowMs, ControllerMutationQuotas.NONE);
    }

    /**
     * A command forwarded with the principal of its client ({@link ForwardedRequest}): the delegation-token commands
     * of {@link DelegationTokenCommands}, decided at wall-clock time {@code nowMs}, and CreateTopics, CreatePartitions
     * and DeleteTopics with their partitions counted against the client's controller mutation quota, strict from the
     * versions that know THROTTLING_QUOTA_EXCEEDED (CreateTopics v6, CreatePartitions v3, DeleteTopics v5, as
     * Kafka's {@code ControllerApis}) and permissive before; the response carries the quota's throttle time.
     */
    public ControllerResult<? extends ApiMessage> handleForwarded(MetadataImage image, ForwardedRequest forwarded,
                                                                  long nowMs, ControllerMutationQuotas quotas) {
        ApiKey key = ApiKey.forId(forwarded.request().apiKey());
        DelegationTokenSettings tokens = settings.delegationTokens();
        return switch (key) {
            case CREATE_TOPICS -> {
                MutationQuota quota = quota(quotas, forwarded, 6);
                ControllerResult<CreateTopicsResponseData> result = topics.createTopics(image,
                        (CreateTopicsRequestData) forwarded.request(), quota);
                result.response().setThrottleTimeMs(quota.complete());
                yield result;
            }
            case CREATE_PARTITIONS -> {
                MutationQuota quota = quota(quotas, forwarded, 3);
                ControllerResult<CreatePartitionsResponseData> result = topics.createPartitions(image,
                        (CreatePartitionsRequestData) forwarded.request(), quota);
                result.response().setThrottleTimeMs(quota.complete());
                yield result;
            }
            case DELETE_TOPICS -> {
                MutationQuota quota = quota(quotas, forwarded, 5);
                ControllerResult<DeleteTopicsResponseData> result = topics.deleteTopics(image,
                        (DeleteTopicsRequestData) forwarded.request(), quota);
                result.response().setThrottleTimeMs(quota.complete());
                yield result;
            }
            case CREATE_DELEGATION_TOKEN -> DelegationTokenCommands.create(image, tokens,
                    (CreateDelegationTokenRequestData) forwarded.request(), forwarded.principal(), nowMs,
                    aclIds.get().toString());
            case RENEW_DELEGATION_TOKEN -> DelegationTokenCommands.renew(image, tokens,
                    (RenewDelegationTokenRequestData) forwarded.request(), forwarded.principal(), nowMs);
            case EXPIRE_DELEGATION_TOKEN -> DelegationTokenCommands.expire(image, tokens,
                    (ExpireDelegationTokenRequestData) forwarded.request(), forwarded.principal(), nowMs);
            default -> throw new IllegalArgumentException("Not a forwarded controller command: " + key);
        };
    }

    /** Kafka's {@code newQuotaFor(request, strictSinceVersion)}. */
    private static MutationQuota quota(ControllerMutationQuotas quotas, ForwardedRequest forwarded,
                                       int strictSinceVersion) {
        return quotas.newQuota(forwarded.principalName(), forwarded.clientId() == null ? "" : forwarded.clientId(),
                forwarded.apiVersion() >= strictSinceVersion);
    }

    /**
     * AlterPartition as {@link AlterPartitionCommands} decides it, then Kafka's reassignment step: an ISR change that
     * brings every target replica of an ongoing reassignment into the ISR completes it in the same record, and the
     * leader learns the final state from the response, or NEW_LEADER_ELECTED when the completion moved leadership
     * away from it (Kafka answers FENCED_LEADER_EPOCH to AlterPartition v0-1, which Cairn's brokers do not send).
     */
    public ControllerResult<AlterPartitionResponseData> alterPartition(MetadataImage image,
                                                                       AlterPartitionRequestData request) {
        ControllerResult<AlterPartitionResponseData> decided = AlterPartitionCommands.alterPartition(this, image,
                request);
        List<ApiMessage> records = ReassignmentCommands.completeReassignments(this, image, decided.records());
        if (records.equals(decided.records())) {
            return decided;
        }
        MetadataImage after = apply(image, records);
        AlterPartitionResponseData response = decided.response();
        for (ApiMessage record : records) {
            PartitionChangeRecord change = (PartitionChangeRecord) record;
            TopicImage topic = after.topic(change.topicId()).orElseThrow();
            PartitionRegistration p = topic.partition(change.partitionId()).orElseThrow();
            response.topics().stream().filter(t -> t.topicId().equals(change.topicId()))
                    .forEach(t -> t.partitions().replaceAll(d -> d.partitionIndex() != change.partitionId() ? d
                            : p.leader() != request.brokerId()
                            ? new AlterPartitionResponseData.PartitionData().setPartitionIndex(d.partitionIndex())
                                    .setErrorCode(Errors.NEW_LEADER_ELECTED.code())
                            : d.setLeaderId(p.leader()).setLeaderEpoch(p.leaderEpoch()).setIsr(p.isr())
                                    .setPartitionEpoch(p.partitionEpoch())));
        }
        return new ControllerResult<>(records, response);
    }

    /** Registers (or re-registers) a broker; the new registration starts fenced with a fresh broker epoch. */
    public ControllerResult<BrokerRegistrationResponseData> registerBroker(MetadataImage image,
            BrokerRegistrationRequestData request, IntPredicate liveness) {
        BrokerRegistrationResponseData response = new BrokerRegistrationResponseData();
        if (!image.clusterId().isEmpty() && request.clusterId() != null && !request.clusterId().isEmpty()
                && !image.clusterId().equals(request.clusterId())) {
            return ControllerResult.of(response.setErrorCode(Errors.INCONSISTENT_CLUSTER_ID.code()));
        }
        Optional<BrokerRegistration> existing = image.broker(request.brokerId());
        if (existing.isPresent() && !existing.get().incarnationId().equals(request.incarnationId())
                && !existing.get().fenced() && liveness.test(request.brokerId())) {
            return ControllerResult.of(response.setErrorCode(Errors.DUPLICATE_BROKER_REGISTRATION.code()));
        }
        long epoch = image.lastBrokerEpoch() + 1;
        List<RegisterBrokerRecord.BrokerEndpoint> endpoints = new ArrayList<>();
        request.listeners().forEach(l -> endpoints.add(new RegisterBrokerRecord.BrokerEndpoint().setName(l.name())
                .setHost(l.host()).setPort(l.port()).setSecurityProtocol(l.securityProtocol())));
        List<ApiMessage> records = new ArrayList<>();
        records.add(new RegisterBrokerRecord().setBrokerId(request.brokerId())
                .setIncarnationId(request.incarnationId()).setBrokerEpoch(epoch).setEndpoints(endpoints)
                .setRack(request.rack()).setFenced(true));
        // The new registration is fenced: leaderships of the previous incarnation move to other ISR members. A broker
        // that does not name the epoch it shut down cleanly at shut down uncleanly (KIP-966): it leaves the ELRs too.
        boolean uncleanShutdown = existing.isEmpty() || request.previousBrokerEpoch() != existing.get().epoch();
        MetadataImage next = apply(image, records);
        records.addAll(rebalanceAll(next, request.brokerId(), uncleanShutdown ? request.brokerId() : -1));
        return new ControllerResult<>(records, response.setBrokerEpoch(epoch));
    }

    /** As {@link #heartbeat(MetadataImage, BrokerHeartbeatRequestData, boolean)}, the broker taken as caught up. */
    public ControllerResult<BrokerHeartbeatResponseData> heartbeat(MetadataImage image,
                                                                   BrokerHeartbeatRequestData request) {
        return heartbeat(image, request, true);
    }

    /**
     * A heartbeat: unfences a fenced broker, fences on request, and drives controlled shutdown. {@code caughtUp}
     * (the active controller's judgement: the heartbeat's {@code currentMetadataOffset} reached the offset of the
     * broker's registration record) is answered as {@code isCaughtUp}, and a fenced broker that is not caught up
     * stays fenced, as Kafka's {@code BrokerHeartbeatManager} decides.
     */
    public ControllerResult<BrokerHeartbeatResponseData> heartbeat(MetadataImage image,
                                                                   BrokerHeartbeatRequestData request,
                                                                   boolean caughtUp) {
        BrokerHeartbeatResponseData response = new BrokerHeartbeatResponseData();
        Optional<Errors> error = checkBrokerEpoch(image, request.brokerId(), request.brokerEpoch());
        if (error.isPresent()) {
            return ControllerResult.of(response.setErrorCode(error.get().code()).setIsFenced(true));
        }
        BrokerRegistration broker = image.broker(request.brokerId()).orElseThrow();
        List<ApiMessage> records = new ArrayList<>();
        byte fence = 0;
        if (request.wantFence() && !broker.fenced()) {
            fence = 1;
        } else if (!request.wantFence() && broker.fenced() && !request.wantShutDown() && caughtUp) {
            fence = -1;
        }
        byte shutdown = request.wantShutDown() && !broker.inControlledShutdown() ? (byte) 1 : 0;
        if (fence != 0 || shutdown != 0) {
            records.add(new BrokerRegistrationChangeRecord().setBrokerId(broker.id()).setBrokerEpoch(broker.epoch())
                    .setFenced(fence).setInControlledShutdown(shutdown));
            MetadataImage next = apply(image, records);
            boolean leaving = fence > 0 || shutdown > 0;
            records.addAll(rebalanceAll(next, leaving ? broker.id() : -1));
        }
        MetadataImage after = apply(image, records);
        BrokerRegistration updated = after.broker(broker.id()).orElseThrow();
        response.setIsFenced(updated.fenced()).setIsCaughtUp(caughtUp)
                .setShouldShutDown(updated.inControlledShutdown() && after.leaderships(broker.id()).isEmpty());
        return new ControllerResult<>(records, response);
    }

    /** Removes a broker's registration (kafka-cluster unregister); its leaderships move first. */
    public ControllerResult<UnregisterBrokerResponseData> unregisterBroker(MetadataImage image,
                                                                           UnregisterBrokerRequestData request) {
        Optional<BrokerRegistration> broker = image.broker(request.brokerId());
        if (broker.isEmpty()) {
            return ControllerResult.of(new UnregisterBrokerResponseData()
                    .setErrorCode(Errors.BROKER_ID_NOT_REGISTERED.code()));
        }
        List<ApiMessage> records = new ArrayList<>();
        if (!broker.get().fenced()) {
            records.add(new BrokerRegistrationChangeRecord().setBrokerId(broker.get().id())
                    .setBrokerEpoch(broker.get().epoch()).setFenced((byte) 1));
            records.addAll(rebalanceAll(apply(image, records), broker.get().id()));
        }
        records.add(new UnregisterBrokerRecord().setBrokerId(broker.get().id()).setBrokerEpoch(broker.get().epoch()));
        return new ControllerResult<>(records, new UnregisterBrokerResponseData());
    }

    /** Fences a broker whose session expired and moves its leaderships to other ISR members. */
    public List<ApiMessage> fenceExpired(MetadataImage image, int brokerId) {
        Optional<BrokerRegistration> broker = image.broker(brokerId);
        if (broker.isEmpty() || broker.get().fenced()) {
            return List.of();
        }
        List<ApiMessage> records = new ArrayList<>();
        records.add(new BrokerRegistrationChangeRecord().setBrokerId(brokerId).setBrokerEpoch(broker.get().epoch())
                .setFenced((byte) 1));
        records.addAll(rebalanceAll(apply(image, records), brokerId));
        return records;
    }

    /**
     * The records finalizing the bootstrap metadata of a new cluster (Kafka's bootstrap checkpoint): one
     * {@code FeatureLevelRecord} per feature above level 0, then a {@code UserScramCredentialRecord} per
     * {@code --add-scram} credential; nothing once {@code metadata.version} is finalized.
     */
    public List<ApiMessage> bootstrapFeatures(MetadataImage image) {
        if (image.featureLevel(Features.METADATA_VERSION) > 0) {
            return List.of();
        }
        List<ApiMessage> records = new ArrayList<>();
        if (bootstrapFeatures.getOrDefault(Features.ELIGIBLE_LEADER_REPLICAS_VERSION, (short) 0) > 0) {
            // As Kafka's controller bootstraps a cluster with ELR enabled: a cluster-level min.insync.replicas
            // first, so topics report it as a dynamic cluster default (DYNAMIC_DEFAULT_BROKER_CONFIG).
            records.addAll(ConfigCommands.elrSafetyRecords(image, settings.minInsyncReplicas()));
        }
        bootstrapFeatures.forEach((name, level) -> {
            if (level > 0) {
                records.add(new FeatureLevelRecord().setName(name).setFeatureLevel(level));
            }
        });
        bootstrapScram.forEach(c -> records.add(new UserScramCredentialRecord().setName(c.user())
                .setMechanism(c.mechanism()).setSalt(c.salt()).setStoredKey(c.storedKey())
                .setServerKey(c.serverKey()).setIterations(c.iterations())));
        return records;
    }

    /** Hands out the next block of producer ids. */
    public ControllerResult<AllocateProducerIdsResponseData> allocateProducerIds(MetadataImage image,
            AllocateProducerIdsRequestData request) {
        AllocateProducerIdsResponseData response = new AllocateProducerIdsResponseData();
        Optional<Errors> error = checkBrokerEpoch(image, request.brokerId(), request.brokerEpoch());
        if (error.isPresent()) {
            return ControllerResult.of(response.setErrorCode(error.get().code()).setProducerIdStart(-1));
        }
        long start = image.nextProducerId();
        long next = start + settings.producerIdBlockSize();
        return new ControllerResult<>(List.of(new ProducerIdsRecord().setBrokerId(request.brokerId())
                .setBrokerEpoch(request.brokerEpoch()).setNextProducerId(next)),
                response.setProducerIdStart(start).setProducerIdLen(settings.producerIdBlockSize()));
    }

    /**
     * One pass of automatic leader balancing: preferred-replica elections for up to
     * {@link LeaderCommands#MAX_ELECTIONS_PER_IMBALANCE} partitions whose preferred replica is in the ISR and usable
     * but does not lead (Kafka's {@code maybeBalancePartitionLeaders}). Empty when every leader is preferred or no
     * preferred replica can take over.
     */
    public List<ApiMessage> balanceLeaders(MetadataImage image) {
        return LeaderCommands.balanceLeaders(this, image, LeaderCommands.MAX_ELECTIONS_PER_IMBALANCE);
    }

    /**
     * One pass of the periodic unclean election: leaders for up to
     * {@link LeaderCommands#MAX_ELECTIONS_PER_IMBALANCE} leaderless partitions of topics whose
     * {@code unclean.leader.election.enable} is true (Kafka's {@code maybeElectUncleanLeaders}); it catches the
     * partitions left leaderless before the config was turned on.
     */
    public List<ApiMessage> electUncleanLeaders(MetadataImage image) {
        return LeaderCommands.electUncleanLeaders(this, image, LeaderCommands.MAX_ELECTIONS_PER_IMBALANCE);
    }

    /** Whether some partition is led by another replica than its preferred one, or by none. */
    public boolean leadersImbalanced(MetadataImage image) {
        return LeaderCommands.imbalanced(image);
    }

    /**
     * The partition changes that bring every partition in line with broker availability in {@code image}, treating
     * {@code leaving} (or -1) as leaving the ISR.
     */
    public List<ApiMessage> rebalanceAll(MetadataImage image, int leaving) {
        return rebalanceAll(image, leaving, -1);
    }

    /**
     * As {@link #rebalanceAll(MetadataImage, int)}, where {@code uncleanShutdown} (or -1) registered again after an
     * unclean shutdown and leaves every ISR and ELR.
     */
    public List<ApiMessage> rebalanceAll(MetadataImage image, int leaving, int uncleanShutdown) {
        IntPredicate usable = id -> image.broker(id).map(BrokerRegistration::usable).orElse(false);
        boolean elr = Features.elrEnabled(image);
        List<ApiMessage> records = new ArrayList<>();
        image.topicsById().values().stream().sorted((a, b) -> a.name().compareTo(b.name())).forEach(topic -> {
            boolean unclean = uncleanElection(image, topic);
            int minIsr = minInsyncReplicas(image, topic);
            topic.partitions().entrySet().stream().sorted(Map.Entry.comparingByKey()).forEach(e -> {
                PartitionRegistration p = e.getValue();
                boolean concerned = p.replicas().contains(leaving) || p.replicas().contains(uncleanShutdown)
                        || p.leader() == PartitionRegistration.NO_LEADER || !usable.test(p.leader());
                if (concerned) {
                    Optional<PartitionChangeRecord> change = PartitionElection.rebalance(topic.id(), e.getKey(), p,
                            usable, leaving, uncleanShutdown, unclean, elr, minIsr);
                    change.ifPresent(records::add);
                }
            });
        });
        return ReassignmentCommands.completeReassignments(this, image, records);
    }

    /**
     * Kafka's {@code getTopicEffectiveMinIsr}: the topic's {@code min.insync.replicas}, else the cluster default,
     * else this controller's, at most the replication factor.
     */
    int minInsyncReplicas(MetadataImage image, TopicImage topic) {
        String value = image.configs(ConfigResource.topic(topic.name())).get(MIN_INSYNC_REPLICAS);
        if (value == null) {
            value = image.configs(ConfigResource.broker("")).get(MIN_INSYNC_REPLICAS);
        }
        int minIsr = settings.minInsyncReplicas();
        if (value != null) {
            try {
                minIsr = Integer.parseInt(value.trim());
            } catch (NumberFormatException e) {
                minIsr = settings.minInsyncReplicas();
            }
        }
        PartitionRegistration first = topic.partitions().get(0);
        return first == null ? minIsr : Math.min(minIsr, first.replicas().size());
    }

    /** {@code change} with this image's eligible leader replicas setting and the topic's min.insync.replicas. */
    PartitionChange withElr(PartitionChange change, MetadataImage image, TopicImage topic) {
        return change.eligibleLeaderReplicas(Features.elrEnabled(image), minInsyncReplicas(image, topic));
    }

    /**
     * Kafka's {@code uncleanLeaderElectionEnabledForTopic}: the topic's {@code unclean.leader.election.enable}, else
     * this controller's dynamic broker config, else the cluster default's, else this controller's
     * {@code server.properties} (Kafka's {@code getTopicConfig} order), so that a dynamic change takes effect at the
     * next election and the next periodic pass ({@link #electUncleanLeaders}).
     */
    boolean uncleanElection(MetadataImage image, TopicImage topic) {
        String value = image.configs(ConfigResource.topic(topic.name())).get(UNCLEAN_LEADER_ELECTION_ENABLE);
        if (value == null) {
            value = image.configs(ConfigResource.broker(Integer.toString(settings.nodeId())))
                    .get(UNCLEAN_LEADER_ELECTION_ENABLE);
        }
        if (value == null) {
            value = image.configs(ConfigResource.broker("")).get(UNCLEAN_LEADER_ELECTION_ENABLE);
        }
        return value == null ? settings.uncleanLeaderElectionEnable() : Boolean.parseBoolean(value.trim());
    }

    static Optional<Errors> checkBrokerEpoch(MetadataImage image, int brokerId, long brokerEpoch) {
        Optional<BrokerRegistration> broker = image.broker(brokerId);
        if (broker.isEmpty()) {
            return Optional.of(Errors.BROKER_ID_NOT_REGISTERED);
        }
        if (broker.get().epoch() != brokerEpoch) {
            return Optional.of(Errors.STALE_BROKER_EPOCH);
        }
        return Optional.empty();
    }

    static MetadataImage apply(MetadataImage image, List<ApiMessage> records) {
        return records.isEmpty() ? image : new MetadataDelta(image).replayAll(records).apply(image.offset());
    }
}
