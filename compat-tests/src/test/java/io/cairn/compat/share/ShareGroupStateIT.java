package io.cairn.compat.share;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.RawKafkaClient;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.ApiVersionsRequestData;
import io.cairn.wire.message.ApiVersionsResponseData;
import io.cairn.wire.message.DeleteShareGroupStateRequestData;
import io.cairn.wire.message.DeleteShareGroupStateResponseData;
import io.cairn.wire.message.FindCoordinatorRequestData;
import io.cairn.wire.message.FindCoordinatorResponseData;
import io.cairn.wire.message.InitializeShareGroupStateRequestData;
import io.cairn.wire.message.InitializeShareGroupStateResponseData;
import io.cairn.wire.message.ReadShareGroupStateRequestData;
import io.cairn.wire.message.ReadShareGroupStateResponseData;
import io.cairn.wire.message.ReadShareGroupStateSummaryRequestData;
import io.cairn.wire.message.ReadShareGroupStateSummaryResponseData;
import io.cairn.wire.message.WriteShareGroupStateRequestData;
import io.cairn.wire.message.WriteShareGroupStateResponseData;
import io.cairn.wire.protocol.Uuid;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The share coordinator's state RPCs (KIP-932) sent raw, as a share-partition leader and the group coordinator send
 * them, to a real broker: FindCoordinator v6 share keys, InitializeShareGroupState, WriteShareGroupState,
 * ReadShareGroupState (with its leader-epoch fencing), ReadShareGroupStateSummary and DeleteShareGroupState. The
 * state survives a broker restart: it is reloaded from {@code __share_group_state}. Kafka 4.1.1 serves these APIs to
 * any client allowed CLUSTER_ACTION (no authorizer here), whatever share.version says, so both brokers run it.
 */
@Timeout(300)
@ExtendWith(BrokerLogsExtension.class)
class ShareGroupStateIT {

    private static final Duration TIMEOUT = Duration.ofSeconds(15);
    private static final String GROUP = "share-state-it";
    private static final byte AVAILABLE = 0;
    private static final byte ACKNOWLEDGED = 2;

    @ParameterizedTest
    @EnumSource(BrokerKind.class)
    void stateIsKeptFencedAndReloadedAfterARestart(BrokerKind kind) throws Exception {
        BrokerProcess broker = kind.start();
        try {
            // Given a topic with two partitions and the share coordinator found for them
            Uuid topicId = createTopic(broker, "share-state-topic");
            try (RawKafkaClient client = RawKafkaClient.connect(broker)) {
                assertAdvertised(client);
                awaitCoordinator(client, GROUP + ":" + topicId + ":0");
                FindCoordinatorResponseData bad = client.sendAndReceive(new FindCoordinatorRequestData()
                    .setKeyType((byte) 2).setCoordinatorKeys(List.of("no-colons-here")), (short) 6, TIMEOUT);
                assertThat(bad.coordinators().get(0).errorCode()).isEqualTo(Errors.INVALID_REQUEST.code());

                // When the group coordinator initializes both share-partitions (retrying, as Kafka's persister
                // does, while a __share_group_state partition is not loaded yet: NOT_COORDINATOR or
                // COORDINATOR_LOAD_IN_PROGRESS)
                Awaitility.await().atMost(60, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(500)).until(() ->
                    initialize(client, topicId).stream().allMatch(code -> code == Errors.NONE.code()));

                // And the leader of partition 0 writes what it delivered
                assertThat(write(client, GROUP, topicId, 0, 1, 5L,
                    batch(5L, 9L, ACKNOWLEDGED, 1), batch(10L, 14L, AVAILABLE, 2))).isEqualTo(Errors.NONE.code());

                // Then a write for a share-partition nobody initialized is refused
                assertThat(write(client, "other-group", topicId, 0, 1, 0L)).isEqualTo(Errors.INVALID_REQUEST.code());

                // And a read answers the state written
                ReadShareGroupStateResponseData.PartitionResult read = read(client, topicId, 0, 1);
                assertState(read);

                // And a newer leader epoch fences the older leader
                assertThat(read(client, topicId, 0, 3).errorCode()).isEqualTo(Errors.NONE.code());
                assertThat(write(client, GROUP, topicId, 0, 2, -1L)).isEqualTo(Errors.FENCED_LEADER_EPOCH.code());

                // And the summary and a delete
                ReadShareGroupStateSummaryResponseData.PartitionResult summary = summary(client, topicId, 0);
                assertThat(summary.errorCode()).isEqualTo(Errors.NONE.code());
                assertThat(summary.startOffset()).isEqualTo(5L);
                assertThat(summary.stateEpoch()).isEqualTo(1);
                assertThat(summary.leaderEpoch()).isEqualTo(3);
                DeleteShareGroupStateResponseData deleted = client.sendAndReceive(new DeleteShareGroupStateRequestData()
                    .setGroupId(GROUP).setTopics(List.of(new DeleteShareGroupStateRequestData.DeleteStateData()
                        .setTopicId(topicId).setPartitions(List.of(
                            new DeleteShareGroupStateRequestData.PartitionData().setPartition(1))))),
                    (short) 0, TIMEOUT);
                assertThat(deleted.results().get(0).partitions().get(0).errorCode()).isEqualTo(Errors.NONE.code());
                assertThat(summary(client, topicId, 1).startOffset()).isEqualTo(-1L);
            }

            // When the broker restarts
            broker.restart();

            // Then the state is reloaded from __share_group_state, fencing included
            try (RawKafkaClient client = RawKafkaClient.connect(broker)) {
                awaitCoordinator(client, GROUP + ":" + topicId + ":0");
                Awaitility.await().atMost(60, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(500)).until(() ->
                    read(client, topicId, 0, 3).errorCode() == Errors.NONE.code());
                assertState(read(client, topicId, 0, 3));
                assertThat(write(client, GROUP, topicId, 0, 2, -1L)).isEqualTo(Errors.FENCED_LEADER_EPOCH.code());
                Awaitility.await().atMost(60, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(500)).until(() ->
                    summary(client, topicId, 1).errorCode() == Errors.NONE.code());
                assertThat(summary(client, topicId, 1).startOffset()).as("deleted before the restart")
                    .isEqualTo(-1L);
            }
        } finally {
            broker.close();
        }
    }

    private static void assertState(ReadShareGroupStateResponseData.PartitionResult read) {
        assertThat(read.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(read.stateEpoch()).isEqualTo(1);
        assertThat(read.startOffset()).isEqualTo(5L);
        assertThat(read.stateBatches()).extracting(b -> List.of(b.firstOffset(), b.lastOffset(),
                (long) b.deliveryState(), (long) b.deliveryCount()))
            .containsExactly(List.of(5L, 9L, 2L, 1L), List.of(10L, 14L, 0L, 2L));
    }

    private static void assertAdvertised(RawKafkaClient client) {
        ApiVersionsResponseData versions = client.sendAndReceive(new ApiVersionsRequestData()
            .setClientSoftwareName("share-state-it").setClientSoftwareVersion("1.0"), (short) 3, TIMEOUT);
        for (ApiKey key : List.of(ApiKey.INITIALIZE_SHARE_GROUP_STATE, ApiKey.READ_SHARE_GROUP_STATE,
                ApiKey.WRITE_SHARE_GROUP_STATE, ApiKey.DELETE_SHARE_GROUP_STATE,
                ApiKey.READ_SHARE_GROUP_STATE_SUMMARY)) {
            assertThat(versions.apiKeys()).as("%s advertised", key).anySatisfy(api -> {
                assertThat(api.apiKey()).isEqualTo(key.id());
                assertThat(api.minVersion()).isZero();
                assertThat(api.maxVersion()).isZero();
            });
        }
        assertThat(versions.apiKeys()).anySatisfy(api -> {
            assertThat(api.apiKey()).isEqualTo(ApiKey.FIND_COORDINATOR.id());
            assertThat(api.maxVersion()).isEqualTo((short) 6);
        });
    }

    /** Until the share key's coordinator is known (the first lookup creates __share_group_state). */
    private static void awaitCoordinator(RawKafkaClient client, String key) {
        Awaitility.await().atMost(60, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(500)).until(() -> {
            FindCoordinatorResponseData found = client.sendAndReceive(new FindCoordinatorRequestData()
                .setKeyType((byte) 2).setCoordinatorKeys(List.of(key)), (short) 6, TIMEOUT);
            FindCoordinatorResponseData.Coordinator coordinator = found.coordinators().get(0);
            return coordinator.errorCode() == Errors.NONE.code() && coordinator.nodeId() == 1
                && coordinator.key().equals(key);
        });
    }

    /** Initializes partitions 0 and 1 at state epoch 1 from offset 0; the partitions' error codes. */
    private static List<Short> initialize(RawKafkaClient client, Uuid topicId) {
        InitializeShareGroupStateResponseData init = client.sendAndReceive(new InitializeShareGroupStateRequestData()
            .setGroupId(GROUP).setTopics(List.of(new InitializeShareGroupStateRequestData.InitializeStateData()
                .setTopicId(topicId).setPartitions(List.of(
                    new InitializeShareGroupStateRequestData.PartitionData().setPartition(0).setStateEpoch(1)
                        .setStartOffset(0L),
                    new InitializeShareGroupStateRequestData.PartitionData().setPartition(1).setStateEpoch(1)
                        .setStartOffset(0L))))), (short) 0, TIMEOUT);
        assertThat(init.results()).hasSize(1);
        return init.results().get(0).partitions().stream()
            .map(InitializeShareGroupStateResponseData.PartitionResult::errorCode).toList();
    }

    private static WriteShareGroupStateRequestData.StateBatch batch(long first, long last, byte state, int count) {
        return new WriteShareGroupStateRequestData.StateBatch().setFirstOffset(first).setLastOffset(last)
            .setDeliveryState(state).setDeliveryCount((short) count);
    }

    private static short write(RawKafkaClient client, String group, Uuid topicId, int partition, int leaderEpoch,
                               long startOffset, WriteShareGroupStateRequestData.StateBatch... batches) {
        WriteShareGroupStateResponseData response = client.sendAndReceive(new WriteShareGroupStateRequestData()
            .setGroupId(group).setTopics(List.of(new WriteShareGroupStateRequestData.WriteStateData()
                .setTopicId(topicId).setPartitions(List.of(new WriteShareGroupStateRequestData.PartitionData()
                    .setPartition(partition).setStateEpoch(1).setLeaderEpoch(leaderEpoch).setStartOffset(startOffset)
                    .setStateBatches(List.of(batches)))))), (short) 0, TIMEOUT);
        return response.results().get(0).partitions().get(0).errorCode();
    }

    private static ReadShareGroupStateResponseData.PartitionResult read(RawKafkaClient client, Uuid topicId,
                                                                       int partition, int leaderEpoch) {
        ReadShareGroupStateResponseData response = client.sendAndReceive(new ReadShareGroupStateRequestData()
            .setGroupId(GROUP).setTopics(List.of(new ReadShareGroupStateRequestData.ReadStateData()
                .setTopicId(topicId).setPartitions(List.of(new ReadShareGroupStateRequestData.PartitionData()
                    .setPartition(partition).setLeaderEpoch(leaderEpoch))))), (short) 0, TIMEOUT);
        return response.results().get(0).partitions().get(0);
    }

    private static ReadShareGroupStateSummaryResponseData.PartitionResult summary(RawKafkaClient client, Uuid topicId,
                                                                                 int partition) {
        ReadShareGroupStateSummaryResponseData response = client.sendAndReceive(
            new ReadShareGroupStateSummaryRequestData().setGroupId(GROUP).setTopics(List.of(
                new ReadShareGroupStateSummaryRequestData.ReadStateSummaryData().setTopicId(topicId)
                    .setPartitions(List.of(new ReadShareGroupStateSummaryRequestData.PartitionData()
                        .setPartition(partition).setLeaderEpoch(0))))), (short) 0, TIMEOUT);
        return response.results().get(0).partitions().get(0);
    }

    private static Uuid createTopic(BrokerProcess broker, String name) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                broker.bootstrapServers()))) {
            admin.createTopics(List.of(new NewTopic(name, 2, (short) 1))).all().get(30, TimeUnit.SECONDS);
            return Uuid.fromString(admin.describeTopics(List.of(name)).allTopicNames().get(30, TimeUnit.SECONDS)
                .get(name).topicId().toString());
        }
    }
}
