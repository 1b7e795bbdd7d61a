package io.cairn.broker.handler;

import static io.cairn.broker.handler.MetadataFixture.context;
import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.broker.txn.ProducerIdManager;
import io.cairn.broker.purgatory.PartitionPurgatory;
import io.cairn.broker.txn.TransactionConfig;
import io.cairn.broker.txn.TransactionCoordinator;
import io.cairn.log.Time;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.InitProducerIdRequestData;
import io.cairn.wire.message.InitProducerIdResponseData;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * InitProducerId against a real metadata node whose controller hands out the producer-id blocks, with a transaction
 * coordinator that leads no {@code __transaction_state} partition.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class InitProducerIdHandlerTest {

    @TempDir
    static Path dir;
    private static PartitionsFixture fixture;
    private static PartitionPurgatory purgatory;
    private static TransactionCoordinator transactions;
    private static InitProducerIdHandler handler;

    @BeforeAll
    static void start() throws Exception {
        fixture = PartitionsFixture.start(dir);
        purgatory = new PartitionPurgatory(fixture.replicaManager());
        ProducerIdManager producerIds = new ProducerIdManager(fixture.metadata().node(), 1, Time.SYSTEM);
        transactions = new TransactionCoordinator(fixture.replicaManager(), fixture.metadata().node(), purgatory,
                TransactionConfig.defaults(), Time.SYSTEM, (id, producerId, epoch, commit, coordinatorEpoch,
                        partitions) -> CompletableFuture.completedFuture(null), producerIds::generateProducerId);
        transactions.start();
        handler = new InitProducerIdHandler(producerIds, transactions);
    }

    @AfterAll
    static void stop() {
        transactions.close();
        purgatory.close();
        fixture.close();
    }

    private static InitProducerIdResponseData init(int version, InitProducerIdRequestData request) throws Exception {
        InitProducerIdResponseData response = handler.handle(context(ApiKey.INIT_PRODUCER_ID, version), request)
                .toCompletableFuture().get(30, TimeUnit.SECONDS);
        return (InitProducerIdResponseData) MetadataFixture.roundTrip(response, ApiKey.INIT_PRODUCER_ID, version,
                true);
    }

    private static InitProducerIdRequestData idempotent() {
        return new InitProducerIdRequestData().setTransactionalId(null).setTransactionTimeoutMs(Integer.MAX_VALUE);
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 2, 3, 4, 5})
    void anIdempotentProducerGetsANewProducerIdWithEpochZeroAtEveryVersion(int version) throws Exception {
        // When
        InitProducerIdResponseData first = init(version, idempotent());
        InitProducerIdResponseData second = init(version, idempotent());

        // Then
        assertThat(first.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(first.producerId()).isNotNegative();
        assertThat(first.producerEpoch()).isZero();
        assertThat(second.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(second.producerId()).isGreaterThan(first.producerId());
        assertThat(second.producerEpoch()).isZero();
    }

    @Test
    void anIdempotentProducerNamingItsIdAndEpochGetsAFreshIdAsKafkasCoordinatorGives() throws Exception {
        // Given
        InitProducerIdResponseData first = init(5, idempotent());

        // When
        InitProducerIdResponseData again = init(5, idempotent().setProducerId(first.producerId())
                .setProducerEpoch(first.producerEpoch()));

        // Then
        assertThat(again.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(again.producerId()).isNotEqualTo(first.producerId()).isNotNegative();
        assertThat(again.producerEpoch()).isZero();
    }

    @Test
    void aProducerIdWithoutEpochOrAnEpochWithoutProducerIdIsInvalidRequest() throws Exception {
        // When
        InitProducerIdResponseData idOnly = init(3, idempotent().setProducerId(42L));
        InitProducerIdResponseData epochOnly = init(3, idempotent().setProducerEpoch((short) 3));

        // Then
        assertThat(idOnly.errorCode()).isEqualTo(Errors.INVALID_REQUEST.code());
        assertThat(idOnly.producerId()).isEqualTo(-1L);
        assertThat(idOnly.producerEpoch()).isEqualTo((short) -1);
        assertThat(epochOnly.errorCode()).isEqualTo(Errors.INVALID_REQUEST.code());
    }

    @Test
    void aTransactionalIdIsNotCoordinatorAfterKafkasValidation() throws Exception {
        // When
        InitProducerIdResponseData transactional = init(4, new InitProducerIdRequestData()
                .setTransactionalId("txn-1").setTransactionTimeoutMs(60_000));
        InitProducerIdResponseData empty = init(4, new InitProducerIdRequestData()
                .setTransactionalId("").setTransactionTimeoutMs(60_000));
        InitProducerIdResponseData zeroTimeout = init(4, new InitProducerIdRequestData()
                .setTransactionalId("txn-1").setTransactionTimeoutMs(0));
        InitProducerIdResponseData longTimeout = init(4, new InitProducerIdRequestData()
                .setTransactionalId("txn-1").setTransactionTimeoutMs(900_001));

        // Then
        assertThat(transactional.errorCode()).isEqualTo(Errors.NOT_COORDINATOR.code());
        assertThat(transactional.producerId()).isEqualTo(-1L);
        assertThat(empty.errorCode()).isEqualTo(Errors.INVALID_REQUEST.code());
        assertThat(zeroTimeout.errorCode()).isEqualTo(Errors.INVALID_TRANSACTION_TIMEOUT.code());
        assertThat(longTimeout.errorCode()).isEqualTo(Errors.INVALID_TRANSACTION_TIMEOUT.code());
    }

    @Test
    void aRestartedBrokersManagerGetsABlockThatNoEarlierProducerUsed() throws Exception {
        // Given: ids already handed out by this broker's manager
        long before = init(5, idempotent()).producerId();

        // When: a new manager, as after a restart, asks the controller for its first block
        ProducerIdManager restarted = new ProducerIdManager(fixture.metadata().node(), 1, Time.SYSTEM);
        long after = restarted.generateProducerId().get(30, TimeUnit.SECONDS);

        // Then
        assertThat(after).isGreaterThan(before);
        assertThat(after % 1000).isZero();
    }

    @Test
    void producerIdsStayUniqueAcrossBlocks() throws Exception {
        // Given
        Set<Long> ids = new HashSet<>();

        // When: more ids than one block of 1000 holds
        for (int i = 0; i < 2_500; i++) {
            InitProducerIdResponseData response = init(5, idempotent());
            assertThat(response.errorCode()).isEqualTo(Errors.NONE.code());
            ids.add(response.producerId());
        }

        // Then
        assertThat(ids).hasSize(2_500);
    }
}
