package io.cairn.log.io;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.log.RecordingFileLayer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CheckpointFileTest {

    @TempDir
    Path tmp;

    @Test
    void writeShouldFsyncTheTempFileRenameItAndFsyncTheDirectoryBeforeReturning() throws Exception {
        // Given
        RecordingFileLayer layer = new RecordingFileLayer();
        Path file = tmp.resolve("cp");
        Files.writeString(file, "old");

        // When
        CheckpointFile.write(layer, file, "new");

        // Then: Kafka's atomicMoveWithFallback order, the directory fsync last and after the rename
        assertThat(layer.events()).containsExactly(
            "open cp.tmp [CREATE, WRITE, TRUNCATE_EXISTING]",
            "write cp.tmp",
            "force cp.tmp",
            "atomicMove cp.tmp cp",
            "fsyncDirectory " + tmp.getFileName() + " [cp]");
        assertThat(Files.readString(file, StandardCharsets.UTF_8)).isEqualTo("new");
    }

    @Test
    void theRealLayersAtomicMoveShouldReplaceTheTarget() throws Exception {
        // Given
        Path source = tmp.resolve("a.tmp");
        Path target = tmp.resolve("a");
        Files.writeString(source, "fresh");
        Files.writeString(target, "stale");

        // When
        FileLayer.DEFAULT.atomicMove(source, target);

        // Then
        assertThat(Files.readString(target)).isEqualTo("fresh");
        assertThat(source).doesNotExist();
        CheckpointFile.writeEntries(FileLayer.DEFAULT, target, 0, List.of("x 1"));
        assertThat(CheckpointFile.readEntries(target, 0)).containsExactly("x 1");
    }
}
