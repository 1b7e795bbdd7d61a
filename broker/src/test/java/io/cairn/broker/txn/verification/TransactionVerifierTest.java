package io.cairn.broker.txn.verification;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.isr.client.SourceBroker;
import io.cairn.metadata.image.BrokerEndpoint;
import io.cairn.metadata.image.BrokerRegistration;
import io.cairn.metadata.image.ConfigResource;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicImage;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.error.UnsupportedVersionException;
import io.cairn.wire.message.AddPartitionsToTxnRequestData;
import io.cairn.wire.message.AddPartitionsToTxnRequestData.AddPartitionsToTxnTransaction;
import io.cairn.wire.message.AddPartitionsToTxnResponseData;
import io.cairn.wire.message.AddPartitionsToTxnResponseData.AddPartitionsToTxnPartitionResult;
import io.cairn.wire.message.AddPartitionsToTxnResponseData.AddPartitionsToTxnResult;
import io.cairn.wire.message.AddPartitionsToTxnResponseData.AddPartitionsToTxnTopicResult;
import io.cairn.wire.protocol.Uuid;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The verifier against a coordinator answering from memory: routing, batching and Kafka's error mapping. */
@Timeout(30)
class TransactionVerifierTest {

    private static final String LISTENER = "REPLICATION";
    private static final TopicPartition T0 = new TopicPartition("t", 0);
    private static final TopicPartition T1 = new TopicPartition("t", 1);

    /** What the fake coordinator does with the next request: answer, or throw. */
    private final BlockingQueue<Object> answers = new LinkedBlockingQueue<>();
    private final BlockingQueue<AddPartitionsToTxnRequestData> requests = new LinkedBlockingQueue<>();
    private volatile MetadataImage image = image(1);
    private TransactionVerifier verifier;

    private final VerificationTransport coordinator = new VerificationTransport() {
        @Override
        public AddPartitionsToTxnResponseData send(SourceBroker to, AddPartitionsToTxnRequestData request)
                throws IOException {
            requests.add(request);
            Object next;
            try {
                next = answers.poll(20, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                throw new IOException(e);
            }
            if (next instanceof IOException io) {
                throw io;
            }
            if (next instanceof RuntimeException e) {
                throw e;
            }
            return (AddPartitionsToTxnResponseData) next;
        }

        @Override
        public void close() {
        }
    };

    /** Broker 1 and 2 on the listener; {@code __transaction_state} with one partition led by {@code leader}. */
    private static MetadataImage image(int leader) {
        Map<Integer, BrokerRegistration> brokers = Map.of(
                1, new BrokerRegistration(1, new Uuid(1, 1), 1L, List.of(new BrokerEndpoint(LISTENER, "h1", 1,
                        (short) 0)), Optional.empty(), false, false),
                2, new BrokerRegistration(2, new Uuid(2, 2), 1L, List.of(new BrokerEndpoint(LISTENER, "h2", 2,
                        (short) 0)), Optional.empty(), true, false));
        Uuid id = new Uuid(0, 9);
        TopicImage topic = new TopicImage(TransactionVerifier.TRANSACTION_STATE_TOPIC, id,
                Map.of(0, new PartitionRegistration(List.of(1, 2), List.of(1, 2), leader, 0, 0)));
        return new MetadataImage(1L, "c", 1, 1L, brokers, Map.of(id, topic),
                Map.of(TransactionVerifier.TRANSACTION_STATE_TOPIC, id), Map.of(), 0L, 0L, Map.of(), Map.of(), Map.of());
    }

    private void start() {
        verifier = new TransactionVerifier(() -> image, LISTENER, coordinator);
        verifier.start();
    }

    @AfterEach
    void stop() {
        if (verifier != null) {
            verifier.close();
        }
    }

    /** An answer naming every partition of the request's transactions with {@code error}. */
    private static AddPartitionsToTxnResponseData answer(AddPartitionsToTxnRequestData request, Errors error) {
        AddPartitionsToTxnResponseData response = new AddPartitionsToTxnResponseData();
        for (AddPartitionsToTxnTransaction txn : request.transactions()) {
            AddPartitionsToTxnResult result = new AddPartitionsToTxnResult().setTransactionalId(txn.transactionalId());
            txn.topics().forEach(t -> {
                AddPartitionsToTxnTopicResult topic = new AddPartitionsToTxnTopicResult().setName(t.name());
                t.partitions().forEach(p -> topic.resultsByPartition().add(new AddPartitionsToTxnPartitionResult()
                        .setPartitionIndex(p).setPartitionErrorCode(error.code())));
                result.topicResults().add(topic);
            });
            response.resultsByTransaction().add(result);
        }
        return response;
    }

    private static Map<TopicPartition, Errors> get(CompletableFuture<Map<TopicPartition, Errors>> f)
            throws Exception {
        return f.get(20, TimeUnit.SECONDS);
    }

    @Test
    void aVerifiedTransactionHasNoErrorsAndTheRequestIsVerifyOnly() throws Exception {
        // Given
        start();
        CompletableFuture<Map<TopicPartition, Errors>> result = verifier.verify("a", 5L, (short) 2, List.of(T0, T1),
                true);
        AddPartitionsToTxnRequestData request = requests.poll(20, TimeUnit.SECONDS);

        // When
        answers.add(answer(request, Errors.NONE));

        // Then
        assertThat(get(result)).isEmpty();
        assertThat(request.transactions()).singleElement().satisfies(t -> {
            assertThat(t.transactionalId()).isEqualTo("a");
            assertThat(t.producerId()).isEqualTo(5L);
            assertThat(t.producerEpoch()).isEqualTo((short) 2);
            assertThat(t.verifyOnly()).isTrue();
            assertThat(t.topics()).singleElement().satisfies(topic -> assertThat(topic.partitions())
                    .containsExactly(0, 1));
        });
    }

    @Test
    void anAddForATransactionVersion2ProducerIsNotVerifyOnlyAndItsFenceIsMapped() throws Exception {
        // Given: Produce v12+ (KIP-890 part 2) has the leader add the partition
        start();
        CompletableFuture<Map<TopicPartition, Errors>> added = verifier.verifyOrAdd("a", 5L, (short) 2, List.of(T0),
                true, true);
        AddPartitionsToTxnRequestData request = requests.poll(20, TimeUnit.SECONDS);

        // When: the coordinator's epoch moved on (a late write of a finished transaction)
        answers.add(answer(request, Errors.PRODUCER_FENCED));

        // Then
        assertThat(request.transactions()).singleElement().satisfies(t -> assertThat(t.verifyOnly()).isFalse());
        assertThat(get(added)).containsExactly(Map.entry(T0, Errors.INVALID_PRODUCER_EPOCH));
    }

    @Test
    void coordinatorErrorsAreMappedForTheProducer() throws Exception {
        // Given
        start();
        CompletableFuture<Map<TopicPartition, Errors>> fenced = verifier.verify("a", 5L, (short) 0, List.of(T0),
                true);
        answers.add(answer(requests.poll(20, TimeUnit.SECONDS), Errors.PRODUCER_FENCED));
        CompletableFuture<Map<TopicPartition, Errors>> oldClient = verifier.verify("b", 6L, (short) 0, List.of(T0),
                false);
        answers.add(answer(requests.poll(20, TimeUnit.SECONDS), Errors.TRANSACTION_ABORTABLE));
        CompletableFuture<Map<TopicPartition, Errors>> lost = verifier.verify("c", 7L, (short) 0, List.of(T1), true);
        requests.poll(20, TimeUnit.SECONDS);

        // When
        answers.add(new IOException("connection reset"));

        // Then
        assertThat(get(fenced)).containsExactly(Map.entry(T0, Errors.INVALID_PRODUCER_EPOCH));
        assertThat(get(oldClient)).containsExactly(Map.entry(T0, Errors.INVALID_TXN_STATE));
        assertThat(get(lost)).containsExactly(Map.entry(T1, Errors.NETWORK_EXCEPTION));
    }

    @Test
    void aRequestWideErrorFailsEveryPartitionAndAnOldCoordinatorSkipsVerification() throws Exception {
        // Given
        start();
        CompletableFuture<Map<TopicPartition, Errors>> denied = verifier.verify("a", 5L, (short) 0, List.of(T0, T1),
                true);
        answers.add(new AddPartitionsToTxnResponseData().setErrorCode(Errors.CLUSTER_AUTHORIZATION_FAILED.code()));
        requests.poll(20, TimeUnit.SECONDS);
        CompletableFuture<Map<TopicPartition, Errors>> old = verifier.verify("b", 5L, (short) 0, List.of(T0), true);
        requests.poll(20, TimeUnit.SECONDS);

        // When
        answers.add(new UnsupportedVersionException("no AddPartitionsToTxn v4"));

        // Then
        assertThat(get(denied)).containsOnly(Map.entry(T0, Errors.INVALID_TXN_STATE),
                Map.entry(T1, Errors.INVALID_TXN_STATE));
        assertThat(get(old)).isEmpty();
    }

    @Test
    void noLiveCoordinatorIsCoordinatorNotAvailableWithoutARequest() throws Exception {
        // Given: partition 0 of __transaction_state is led by the fenced broker 2
        image = image(2);
        start();

        // When
        Map<TopicPartition, Errors> errors = get(verifier.verify("a", 5L, (short) 0, List.of(T0), true));

        // Then
        assertThat(errors).containsExactly(Map.entry(T0, Errors.COORDINATOR_NOT_AVAILABLE));
        assertThat(requests).isEmpty();
    }

    @Test
    void aRetryOfAQueuedTransactionReplacesItAndAnOlderEpochIsRefused() throws Exception {
        // Given: the sender is busy with "x", so "a" waits in the queue
        start();
        CompletableFuture<Map<TopicPartition, Errors>> busy = verifier.verify("x", 1L, (short) 0, List.of(T0), true);
        AddPartitionsToTxnRequestData first = requests.poll(20, TimeUnit.SECONDS);
        CompletableFuture<Map<TopicPartition, Errors>> queued = verifier.verify("a", 5L, (short) 3, List.of(T0),
                true);

        // When
        CompletableFuture<Map<TopicPartition, Errors>> retry = verifier.verify("a", 5L, (short) 3, List.of(T0), true);
        CompletableFuture<Map<TopicPartition, Errors>> zombie = verifier.verify("a", 5L, (short) 2, List.of(T0),
                true);

        // Then
        assertThat(get(queued)).containsExactly(Map.entry(T0, Errors.NETWORK_EXCEPTION));
        assertThat(get(zombie)).containsExactly(Map.entry(T0, Errors.INVALID_PRODUCER_EPOCH));
        answers.add(answer(first, Errors.NONE));
        assertThat(get(busy)).isEmpty();
        AddPartitionsToTxnRequestData second = requests.poll(20, TimeUnit.SECONDS);
        assertThat(second.transactions()).singleElement().satisfies(t -> assertThat(t.producerEpoch())
                .isEqualTo((short) 3));
        answers.add(answer(second, Errors.NONE));
        assertThat(get(retry)).isEmpty();
    }

    @Test
    void verificationFollowsTheDynamicConfigsOfThisBrokerThenTheClusterDefaultLive() {
        // Given: a verifier of broker 1, verifying per server.properties
        TransactionVerifier live = new TransactionVerifier(() -> image, 1, LISTENER, true, coordinator);
        MetadataImage staticOnly = image;
        MetadataImage clusterOff = withConfigs(Map.of(broker(""), Map.of(TransactionVerifier.VERIFICATION_ENABLE,
                "false")));
        MetadataImage brokerOn = withConfigs(Map.of(broker(""), Map.of(TransactionVerifier.VERIFICATION_ENABLE,
                "false"), broker("1"), Map.of(TransactionVerifier.VERIFICATION_ENABLE, "true")));
        MetadataImage otherBrokerOn = withConfigs(Map.of(broker(""), Map.of(TransactionVerifier.VERIFICATION_ENABLE,
                "false"), broker("2"), Map.of(TransactionVerifier.VERIFICATION_ENABLE, "true")));

        // When
        boolean[] seen = new boolean[4];
        MetadataImage[] images = {staticOnly, clusterOff, brokerOn, otherBrokerOn};
        for (int i = 0; i < images.length; i++) {
            image = images[i];
            seen[i] = live.verificationEnabled();
        }

        // Then
        assertThat(seen).containsExactly(true, false, true, false);
    }

    private static ConfigResource broker(String id) {
        return ConfigResource.broker(id);
    }

    /** {@link #image(int)} led by broker 1, with these dynamic configs. */
    private static MetadataImage withConfigs(Map<ConfigResource, Map<String, String>> configs) {
        MetadataImage base = image(1);
        return new MetadataImage(base.offset(), base.clusterId(), base.controllerId(), base.controllerTerm(),
                base.brokers(), base.topicsById(), base.topicIds(), configs, base.nextProducerId(),
                base.lastBrokerEpoch(), base.acls(), base.scram(), base.features(), base.clientQuotas());
    }
}
