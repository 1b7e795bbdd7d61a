package io.cairn.log.producer;

import static io.cairn.log.TestBatches.idempotent;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.cairn.log.AppendOrigin;
import io.cairn.log.FetchDataInfo;
import io.cairn.log.LogAppendInfo;
import io.cairn.log.LogConfig;
import io.cairn.log.LogEnvironment;
import io.cairn.log.MockTime;
import io.cairn.log.PartitionLog;
import io.cairn.log.TestBatches;
import io.cairn.log.index.AbortedTxn;
import io.cairn.wire.error.Errors;
import io.cairn.wire.error.InvalidProducerEpochException;
import io.cairn.wire.error.InvalidTxnStateException;
import io.cairn.wire.error.OutOfOrderSequenceException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProducerStateTest {

    @TempDir
    Path tmp;

    private final MockTime time = new MockTime();

    private PartitionLog open(LogConfig config) {
        return PartitionLog.open(tmp.resolve("p-0"), config, LogEnvironment.of(time), true);
    }

    @Test
    void anyOfTheLastFiveBatchesShouldBeRecognisedAsADuplicate() {
        // Given
        PartitionLog log = open(LogConfig.defaults());
        LogAppendInfo[] infos = new LogAppendInfo[6];
        for (int i = 0; i < 6; i++) {
            infos[i] = log.appendAsLeader(idempotent(1L, (short) 0, i * 2, time.milliseconds(), "a", "b"), 0,
                AppendOrigin.CLIENT);
        }

        // When
        LogAppendInfo retryOfSecond = log.appendAsLeader(idempotent(1L, (short) 0, 2, time.milliseconds(), "a", "b"),
            0, AppendOrigin.CLIENT);

        // Then
        assertThat(retryOfSecond.duplicate()).isTrue();
        assertThat(retryOfSecond.firstOffset()).isEqualTo(infos[1].firstOffset());
        assertThat(log.logEndOffset()).isEqualTo(12);
        assertThatThrownBy(() -> log.appendAsLeader(idempotent(1L, (short) 0, 0, time.milliseconds(), "a", "b"), 0,
            AppendOrigin.CLIENT)).isInstanceOf(OutOfOrderSequenceException.class);
        log.close();
    }

    @Test
    void sequenceGapsAndOldEpochsShouldBeRejected() {
        // Given
        PartitionLog log = open(LogConfig.defaults());
        log.appendAsLeader(idempotent(2L, (short) 3, 0, time.milliseconds(), "a"), 0, AppendOrigin.CLIENT);

        // When / Then
        assertThatThrownBy(() -> log.appendAsLeader(idempotent(2L, (short) 3, 5, time.milliseconds(), "b"), 0,
            AppendOrigin.CLIENT)).isInstanceOf(OutOfOrderSequenceException.class);
        assertThatThrownBy(() -> log.appendAsLeader(idempotent(2L, (short) 2, 1, time.milliseconds(), "b"), 0,
            AppendOrigin.CLIENT)).isInstanceOf(InvalidProducerEpochException.class);
        assertThatThrownBy(() -> log.appendAsLeader(idempotent(2L, (short) 4, 3, time.milliseconds(), "b"), 0,
            AppendOrigin.CLIENT)).isInstanceOf(OutOfOrderSequenceException.class);
        assertThat(log.appendAsLeader(idempotent(2L, (short) 4, 0, time.milliseconds(), "b"), 0,
            AppendOrigin.CLIENT).firstOffset()).isEqualTo(1);
        log.close();
    }

    @Test
    void aCoordinatorsTransactionalBatchesShouldHaveNoSequenceChecked() {
        // Given: TxnOffsetCommit's offsets, which a group coordinator writes at a fixed sequence (Kafka: 0)
        PartitionLog log = open(LogConfig.defaults());
        log.appendAsLeader(TestBatches.transactional(7L, (short) 0, 0, time.milliseconds(), "o1"), 0,
            AppendOrigin.COORDINATOR);
        LogAppendInfo sameSequence = log.appendAsLeader(TestBatches.transactional(7L, (short) 0, 0,
            time.milliseconds(), "o2"), 0, AppendOrigin.COORDINATOR);
        log.appendAsLeader(TestBatches.marker(7L, (short) 0, true, time.milliseconds()), 0,
            AppendOrigin.COORDINATOR);

        // When: the producer's epoch was bumped (a new instance's InitProducerId) and it commits offsets again
        LogAppendInfo bumped = log.appendAsLeader(TestBatches.transactional(7L, (short) 1, 3, time.milliseconds(),
            "o3"), 0, AppendOrigin.COORDINATOR);

        // Then: appended, not taken for duplicates or out of order (Kafka checks the sequences of clients' batches
        // only); an older epoch is still fenced
        assertThat(sameSequence.duplicate()).isFalse();
        assertThat(sameSequence.firstOffset()).isEqualTo(1);
        assertThat(bumped.firstOffset()).isEqualTo(3);
        assertThatThrownBy(() -> log.appendAsLeader(TestBatches.transactional(7L, (short) 0, 0,
            time.milliseconds(), "zombie"), 0, AppendOrigin.COORDINATOR))
            .isInstanceOf(InvalidProducerEpochException.class);
        log.close();
    }

    @Test
    void abortedTransactionsShouldBoundTheLastStableOffsetAndReachTheTxnIndex() {
        // Given
        PartitionLog log = open(LogConfig.defaults());
        log.appendAsLeader(TestBatches.values(time.milliseconds(), "plain"), 0, AppendOrigin.CLIENT);
        log.appendAsLeader(TestBatches.transactional(9L, (short) 0, 0, time.milliseconds(), "t1", "t2"), 0,
            AppendOrigin.CLIENT);
        long unstableDuring = log.firstUnstableOffset();

        // When
        log.appendAsLeader(TestBatches.marker(9L, (short) 0, false, time.milliseconds()), 0,
            AppendOrigin.COORDINATOR);

        // Then
        assertThat(unstableDuring).isEqualTo(1);
        assertThat(log.firstUnstableOffset()).isEqualTo(-1);
        try (FetchDataInfo info = log.readCommitted(0, 10_000, log.logEndOffset())) {
            assertThat(info.abortedTransactions()).containsExactly(new AbortedTxn(9L, 1, 3, 4));
        }
        log.close();
    }

    @Test
    void aMarkerOfAnOlderCoordinatorEpochShouldBeFencedAndLeaveTheTransactionOpen() {
        // Given
        PartitionLog log = open(LogConfig.defaults());
        log.appendAsLeader(TestBatches.transactional(9L, (short) 0, 0, time.milliseconds(), "t1"), 0,
            AppendOrigin.CLIENT);
        log.appendAsLeader(TestBatches.marker(9L, (short) 0, true, time.milliseconds(), 5), 0,
            AppendOrigin.COORDINATOR);
        log.appendAsLeader(TestBatches.transactional(9L, (short) 0, 1, time.milliseconds(), "t2"), 0,
            AppendOrigin.CLIENT);

        // When
        Throwable zombie = catchThrowable(() -> log.appendAsLeader(TestBatches.marker(9L, (short) 0, false,
            time.milliseconds(), 4), 0, AppendOrigin.COORDINATOR));

        // Then
        assertThat(Errors.forException(zombie)).isEqualTo(Errors.TRANSACTION_COORDINATOR_FENCED);
        assertThat(log.logEndOffset()).isEqualTo(3);
        assertThat(log.firstUnstableOffset()).isEqualTo(2);
        assertThat(log.activeProducers()).containsExactly(new ActiveProducer(9L, (short) 0, 1,
            time.milliseconds(), 5, 2L));
        log.appendAsLeader(TestBatches.marker(9L, (short) 0, false, time.milliseconds(), 5), 0,
            AppendOrigin.COORDINATOR);
        assertThat(log.firstUnstableOffset()).isEqualTo(-1);
        log.close();
    }

    @Test
    void aTransactionsFirstBatchShouldNeedTheCurrentVerificationGuardAndLaterOnesNone() {
        // Given
        PartitionLog log = open(LogConfig.defaults());
        VerificationGuard guard = log.maybeStartTransactionVerification(9L, 0, (short) 0);

        // When
        Throwable unverified = catchThrowable(() -> log.appendAsLeader(TestBatches.transactional(9L, (short) 0, 0,
            time.milliseconds(), "t1"), 0, AppendOrigin.CLIENT, VerificationGuard.SENTINEL));
        log.appendAsLeader(TestBatches.transactional(9L, (short) 0, 0, time.milliseconds(), "t1"), 0,
            AppendOrigin.CLIENT, guard);
        VerificationGuard ongoing = log.maybeStartTransactionVerification(9L, 1, (short) 0);
        log.appendAsLeader(TestBatches.transactional(9L, (short) 0, 1, time.milliseconds(), "t2"), 0,
            AppendOrigin.CLIENT, ongoing);

        // Then
        assertThat(unverified).isInstanceOf(InvalidTxnStateException.class)
            .hasMessage("Record was not part of an ongoing transaction");
        assertThat(guard).isNotSameAs(VerificationGuard.SENTINEL);
        assertThat(ongoing).isSameAs(VerificationGuard.SENTINEL);
        assertThat(log.logEndOffset()).isEqualTo(2);
        log.close();
    }

    @Test
    void atTransactionVersion2TheMarkerOfThePreviousTransactionShouldKeepTheNextOnesGuard() {
        // Given: Produce v12 of epoch 1 verifies while the COMMIT of epoch 0's transaction, bumped to 1, is written
        PartitionLog log = open(LogConfig.defaults());
        log.appendAsLeader(TestBatches.transactional(9L, (short) 0, 0, time.milliseconds(), "t0"), 0,
            AppendOrigin.CLIENT, log.maybeStartTransactionVerification(9L, 0, (short) 0));
        VerificationGuard guard = log.maybeStartTransactionVerification(9L, 0, (short) 1, true);
        log.appendAsLeader(TestBatches.marker(9L, (short) 1, true, time.milliseconds()), 0,
            AppendOrigin.COORDINATOR);

        // When
        log.appendAsLeader(TestBatches.transactional(9L, (short) 1, 0, time.milliseconds(), "t1"), 0,
            AppendOrigin.CLIENT, guard);

        // Then: Kafka 4.1's rule (a marker of the verification's own epoch does not end a TV2 verification)
        assertThat(log.logEndOffset()).isEqualTo(3);
        log.close();
    }

    @Test
    void aMarkerWrittenWhileABatchIsVerifiedShouldInvalidateItsGuard() {
        // Given: the coordinator aborts the transaction while the leader waits for its verification answer
        PartitionLog log = open(LogConfig.defaults());
        VerificationGuard guard = log.maybeStartTransactionVerification(9L, 0, (short) 0);
        log.appendAsLeader(TestBatches.marker(9L, (short) 0, false, time.milliseconds()), 0,
            AppendOrigin.COORDINATOR);

        // When
        Throwable late = catchThrowable(() -> log.appendAsLeader(TestBatches.transactional(9L, (short) 0, 0,
            time.milliseconds(), "t1"), 0, AppendOrigin.CLIENT, guard));

        // Then
        assertThat(late).isInstanceOf(InvalidTxnStateException.class);
        assertThat(log.logEndOffset()).isEqualTo(1);
        assertThat(log.firstUnstableOffset()).isEqualTo(-1);
        log.close();
    }

    @Test
    void snapshotsShouldBeWrittenAtRollAndCloseInKafkasFormat() throws Exception {
        // Given
        PartitionLog log = open(LogConfig.builder().segmentBytes(150).build());
        log.appendAsLeader(idempotent(4L, (short) 1, 0, time.milliseconds(), "a"), 0, AppendOrigin.CLIENT);
        log.appendAsLeader(idempotent(4L, (short) 1, 1, time.milliseconds(), "b"), 0, AppendOrigin.CLIENT);
        log.appendAsLeader(idempotent(4L, (short) 1, 2, time.milliseconds(), "c"), 0, AppendOrigin.CLIENT);

        // When
        log.close();

        // Then
        Path snapshot = ProducerSnapshots.file(log.dir(), 3);
        assertThat(Files.exists(snapshot)).isTrue();
        List<ProducerStateEntry> entries = ProducerSnapshots.read(snapshot).orElseThrow();
        assertThat(entries).hasSize(1);
        assertThat(entries.get(0).producerEpoch()).isEqualTo((short) 1);
        assertThat(entries.get(0).lastSeq()).isEqualTo(2);
        List<ProducerStateEntry> kafkaView = readWithKafka(snapshot);
        assertThat(kafkaView).hasSize(1);
    }

    /** Kafka's own reader must accept our snapshot file. */
    private static List<ProducerStateEntry> readWithKafka(Path snapshot) throws Exception {
        var entries = org.apache.kafka.storage.internals.log.ProducerStateManager.readSnapshot(snapshot.toFile());
        assertThat(entries).hasSize(1);
        assertThat(entries.get(0).producerId()).isEqualTo(4L);
        assertThat(entries.get(0).lastSeq()).isEqualTo(2);
        return ProducerSnapshots.read(snapshot).orElseThrow();
    }
}
