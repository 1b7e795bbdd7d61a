package io.cairn.log.io;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.log.FileSlice;
import io.cairn.log.segment.FileRecords;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OpenResourcesTest {

    @TempDir
    Path tmp;

    @Test
    void evictionShouldCloseIdleHandlesButNeverOneAReaderHolds() throws Exception {
        // Given
        OpenResources handles = new OpenResources(1);
        FileRecords first = new FileRecords(FileLayer.DEFAULT, tmp.resolve("a.log"), handles);
        FileRecords second = new FileRecords(FileLayer.DEFAULT, tmp.resolve("b.log"), handles);
        first.append(ByteBuffer.wrap("hello".getBytes()));
        FileSlice held = first.slice(0, 5);

        // When
        second.append(ByteBuffer.wrap("world".getBytes()));
        handles.enforce();

        // Then
        assertThat(handles.openCount()).isEqualTo(1);
        assertThat(first.isHandleOpen()).isFalse();
        assertThat(held.channel().isOpen()).isTrue();
        assertThat(new String(held.readBytes().array())).isEqualTo("hello");
        held.close();
        assertThat(held.channel().isOpen()).isFalse();
        try (FileSlice again = first.slice(0, 5)) {
            assertThat(new String(again.readBytes().array())).isEqualTo("hello");
        }
        first.close();
        second.close();
    }
}
