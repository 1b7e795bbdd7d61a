package io.cairn.compat.data;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.broker.txn.markers.TransactionMarkerChannel;
import io.cairn.log.Time;
import io.cairn.metadata.image.BrokerEndpoint;
import io.cairn.metadata.image.BrokerRegistration;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicImage;
import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.CairnProcess;
import io.cairn.testkit.KafkaReferenceProcess;
import io.cairn.testkit.RawKafkaClient;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.InitProducerIdRequestData;
import io.cairn.wire.message.InitProducerIdResponseData;
import io.cairn.wire.message.ProduceResponseData;
import io.cairn.wire.protocol.Uuid;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The partition side of transactions end to end, with Cairn's marker channel ({@link TransactionMarkerChannel}) in
 * the coordinator's place: transactional batches produced raw (verification off, so no coordinator is needed), then
 * ABORT and COMMIT markers written through WriteTxnMarkers to the leader. Against both brokers: a read_committed
 * stock consumer sees only the committed transaction and the last stable offset reaches the log end; a marker of an
 * older coordinator epoch is TRANSACTION_COORDINATOR_FENCED and leaves its transaction open; DescribeProducers shows
 * the producer's coordinator epoch and no open transaction at the end. On three nodes, a COMMIT marker whose leader
 * is killed first follows the partition to the new leader (the channel retries with the image the admin client
 * reports), which ends the transaction it replicated.
 */
@Timeout(180)
@ExtendWith(BrokerLogsExtension.class)
class TransactionMarkersIT {

    private static final String LISTENER = "PLAINTEXT";
    private static final String VERIFICATION = "transaction.partition.verification.enable";
    private static final short INIT_PRODUCER_ID_VERSION = 4;

    private static BrokerProcess start(BrokerKind kind) {
        BrokerProcess broker = kind == BrokerKind.CAIRN
                ? CairnProcess.builder().config(VERIFICATION, "false").build()
                : KafkaReferenceProcess.builder().config(VERIFICATION, "false").build();
        try {
            broker.start();
            return broker;
        } catch (RuntimeException e) {
            broker.close();
            throw e;
        }
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.data.DataClients#kinds")
    void markersEndTransactionsForReadCommittedConsumersAndAnOlderCoordinatorIsFenced(BrokerKind kind)
            throws Exception {
        try (BrokerProcess broker = start(kind)) {
            // Given
            String topic = DataClients.uniqueTopic("markers");
            DataClients.createTopic(broker, topic, 1, Map.of());
            TopicPartition tp = new TopicPartition(topic, 0);
            io.cairn.metadata.image.TopicPartition marked = new io.cairn.metadata.image.TopicPartition(topic, 0);
            InitProducerIdResponseData producer;
            Throwable fenced;
            try (RawKafkaClient client = RawKafkaClient.connect(broker);
                 TransactionMarkerChannel channel = TransactionMarkerChannel.create(99, imageOf(broker, topic),
                         Time.SYSTEM, new TransactionMarkerChannel.Config(LISTENER, 100L, 1_000, 40_000))) {
                channel.start();
                producer = initProducerId(client);
                long id = producer.producerId();
                short epoch = producer.producerEpoch();

                // When
                assertThat(produce(client, topic, id, epoch, 0, "a1", "a2").errorCode()).isZero();
                channel.writeMarkers("it", id, epoch, false, 0, List.of(marked)).toCompletableFuture()
                        .get(60, TimeUnit.SECONDS);
                assertThat(produce(client, topic, id, epoch, 2, "b1").errorCode()).isZero();
                channel.writeMarkers("it", id, epoch, true, 1, List.of(marked)).toCompletableFuture()
                        .get(60, TimeUnit.SECONDS);
                assertThat(produce(client, topic, id, epoch, 3, "c1").errorCode()).isZero();
                fenced = channel.writeMarkers("it", id, epoch, true, 0, List.of(marked)).toCompletableFuture()
                        .handle((ok, failure) -> failure).get(60, TimeUnit.SECONDS);
                channel.writeMarkers("it", id, epoch, false, 1, List.of(marked)).toCompletableFuture()
                        .get(60, TimeUnit.SECONDS);
            }

            // Then
            assertThat(fenced).isNotNull();
            assertThat(Errors.forException(fenced instanceof CompletionException ? fenced.getCause() : fenced))
                    .isEqualTo(Errors.TRANSACTION_COORDINATOR_FENCED);
            assertThat(values(broker, tp, "read_committed")).containsExactly("b1");
            assertThat(lastStableOffset(broker, tp)).isEqualTo(7L);
            assertThat(values(broker, tp, "read_uncommitted")).containsExactly("a1", "a2", "b1", "c1");
            try (Admin admin = DataClients.admin(broker)) {
                List<ProducerState> states = admin.describeProducers(List.of(tp)).partitionResult(tp)
                        .get(DataClients.TIMEOUT_S, TimeUnit.SECONDS).activeProducers();
                assertThat(states).singleElement().satisfies(s -> {
                    assertThat(s.producerId()).isEqualTo(producer.producerId());
                    assertThat(s.coordinatorEpoch()).isEqualTo(OptionalInt.of(1));
                    assertThat(s.currentTransactionStartOffset()).isEqualTo(OptionalLong.empty());
                });
            }
        }
    }

    /** One broker and the topic's one partition as a metadata image, for the channel's routing. */
    private static Supplier<MetadataImage> imageOf(BrokerProcess broker, String topic) throws Exception {
        try (Admin admin = DataClients.admin(broker)) {
            MetadataImage image = image(admin, topic);
            return () -> image;
        }
    }

    /**
     * The cluster as the admin client sees it now, as a metadata image: every live broker on {@value #LISTENER}, the
     * topic's partition 0 with its leader (none while an election is pending) and ISR.
     */
    private static MetadataImage image(Admin admin, String topic) throws Exception {
        TopicDescription description = admin.describeTopics(List.of(topic)).allTopicNames()
                .get(DataClients.TIMEOUT_S, TimeUnit.SECONDS).get(topic);
        Map<Integer, BrokerRegistration> brokers = new HashMap<>();
        for (Node node : admin.describeCluster().nodes().get(DataClients.TIMEOUT_S, TimeUnit.SECONDS)) {
            brokers.put(node.id(), new BrokerRegistration(node.id(), new Uuid(node.id(), 1), 1L,
                    List.of(new BrokerEndpoint(LISTENER, node.host(), node.port(), (short) 0)), Optional.empty(),
                    false, false));
        }
        TopicPartitionInfo partition = description.partitions().get(0);
        int leader = partition.leader() == null || partition.leader().isEmpty() ? -1 : partition.leader().id();
        Uuid id = new Uuid(description.topicId().getMostSignificantBits(),
                description.topicId().getLeastSignificantBits());
        TopicImage image = new TopicImage(topic, id, Map.of(0, new PartitionRegistration(
                partition.replicas().stream().map(Node::id).toList(), partition.isr().stream().map(Node::id).toList(),
                leader, 0, 0)));
        return new MetadataImage(1L, "it", -1, 1L, brokers, Map.of(id, image), Map.of(topic, id), Map.of(), 0L, 0L,
                Map.of(), Map.of(), Map.of());
    }

    @Tag("faults")
    @ParameterizedTest
    @MethodSource("io.cairn.compat.data.DataClients#kinds")
    void aCommitMarkerFollowsThePartitionToItsNewLeaderWhenTheOldOneDies(BrokerKind kind) throws Exception {
        try (BrokerCluster cluster = BrokerCluster.create(kind, 3, Map.of(VERIFICATION, "false"));
             Admin admin = clusterAdmin(cluster)) {
            // Given: a transaction replicated to all three replicas of the partition
            cluster.start();
            String topic = DataClients.uniqueTopic("markers-failover");
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 3).configs(Map.of("min.insync.replicas",
                    "2")))).all().get(DataClients.TIMEOUT_S, TimeUnit.SECONDS);
            int leader = await().atMost(DataClients.TIMEOUT).ignoreExceptions()
                    .until(() -> image(admin, topic).partition(new io.cairn.metadata.image.TopicPartition(topic, 0))
                            .map(p -> p.isr().size() == 3 ? p.leader() : -1).orElse(-1), id -> id >= 0);
            BrokerProcess leaderNode = cluster.node(leader);
            AtomicReference<MetadataImage> last = new AtomicReference<>(image(admin, topic));
            Supplier<MetadataImage> current = () -> {
                try {
                    last.set(image(admin, topic));
                } catch (Exception e) {
                    // Keep the last image while the admin client cannot answer (an election is running).
                }
                return last.get();
            };
            InitProducerIdResponseData producer;
            try (RawKafkaClient client = RawKafkaClient.connect(leaderNode)) {
                producer = initProducerId(client);
                assertThat(produce(client, topic, producer.producerId(), producer.producerEpoch(), 0, "x1", "x2")
                        .errorCode()).isZero();
            }
            io.cairn.metadata.image.TopicPartition marked = new io.cairn.metadata.image.TopicPartition(topic, 0);
            try (TransactionMarkerChannel channel = TransactionMarkerChannel.create(99, current, Time.SYSTEM,
                    new TransactionMarkerChannel.Config(LISTENER, 100L, 1_000, 40_000))) {
                channel.start();

                // When: the leader dies before the marker is written
                leaderNode.kill();
                channel.writeMarkers("it", producer.producerId(), producer.producerEpoch(), true, 0, List.of(marked))
                        .toCompletableFuture().get(120, TimeUnit.SECONDS);
            }

            // Then
            BrokerProcess survivor = cluster.nodes().stream().filter(n -> n != leaderNode).findFirst().orElseThrow();
            assertThat(values(survivor, new TopicPartition(topic, 0), "read_committed")).containsExactly("x1", "x2");
        }
    }

    private static Admin clusterAdmin(BrokerCluster cluster) {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "10000");
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000");
        return Admin.create(props);
    }

    private static InitProducerIdResponseData initProducerId(RawKafkaClient client) {
        return await().atMost(DataClients.TIMEOUT).pollInterval(Duration.ofMillis(100))
                .until(() -> DataClients.<InitProducerIdResponseData>call(client, new InitProducerIdRequestData()
                        .setTransactionalId(null).setTransactionTimeoutMs(60_000).setProducerId(-1)
                        .setProducerEpoch((short) -1), INIT_PRODUCER_ID_VERSION), r -> r.errorCode() == 0);
    }

    private static ProduceResponseData.PartitionProduceResponse produce(RawKafkaClient client, String topic,
            long producerId, short epoch, int sequence, String... values) {
        SimpleRecord[] records = new SimpleRecord[values.length];
        for (int i = 0; i < values.length; i++) {
            records[i] = new SimpleRecord(System.currentTimeMillis(), null, values[i].getBytes(StandardCharsets.UTF_8));
        }
        ByteBuffer buffer = MemoryRecords.withTransactionalRecords(Compression.NONE, producerId, epoch, sequence,
                records).buffer();
        byte[] bytes = new byte[buffer.remaining()];
        buffer.get(bytes);
        ProduceResponseData response = DataClients.call(client, DataClients.produceRequest(topic, 0, (short) -1,
                bytes).setTransactionalId("it"), DataClients.PRODUCE_VERSION);
        return DataClients.onlyPartition(response);
    }

    private static long lastStableOffset(BrokerProcess broker, TopicPartition tp) {
        try (KafkaConsumer<byte[], byte[]> consumer = DataClients.consumer(broker,
                Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"))) {
            return consumer.endOffsets(List.of(tp), DataClients.TIMEOUT).get(tp);
        }
    }

    /** Every value a consumer of {@code isolation} reads up to its end offset (the LSO for read_committed). */
    private static List<String> values(BrokerProcess broker, TopicPartition tp, String isolation) {
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = DataClients.consumer(broker,
                Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation))) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long end = consumer.endOffsets(List.of(tp), DataClients.TIMEOUT).get(tp);
            await().atMost(DataClients.TIMEOUT).until(() -> {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                    values.add(new String(record.value(), StandardCharsets.UTF_8));
                }
                return consumer.position(tp) >= end;
            });
        }
        return values;
    }
}
