package io.cairn.broker.share;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.kafka.coordinator.share.PersisterStateBatchCombiner;
import org.apache.kafka.server.share.persister.PersisterStateBatch;
import org.junit.jupiter.api.Test;

/** Our combiner against Kafka 4.1.1's {@code PersisterStateBatchCombiner}, on chosen and on random batches. */
class StateBatchCombinerTest {

    private static StateBatch batch(long first, long last, int state, int count) {
        return new StateBatch(first, last, (byte) state, (short) count);
    }

    private static List<StateBatch> combine(List<StateBatch> soFar, List<StateBatch> added, long start) {
        return new StateBatchCombiner(soFar, added, start).combine();
    }

    private static List<StateBatch> kafka(List<StateBatch> soFar, List<StateBatch> added, long start) {
        List<StateBatch> result = new ArrayList<>();
        new PersisterStateBatchCombiner(toKafka(soFar), toKafka(added), start).combineStateBatches().forEach(b ->
            result.add(new StateBatch(b.firstOffset(), b.lastOffset(), b.deliveryState(), b.deliveryCount())));
        return result;
    }

    private static List<PersisterStateBatch> toKafka(List<StateBatch> batches) {
        List<PersisterStateBatch> result = new ArrayList<>();
        batches.forEach(b -> result.add(new PersisterStateBatch(b.firstOffset(), b.lastOffset(), b.deliveryState(),
            b.deliveryCount())));
        return result;
    }

    @Test
    void sameStateBatchesThatTouchOrOverlapBecomeOne() {
        assertThat(combine(List.of(batch(0, 4, 2, 1)), List.of(batch(5, 9, 2, 1), batch(3, 6, 2, 1)), -1))
            .containsExactly(batch(0, 9, 2, 1));
    }

    @Test
    void theHigherDeliveryCountOwnsSharedOffsets() {
        assertThat(combine(List.of(batch(0, 9, 0, 1)), List.of(batch(3, 5, 4, 2)), -1))
            .containsExactly(batch(0, 2, 0, 1), batch(3, 5, 4, 2), batch(6, 9, 0, 1));
    }

    @Test
    void theStartOffsetPrunes() {
        assertThat(combine(List.of(batch(0, 4, 2, 1), batch(5, 9, 0, 1)), List.of(), 7))
            .containsExactly(batch(7, 9, 0, 1));
    }

    @Test
    void randomBatchesCombineAsKafkaCombinesThem() {
        Random random = new Random(932);
        for (int round = 0; round < 5_000; round++) {
            List<StateBatch> soFar = randomBatches(random);
            List<StateBatch> added = randomBatches(random);
            long start = random.nextInt(4) == 0 ? -1 : random.nextInt(30);
            assertThat(combine(soFar, added, start)).as("round %d: %s + %s from %d", round, soFar, added, start)
                .isEqualTo(kafka(soFar, added, start));
        }
    }

    private static List<StateBatch> randomBatches(Random random) {
        int[] states = {0, 2, 4};
        List<StateBatch> batches = new ArrayList<>();
        int n = random.nextInt(5);
        for (int i = 0; i < n; i++) {
            long first = random.nextInt(40);
            batches.add(batch(first, first + random.nextInt(10), states[random.nextInt(3)], 1 + random.nextInt(3)));
        }
        return batches;
    }
}
