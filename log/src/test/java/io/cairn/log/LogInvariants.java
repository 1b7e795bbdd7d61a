package io.cairn.log;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.log.index.OffsetPosition;
import io.cairn.log.index.TimestampOffset;
import io.cairn.log.segment.FileBatch;
import io.cairn.log.segment.LogSegment;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.record.MutableRecordBatch;

/** Checks that a log is well formed: valid batches, increasing offsets, indexes that point at real batches. */
public final class LogInvariants {

    private LogInvariants() {
    }

    /** Verifies every segment and returns the offsets and values of every record, in order. */
    public static List<String> verify(PartitionLog log) {
        List<String> records = new ArrayList<>();
        long expectedNext = -1;
        for (LogSegment segment : log.segments()) {
            int end = segment.size();
            List<FileBatch> batches = new ArrayList<>();
            int position = 0;
            while (position < end) {
                FileBatch batch = segment.log().batchAt(position, end);
                assertThat(batch).as("batch at %d of %s", position, segment).isNotNull();
                ByteBuffer bytes = segment.log().readBatch(batch);
                MutableRecordBatch kafka = TestBatches.batches(bytes).get(0);
                kafka.ensureValid();
                if (expectedNext >= 0 && !log.config().compact()) {
                    assertThat(batch.baseOffset()).as("offsets continue").isEqualTo(expectedNext);
                }
                expectedNext = batch.nextOffset();
                records.addAll(TestBatches.offsetsAndValues(bytes));
                batches.add(batch);
                position = batch.endPosition();
            }
            assertThat(position).isEqualTo(end);
            for (int i = 0; i < segment.offsetIndex().entries(); i++) {
                OffsetPosition entry = segment.offsetIndex().entry(i);
                assertThat(batches).as("offset index entry %s of %s", entry, segment)
                    .anyMatch(b -> b.position() == entry.position() && b.lastOffset() == entry.offset());
            }
            long previous = Long.MIN_VALUE;
            for (int i = 0; i < segment.timeIndex().entries(); i++) {
                TimestampOffset entry = segment.timeIndex().entry(i);
                assertThat(entry.timestamp()).isGreaterThan(previous);
                previous = entry.timestamp();
                assertThat(batches).as("time index entry %s of %s", entry, segment)
                    .anyMatch(b -> b.lastOffset() == entry.offset() && b.maxTimestamp() == entry.timestamp());
            }
        }
        return records;
    }
}
