package io.cairn.log.index;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.log.RecordingFileLayer;
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

    @Test
    void transactionIndexTruncationShouldCutTheFileToTheKeptEntriesAndFsyncItWithoutRewriting() throws Exception {
        // Given
        RecordingFileLayer layer = new RecordingFileLayer();
        Path file = tmp.resolve("00000000000000000000.txnindex");
        TransactionIndex index = new TransactionIndex(layer, file, 0);
        index.append(new AbortedTxn(7, 10, 20, 21));
        index.append(new AbortedTxn(8, 30, 40, 41));
        index.append(new AbortedTxn(9, 50, 60, 61));
        index.flush();
        // a power cut during any write from now on leaves the file as the writes left it
        layer.failWritesTo(file.getFileName().toString());
        layer.clear();

        // When
        try {
            index.truncateTo(40);
        } catch (java.io.UncheckedIOException e) {
            // the power cut hit a write: what the file holds now is what a restart finds
        }

        // Then: the kept entry survives; the two later ones are cut off in place and fsynced
        assertThat(new TransactionIndex(FileLayer.DEFAULT, file, 0).allAbortedTxns())
            .containsExactly(new AbortedTxn(7, 10, 20, 21));
        assertThat(layer.events()).containsExactly(
            "open 00000000000000000000.txnindex [WRITE]",
            "truncate 00000000000000000000.txnindex 34",
            "force 00000000000000000000.txnindex");
    }

    @Test
    void transactionIndexResetShouldTruncateTheFileToNothingAndFsyncItThenAcceptAppendsAgain() throws Exception {
        // Given
        RecordingFileLayer layer = new RecordingFileLayer();
        Path file = tmp.resolve("00000000000000000000.txnindex");
        TransactionIndex index = new TransactionIndex(layer, file, 0);
        index.append(new AbortedTxn(7, 10, 20, 21));
        index.append(new AbortedTxn(8, 30, 40, 41));
        layer.clear();

        // When
        index.reset();

        // Then
        assertThat(layer.events()).containsExactly(
            "open 00000000000000000000.txnindex [WRITE]",
            "truncate 00000000000000000000.txnindex 0",
            "force 00000000000000000000.txnindex");
        assertThat(index.allAbortedTxns()).isEmpty();
        index.append(new AbortedTxn(9, 5, 6, 7));
        assertThat(new TransactionIndex(FileLayer.DEFAULT, file, 0).allAbortedTxns())
            .containsExactly(new AbortedTxn(9, 5, 6, 7));
    }

    @Test
    void transactionIndexTruncationShouldDropATornTailEvenWhenEveryEntryIsKept() throws Exception {
        // Given: a crash tore the third append
        Path file = tmp.resolve("0.txnindex");
        TransactionIndex index = new TransactionIndex(FileLayer.DEFAULT, file, 0);
        index.append(new AbortedTxn(7, 10, 20, 21));
        index.append(new AbortedTxn(8, 30, 40, 41));
        Files.write(file, new byte[] {0, 0, 0, 0, 9}, java.nio.file.StandardOpenOption.APPEND);
        TransactionIndex reopened = new TransactionIndex(FileLayer.DEFAULT, file, 0);

        // When
        reopened.truncateTo(100);
        reopened.append(new AbortedTxn(9, 50, 60, 61));

        // Then
        assertThat(Files.size(file)).isEqualTo(3 * TransactionIndex.ENTRY_SIZE);
        assertThat(new TransactionIndex(FileLayer.DEFAULT, file, 0).allAbortedTxns()).containsExactly(
            new AbortedTxn(7, 10, 20, 21), new AbortedTxn(8, 30, 40, 41), new AbortedTxn(9, 50, 60, 61));
    }
}
