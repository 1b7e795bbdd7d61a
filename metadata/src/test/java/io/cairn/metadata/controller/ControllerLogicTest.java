package io.cairn.metadata.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.metadata.TestRequests;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicImage;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AllocateProducerIdsRequestData;
import io.cairn.wire.message.AllocateProducerIdsResponseData;
import io.cairn.wire.message.AlterConfigsRequestData;
import io.cairn.wire.message.AlterConfigsResponseData;
import io.cairn.wire.message.AlterPartitionRequestData;
import io.cairn.wire.message.AlterPartitionResponseData;
import io.cairn.wire.message.BrokerHeartbeatResponseData;
import io.cairn.wire.message.BrokerRegistrationResponseData;
import io.cairn.wire.message.CreatePartitionsRequestData;
import io.cairn.wire.message.CreatePartitionsResponseData;
import io.cairn.wire.message.CreateTopicsRequestData;
import io.cairn.wire.message.CreateTopicsResponseData;
import io.cairn.wire.message.IncrementalAlterConfigsRequestData;
import io.cairn.wire.message.IncrementalAlterConfigsResponseData;
import io.cairn.wire.protocol.ApiMessage;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ControllerLogicTest {

    private final ControllerLogic logic = new ControllerLogic(ControllerSettings.defaults(0));

    private MetadataImage image = MetadataImage.EMPTY;

    private <R extends ApiMessage> R run(ControllerResult<R> result) {
        image = ControllerLogic.apply(image, result.records());
        return result.response();
    }

    private void brokers(int count, String... racks) {
        for (int id = 1; id <= count; id++) {
            String rack = racks.length == 0 ? null : racks[(id - 1) % racks.length];
            BrokerRegistrationResponseData registered = run(logic.registerBroker(image,
                    TestRequests.registration(id, rack), b -> false));
            run(logic.heartbeat(image, TestRequests.heartbeat(id, registered.brokerEpoch())));
        }
    }

    private CreateTopicsResponseData.CreatableTopicResult create(String name, int partitions, int replication,
                                                                 Map<String, String> configs) {
        CreateTopicsResponseData response = handle(TestRequests.createTopic(name, partitions, replication,
                configs));
        return response.topics().get(0);
    }

    @SuppressWarnings("unchecked")
    private <R extends ApiMessage> R handle(ApiMessage request) {
        return run((ControllerResult<R>) logic.handle(image, request, b -> true));
    }

    @Test
    void registeredBrokersStartFencedAndAHeartbeatUnfencesThem() {
        // Given
        BrokerRegistrationResponseData registered = run(logic.registerBroker(image,
                TestRequests.registration(1, null), b -> false));

        // Then
        assertThat(image.broker(1).orElseThrow().fenced()).isTrue();
        run(logic.heartbeat(image, TestRequests.heartbeat(1, registered.brokerEpoch())));
        assertThat(image.broker(1).orElseThrow().fenced()).isFalse();
        assertThat(run(logic.heartbeat(image, TestRequests.heartbeat(1, registered.brokerEpoch() + 5))).errorCode())
                .isEqualTo(Errors.STALE_BROKER_EPOCH.code());
    }

    @Test
    void createTopicRejectsWithKafkasErrorCodesAndMessages() {
        // Given
        brokers(2);
        assertThat(create("ok", 1, 1, Map.of()).errorCode()).isEqualTo(Errors.NONE.code());

        // Then
        CreateTopicsResponseData.CreatableTopicResult tooMany = create("rf3", 1, 3, Map.of());
        assertThat(tooMany.errorCode()).isEqualTo(Errors.INVALID_REPLICATION_FACTOR.code());
        assertThat(tooMany.errorMessage()).isEqualTo("Unable to replicate the partition 3 time(s): The target "
                + "replication factor of 3 cannot be reached because only 2 broker(s) are registered.");
        assertThat(create("ok", 1, 1, Map.of()).errorCode()).isEqualTo(Errors.TOPIC_ALREADY_EXISTS.code());
        assertThat(create("zero", 0, 1, Map.of()).errorCode()).isEqualTo(Errors.INVALID_PARTITIONS.code());
        assertThat(create("bad/name", 1, 1, Map.of()).errorMessage()).isEqualTo("Topic name \"bad/name\" is "
                + "illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'");
        assertThat(create("o.k", 1, 1, Map.of()).errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(create("o_k", 1, 1, Map.of()).errorMessage())
                .isEqualTo("Topic 'o_k' collides with existing topic: o.k");
        CreateTopicsResponseData.CreatableTopicResult badConfig = create("cfg", 1, 1, Map.of("retention.ms", "x"));
        assertThat(badConfig.errorCode()).isEqualTo(Errors.INVALID_CONFIG.code());
        assertThat(badConfig.errorMessage())
                .isEqualTo("Invalid value x for configuration retention.ms: Not a number of type LONG");
        assertThat(create("cfg", 1, 1, Map.of("foo", "1")).errorMessage())
                .isEqualTo("Unknown topic config name: foo");
        assertThat(create("cfg", 1, 1, Map.of("cleanup.policy", "compact,delete")).errorCode())
                .isEqualTo(Errors.NONE.code());
    }

    @Test
    void anOperationOfMoreThanTenThousandRecordsIsAPolicyViolationThatWritesNothing() {
        // Given
        brokers(1);
        assertThat(create("t", 1, 1, Map.of()).errorCode()).isEqualTo(Errors.NONE.code());
        CreateTopicsRequestData threeLarge = TestRequests.createTopic("a", 4_000, 1, Map.of());
        threeLarge.topics().add(TestRequests.createTopic("b", 4_000, 1, Map.of()).topics().get(0));
        threeLarge.topics().add(TestRequests.createTopic("c", 4_000, 1, Map.of()).topics().get(0));
        CreatePartitionsRequestData grow = new CreatePartitionsRequestData().setTopics(new ArrayList<>(List.of(
                new CreatePartitionsRequestData.CreatePartitionsTopic().setName("t").setCount(Integer.MAX_VALUE)
                        .setAssignments(null))));

        // When: two billion partitions would be placed before any record was counted
        CreateTopicsResponseData.CreatableTopicResult huge = create("huge", Integer.MAX_VALUE, 1, Map.of());
        CreateTopicsResponseData three = handle(threeLarge);
        CreatePartitionsResponseData grown = handle(grow);

        // Then
        assertThat(huge.errorCode()).isEqualTo(Errors.POLICY_VIOLATION.code());
        assertThat(huge.errorMessage()).isEqualTo("Unable to perform excessively large batch operation.");
        assertThat(three.topics()).extracting(CreateTopicsResponseData.CreatableTopicResult::errorCode)
                .containsExactly(Errors.POLICY_VIOLATION.code(), Errors.POLICY_VIOLATION.code(),
                        Errors.POLICY_VIOLATION.code());
        assertThat(grown.results().get(0).errorCode()).isEqualTo(Errors.POLICY_VIOLATION.code());
        assertThat(image.topicIds().keySet()).containsExactly("t");
        assertThat(image.topic("t").orElseThrow().partitions()).hasSize(1);
    }

    @Test
    void placementSpreadsLeadersEvenlyAndPutsReplicasInDifferentRacks() {
        // Given six brokers in three racks
        brokers(6, "a", "b", "c");

        // When
        create("spread", 12, 3, Map.of());

        // Then every broker leads two partitions and every partition spans the three racks
        TopicImage topic = image.topic("spread").orElseThrow();
        Map<Integer, Integer> leaders = new HashMap<>();
        for (PartitionRegistration p : topic.partitions().values()) {
            leaders.merge(p.leader(), 1, Integer::sum);
            Set<String> racks = new HashSet<>();
            p.replicas().forEach(r -> racks.add(image.broker(r).orElseThrow().rack().orElseThrow()));
            assertThat(racks).hasSize(3);
            assertThat(p.isr()).containsExactlyElementsOf(p.replicas());
        }
        assertThat(leaders).hasSize(6).allSatisfy((broker, count) -> assertThat(count).isEqualTo(2));
    }

    @Test
    void fencingABrokerMovesItsLeadershipsToIsrMembersAndUnfencingRestoresLeaderlessPartitions() {
        // Given
        brokers(3);
        create("t", 6, 2, Map.of());
        create("single", 3, 1, Map.of());
        List<Integer> ledBy1 = new ArrayList<>();
        image.topic("t").orElseThrow().partitions().forEach((i, p) -> {
            if (p.leader() == 1) {
                ledBy1.add(i);
            }
        });
        assertThat(ledBy1).isNotEmpty();

        // When
        image = ControllerLogic.apply(image, logic.fenceExpired(image, 1));

        // Then
        assertThat(image.broker(1).orElseThrow().fenced()).isTrue();
        for (int index : ledBy1) {
            PartitionRegistration p = image.topic("t").orElseThrow().partitions().get(index);
            assertThat(p.leader()).isNotEqualTo(1).isIn(p.isr());
            assertThat(p.isr()).doesNotContain(1);
            assertThat(p.leaderEpoch()).isEqualTo(1);
        }
        image.topic("single").orElseThrow().partitions().values().stream().filter(p -> p.replicas().contains(1))
                .forEach(p -> assertThat(p.leader()).isEqualTo(PartitionRegistration.NO_LEADER));
        long epoch = image.broker(1).orElseThrow().epoch();
        run(logic.heartbeat(image, TestRequests.heartbeat(1, epoch)));
        image.topic("single").orElseThrow().partitions().values().stream().filter(p -> p.replicas().contains(1))
                .forEach(p -> assertThat(p.leader()).isEqualTo(1));
    }

    @Test
    void alterPartitionChecksLeaderAndPartitionEpochs() {
        // Given
        brokers(2);
        create("t", 1, 2, Map.of());
        TopicImage topic = image.topic("t").orElseThrow();
        PartitionRegistration p = topic.partitions().get(0);
        int leader = p.leader();
        long leaderEpoch = image.broker(leader).orElseThrow().epoch();

        // When the leader shrinks the ISR with the right epochs
        AlterPartitionResponseData ok = handle(alter(topic, leader, leaderEpoch, p.leaderEpoch(),
                p.partitionEpoch(), List.of(leader)));
        // and retries with the now stale partition epoch
        AlterPartitionResponseData stale = handle(alter(topic, leader, leaderEpoch, p.leaderEpoch(),
                p.partitionEpoch(), List.of(leader)));

        // Then
        AlterPartitionResponseData.PartitionData result = ok.topics().get(0).partitions().get(0);
        assertThat(result.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(result.isr()).containsExactly(leader);
        assertThat(result.partitionEpoch()).isEqualTo(p.partitionEpoch() + 1);
        assertThat(stale.topics().get(0).partitions().get(0).errorCode())
                .isEqualTo(Errors.INVALID_UPDATE_VERSION.code());
        AlterPartitionResponseData fenced = handle(alter(topic, leader, leaderEpoch, p.leaderEpoch() - 1,
                p.partitionEpoch() + 1, List.of(leader)));
        assertThat(fenced.topics().get(0).partitions().get(0).errorCode())
                .isEqualTo(Errors.FENCED_LEADER_EPOCH.code());
    }

    @Test
    void controlledShutdownMovesLeadershipsAwayBeforeTheBrokerIsToldToStop() {
        // Given
        brokers(3);
        create("t", 6, 3, Map.of());
        long epoch = image.broker(2).orElseThrow().epoch();
        assertThat(image.leaderships(2)).isNotEmpty();

        // When
        BrokerHeartbeatResponseData response = run(logic.heartbeat(image, TestRequests.heartbeat(2, epoch)
                .setWantShutDown(true)));

        // Then
        assertThat(image.broker(2).orElseThrow().inControlledShutdown()).isTrue();
        assertThat(image.leaderships(2)).isEmpty();
        assertThat(response.shouldShutDown()).isTrue();
        image.topic("t").orElseThrow().partitions().values()
                .forEach(p -> assertThat(p.leader()).isNotEqualTo(2).isIn(p.isr()));
    }

    @Test
    void anUncleanElectionHappensOnlyWhenTheTopicAllowsIt() {
        // Given two partitions on brokers [1, 2] whose ISR shrank to the leader, broker 1
        brokers(2);
        for (String name : List.of("clean", "unclean")) {
            CreateTopicsRequestData request = TestRequests.createTopic(name, -1, -1, name.equals("unclean")
                    ? Map.of("unclean.leader.election.enable", "true") : Map.of());
            request.topics().get(0).assignments().add(new CreateTopicsRequestData.CreatableReplicaAssignment()
                    .setPartitionIndex(0).setBrokerIds(new ArrayList<>(List.of(1, 2))));
            CreateTopicsResponseData response = handle(request);
            assertThat(response.topics().get(0).errorCode()).isEqualTo(Errors.NONE.code());
            TopicImage topic = image.topic(name).orElseThrow();
            PartitionRegistration p = topic.partitions().get(0);
            assertThat(p.leader()).isEqualTo(1);
            handle(alter(topic, 1, image.broker(1).orElseThrow().epoch(), p.leaderEpoch(), p.partitionEpoch(),
                    List.of(1)));
        }

        // When broker 1 is fenced
        image = ControllerLogic.apply(image, logic.fenceExpired(image, 1));

        // Then the clean topic has no leader and keeps its last ISR member, the unclean one elects broker 2
        PartitionRegistration clean = image.topic("clean").orElseThrow().partitions().get(0);
        assertThat(clean.leader()).isEqualTo(PartitionRegistration.NO_LEADER);
        assertThat(clean.isr()).containsExactly(1);
        PartitionRegistration unclean = image.topic("unclean").orElseThrow().partitions().get(0);
        assertThat(unclean.leader()).isEqualTo(2);
        assertThat(unclean.isr()).containsExactly(2);
    }

    @Test
    void incrementalAlterConfigsSetsDeletesAppendsAndValidatesTopicConfigs() {
        // Given
        brokers(1);
        create("t", 1, 1, Map.of("cleanup.policy", "delete"));

        // When
        IncrementalAlterConfigsResponseData ok = handle(alterConfigs("t",
                alterable("retention.ms", (byte) 0, "1000"), alterable("cleanup.policy", (byte) 2, "compact")));
        IncrementalAlterConfigsResponseData bad = handle(alterConfigs("t", alterable("retention.ms", (byte) 0,
                "-5")));
        IncrementalAlterConfigsResponseData notList = handle(alterConfigs("t", alterable("retention.ms", (byte) 2,
                "1")));
        IncrementalAlterConfigsResponseData missing = handle(alterConfigs("nope", alterable("retention.ms",
                (byte) 0, "1")));

        // Then
        assertThat(ok.responses().get(0).errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(image.configs(io.cairn.metadata.image.ConfigResource.topic("t")))
                .containsEntry("retention.ms", "1000").containsEntry("cleanup.policy", "delete,compact");
        assertThat(bad.responses().get(0).errorCode()).isEqualTo(Errors.INVALID_CONFIG.code());
        assertThat(bad.responses().get(0).errorMessage())
                .isEqualTo("Invalid value -5 for configuration retention.ms: Value must be at least -1");
        assertThat(notList.responses().get(0).errorMessage())
                .isEqualTo("Can't APPEND to key retention.ms because its type is not LIST.");
        assertThat(missing.responses().get(0).errorCode()).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
        handle(alterConfigs("t", alterable("retention.ms", (byte) 1, null)));
        assertThat(image.configs(io.cairn.metadata.image.ConfigResource.topic("t")))
                .doesNotContainKey("retention.ms");
    }

    @Test
    void legacyAlterConfigsReplacesEveryConfigOfTheResourceAndResourcesAreCheckedAsKafkaDoes() {
        // Given
        brokers(1);
        create("t", 1, 1, Map.of("cleanup.policy", "compact", "retention.ms", "5"));
        AlterConfigsRequestData replace = new AlterConfigsRequestData();
        replace.resources().add(new AlterConfigsRequestData.AlterConfigsResource().setResourceType((byte) 2)
                .setResourceName("t").setConfigs(new ArrayList<>(List.of(new AlterConfigsRequestData.AlterableConfig()
                        .setName("segment.ms").setValue("1000")))));
        for (String name : new String[] {"", "-1", "x"}) {
            replace.resources().add(new AlterConfigsRequestData.AlterConfigsResource().setResourceType((byte) 4)
                    .setResourceName(name));
        }
        replace.resources().add(new AlterConfigsRequestData.AlterConfigsResource().setResourceType((byte) 2)
                .setResourceName(""));
        replace.resources().add(new AlterConfigsRequestData.AlterConfigsResource().setResourceType((byte) 9)
                .setResourceName("g"));

        // When
        AlterConfigsResponseData response = handle(replace);

        // Then
        assertThat(image.configs(io.cairn.metadata.image.ConfigResource.topic("t")))
                .containsExactly(Map.entry("segment.ms", "1000"));
        assertThat(response.responses()).extracting(r -> r.errorCode() == 0 ? "ok" : r.errorMessage())
                .containsExactly("ok", "ok", "Invalid negative broker ID.",
                        "Unable to parse broker name as a base 10 number.", "Default topic resources are not allowed.",
                        "Unknown resource type 9");
    }

    @Test
    void throttledReplicaListsAreValidatedAsKafkaDoes() {
        // Given
        brokers(1);
        create("t", 1, 1, Map.of());

        // When
        IncrementalAlterConfigsResponseData all = handle(alterConfigs("t",
                alterable("leader.replication.throttled.replicas", (byte) 0, "*")));
        IncrementalAlterConfigsResponseData bad = handle(alterConfigs("t",
                alterable("follower.replication.throttled.replicas", (byte) 0, "0-1")));

        // Then
        assertThat(all.responses().get(0).errorCode()).isZero();
        // Kafka names the parsed list, [0-1] (ConfigTableTest compares the messages with Kafka's validator)
        assertThat(bad.responses().get(0).errorMessage()).isEqualTo("Invalid value [0-1] for configuration "
                + "follower.replication.throttled.replicas: follower.replication.throttled.replicas must be the "
                + "literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],"
                + "[partitionId]:[brokerId],...");
    }

    private static IncrementalAlterConfigsRequestData.AlterableConfig alterable(String name, byte op, String value) {
        return new IncrementalAlterConfigsRequestData.AlterableConfig().setName(name).setConfigOperation(op)
                .setValue(value);
    }

    private static IncrementalAlterConfigsRequestData alterConfigs(String topic,
                                                                   IncrementalAlterConfigsRequestData.AlterableConfig...
                                                                           configs) {
        List<IncrementalAlterConfigsRequestData.AlterConfigsResource> resources = new ArrayList<>();
        resources.add(new IncrementalAlterConfigsRequestData.AlterConfigsResource().setResourceType((byte) 2)
                .setResourceName(topic).setConfigs(new ArrayList<>(List.of(configs))));
        return new IncrementalAlterConfigsRequestData().setResources(resources);
    }

    @Test
    void producerIdBlocksDoNotOverlap() {
        // Given
        brokers(1);
        long epoch = image.broker(1).orElseThrow().epoch();
        AllocateProducerIdsRequestData request = new AllocateProducerIdsRequestData().setBrokerId(1)
                .setBrokerEpoch(epoch);

        // When
        AllocateProducerIdsResponseData first = run(logic.allocateProducerIds(image, request));
        AllocateProducerIdsResponseData second = run(logic.allocateProducerIds(image, request));

        // Then
        assertThat(first.producerIdStart()).isZero();
        assertThat(second.producerIdStart()).isEqualTo(first.producerIdStart() + first.producerIdLen());
        assertThat(run(logic.allocateProducerIds(image, request.setBrokerEpoch(epoch + 1))).errorCode())
                .isEqualTo(Errors.STALE_BROKER_EPOCH.code());
    }

    private static AlterPartitionRequestData alter(TopicImage topic, int broker, long brokerEpoch, int leaderEpoch,
                                                   int partitionEpoch, List<Integer> isr) {
        List<AlterPartitionRequestData.BrokerState> states = new ArrayList<>();
        isr.forEach(b -> states.add(new AlterPartitionRequestData.BrokerState().setBrokerId(b).setBrokerEpoch(-1)));
        List<AlterPartitionRequestData.PartitionData> partitions = new ArrayList<>();
        partitions.add(new AlterPartitionRequestData.PartitionData().setPartitionIndex(0).setLeaderEpoch(leaderEpoch)
                .setPartitionEpoch(partitionEpoch).setNewIsrWithEpochs(states));
        List<AlterPartitionRequestData.TopicData> topics = new ArrayList<>();
        topics.add(new AlterPartitionRequestData.TopicData().setTopicId(topic.id()).setPartitions(partitions));
        return new AlterPartitionRequestData().setBrokerId(broker).setBrokerEpoch(brokerEpoch).setTopics(topics);
    }

    /** A quota of {@code budget} partitions in all: Kafka's strict or permissive rule over a plain count. */
    private static final class BudgetQuotas implements ControllerMutationQuotas {
        private int budget;
        private final List<String> asked = new ArrayList<>();

        BudgetQuotas(int budget) {
            this.budget = budget;
        }

        @Override
        public MutationQuota newQuota(String user, String clientId, boolean strict) {
            asked.add(user + "/" + clientId + "/" + (strict ? "strict" : "permissive"));
            return new MutationQuota() {
                private int throttle;

                @Override
                public boolean record(int partitions) {
                    if (strict && budget < 0) {
                        throttle = -budget * 1000;
                        return false;
                    }
                    budget -= partitions;
                    if (!strict && budget < 0) {
                        throttle = -budget * 1000;
                    }
                    return true;
                }

                @Override
                public int throttleTimeMs() {
                    return throttle;
                }
            };
        }
    }

    @SuppressWarnings("unchecked")
    private <R extends ApiMessage> R forward(ApiMessage request, short version, ControllerMutationQuotas quotas) {
        ForwardedRequest forwarded = ForwardedRequest.unwrap(ForwardedRequest.wrap(request, version, "app",
                "User:alice"));
        return run((ControllerResult<R>) logic.handleForwarded(image, forwarded, 0L, quotas));
    }

    @Test
    void forwardedTopicCommandsCountPartitionsAgainstTheClientsMutationQuota() {
        // Given: a quota of 3 partitions
        brokers(1);
        BudgetQuotas quotas = new BudgetQuotas(3);
        CreateTopicsRequestData request = TestRequests.createTopic("a", 4, 1, Map.of());
        request.topics().addAll(TestRequests.createTopic("b", 1, 1, Map.of()).topics());
        request.topics().addAll(TestRequests.createTopic("c", -1, 1, Map.of("no.such.config", "1")).topics());

        // When: strict CreateTopics v6 of a (4 partitions), b and an invalid c; then a permissive v5 of d
        CreateTopicsResponseData strict = forward(request, (short) 6, quotas);
        CreateTopicsResponseData permissive = forward(TestRequests.createTopic("d", 2, 1, Map.of()), (short) 5,
                quotas);

        // Then: a takes the quota below 0, b is refused with Kafka's error, c fails its own check first
        assertThat(strict.topics()).extracting(t -> t.name() + ":" + Errors.forCode(t.errorCode()))
                .containsExactly("a:NONE", "b:THROTTLING_QUOTA_EXCEEDED", "c:INVALID_CONFIG");
        assertThat(strict.topics().get(1).errorMessage()).isEqualTo("The throttling quota has been exceeded.");
        assertThat(strict.throttleTimeMs()).isEqualTo(1_000);
        assertThat(image.topic("a")).isPresent();
        assertThat(image.topic("b")).isEmpty();
        assertThat(permissive.topics().get(0).errorCode()).isZero();
        assertThat(permissive.throttleTimeMs()).isEqualTo(3_000);
        assertThat(image.topic("d")).isPresent();
        assertThat(quotas.asked).containsExactly("alice/app/strict", "alice/app/permissive");
    }
}
