package io.cairn.log.index;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.log.io.FileLayer;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class IndexTest {

    @TempDir
    Path tmp;

    @Test
    void offsetIndexShouldFindTheLargestEntryAtOrBelowAnOffsetAndSurviveTrimAndReopen() throws Exception {
        // Given
        Path file = tmp.resolve("00000000000000000100.index");
        OffsetIndex index = new OffsetIndex(FileLayer.DEFAULT, file, 100, 800, true);
        index.append(104, 0);
        index.append(110, 300);
        index.append(125, 900);

        // When
        index.trimToValidSize();
        index.close();
        OffsetIndex reopened = new OffsetIndex(FileLayer.DEFAULT, file, 100, 800, false);

        // Then
        assertThat(Files.size(file)).isEqualTo(24);
        ByteBuffer raw = ByteBuffer.wrap(Files.readAllBytes(file));
        assertThat(raw.getInt(8)).isEqualTo(10);
        assertThat(raw.getInt(12)).isEqualTo(300);
        assertThat(reopened.entries()).isEqualTo(3);
        assertThat(reopened.lookup(99)).isEqualTo(new OffsetPosition(100, 0));
        assertThat(reopened.lookup(109)).isEqualTo(new OffsetPosition(104, 0));
        assertThat(reopened.lookup(110)).isEqualTo(new OffsetPosition(110, 300));
        assertThat(reopened.lookup(10_000)).isEqualTo(new OffsetPosition(125, 900));
        reopened.close();
    }

    @Test
    void offsetIndexShouldPreallocateRejectDisorderAndReportFull() {
        // Given
        OffsetIndex index = new OffsetIndex(FileLayer.DEFAULT, tmp.resolve("0.index"), 0, 20, true);

        // When
        index.append(1, 10);
        index.append(2, 20);

        // Then
        assertThat(index.sizeInBytes()).isEqualTo(16);
        assertThat(index.isFull()).isTrue();
        assertThatThrownBy(() -> index.append(3, 30)).isInstanceOf(IllegalStateException.class);
        index.truncateTo(2);
        assertThat(index.entries()).isEqualTo(1);
        assertThatThrownBy(() -> index.append(1, 40)).isInstanceOf(IllegalArgumentException.class);
        index.close();
    }

    @Test
    void timeIndexShouldOnlyGrowAndLookUpByTimestamp() throws Exception {
        // Given
        Path file = tmp.resolve("00000000000000000050.timeindex");
        TimeIndex index = new TimeIndex(FileLayer.DEFAULT, file, 50, 1200, true);

        // When
        boolean first = index.maybeAppend(1000, 52);
        boolean older = index.maybeAppend(900, 55);
        boolean newer = index.maybeAppend(2000, 60);
        index.trimToValidSize();

        // Then
        assertThat(first).isTrue();
        assertThat(older).isFalse();
        assertThat(newer).isTrue();
        assertThat(Files.size(file)).isEqualTo(24);
        assertThat(index.lookup(999)).isEqualTo(new TimestampOffset(-1, 50));
        assertThat(index.lookup(1500)).isEqualTo(new TimestampOffset(1000, 52));
        assertThat(index.lookup(5000)).isEqualTo(new TimestampOffset(2000, 60));
        ByteBuffer raw = ByteBuffer.wrap(Files.readAllBytes(file));
        assertThat(raw.getLong(12)).isEqualTo(2000);
        assertThat(raw.getInt(20)).isEqualTo(10);
        index.truncateTo(55);
        assertThat(index.entries()).isEqualTo(1);
        index.close();
    }

    @Test
    void anUnmappedIndexShouldMapAgainOnUseAndKeepItsEntries() {
        // Given
        OffsetIndex index = new OffsetIndex(FileLayer.DEFAULT, tmp.resolve("0.index"), 0, 800, true);
        index.append(5, 100);
        index.append(9, 200);

        // When
        index.release();
        boolean mappedAfterRelease = index.isMapped();
        OffsetPosition found = index.lookup(9);

        // Then
        assertThat(mappedAfterRelease).isFalse();
        assertThat(found).isEqualTo(new OffsetPosition(9, 200));
        assertThat(index.entries()).isEqualTo(2);
        index.append(12, 300);
        assertThat(index.lastEntry()).isEqualTo(new OffsetPosition(12, 300));
        index.close();
    }

    @Test
    void transactionIndexShouldUseKafkasEntryLayoutAndCollectOverlaps() throws Exception {
        // Given
        Path file = tmp.resolve("0.txnindex");
        TransactionIndex index = new TransactionIndex(FileLayer.DEFAULT, file, 0);

        // When
        index.append(new AbortedTxn(7, 10, 20, 21));
        index.append(new AbortedTxn(8, 30, 40, 41));

        // Then
        assertThat(Files.size(file)).isEqualTo(68);
        ByteBuffer raw = ByteBuffer.wrap(Files.readAllBytes(file));
        assertThat(raw.getShort(0)).isZero();
        assertThat(raw.getLong(2)).isEqualTo(7);
        assertThat(raw.getLong(26)).isEqualTo(21);
        assertThat(index.collectAbortedTxns(0, 15)).containsExactly(new AbortedTxn(7, 10, 20, 21));
        assertThat(index.collectAbortedTxns(21, 100)).containsExactly(new AbortedTxn(8, 30, 40, 41));
        index.truncateTo(40);
        assertThat(new TransactionIndex(FileLayer.DEFAULT, file, 0).allAbortedTxns())
            .containsExactly(new AbortedTxn(7, 10, 20, 21));
    }
}
