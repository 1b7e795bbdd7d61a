package io.cairn.log.cleaner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class OffsetMapTest {

    private static ByteBuffer key(String k) {
        return ByteBuffer.wrap(k.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void capacityShouldBeTheSlotsOfTheMemoryTimesTheLoadFactor() {
        // 24 bytes an entry (16-byte digest and 8-byte offset), as Kafka's SkimpyOffsetMap with MD5
        assertThat(new OffsetMap(24 * 1000, 0.9).capacity()).isEqualTo(900);
        assertThat(new OffsetMap(24 * 1000 + 23, 0.5).capacity()).isEqualTo(500);
        assertThat(new OffsetMap(1024 * 1024, 0.9).capacity()).isEqualTo((int) (1024 * 1024 / 24 * 0.9));
        // a load factor of 1 still leaves one slot free, so a lookup of a missing key ends
        assertThat(new OffsetMap(24 * 10, 1.0).capacity()).isEqualTo(9);
        // memory above 2 GiB is capped, as Kafka caps it
        assertThat(OffsetMap.capacityOf(Long.MAX_VALUE, 0.9)).isEqualTo((int) (Integer.MAX_VALUE / 24 * 0.9));
    }

    @Test
    void aMapThatCannotHoldOneKeyShouldBeRefused() {
        assertThatThrownBy(() -> new OffsetMap(24, 0.9)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("too small to fit in even a single message");
        assertThatThrownBy(() -> new OffsetMap(24 * 100, 0.0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Cleaner(new Throttler(Double.MAX_VALUE, new io.cairn.log.MockTime()),
            new Cleaner.Buffers(24, 0.9, 1024))).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theLatestOffsetOfAKeyShouldWin() {
        OffsetMap map = new OffsetMap(24 * 100, 0.9);
        assertThat(map.get(key("a"))).isEqualTo(-1);
        map.put(key("a"), 0);
        map.put(key("b"), 1);
        map.put(key("a"), 2);
        assertThat(map.get(key("a"))).isEqualTo(2);
        assertThat(map.get(key("b"))).isEqualTo(1);
        // an older offset never replaces a newer one
        map.put(key("a"), 1);
        assertThat(map.get(key("a"))).isEqualTo(2);
        // offset 0 is an offset like any other (not an empty slot)
        assertThat(new OffsetMap(24 * 100, 0.9)).satisfies(m -> {
            m.put(key(""), 0);
            assertThat(m.get(key(""))).isZero();
            assertThat(m.size()).isEqualTo(1);
        });
        assertThat(map.size()).isEqualTo(2);
        assertThat(map.get(key("c"))).isEqualTo(-1);
    }

    @Test
    void aFullMapShouldRefuseNewKeysButStillUpdateTheKeysItHolds() {
        // Given a map of 10 slots filled to 0.5
        OffsetMap map = new OffsetMap(24 * 10, 0.5);
        for (int i = 0; i < 5; i++) {
            assertThat(map.put(key("k" + i), i)).isTrue();
        }
        assertThat(map.isFull()).isTrue();

        // When / Then
        assertThat(map.put(key("new"), 5)).isFalse();
        assertThat(map.get(key("new"))).isEqualTo(-1);
        assertThat(map.size()).isEqualTo(5);
        assertThat(map.put(key("k3"), 6)).isTrue();
        assertThat(map.get(key("k3"))).isEqualTo(6);
        assertThat(map.size()).isEqualTo(5);
    }

    @Test
    void manyKeysShouldAllBeFoundAndTheTableShouldNeverPassItsMemory() {
        // Given a 2.4 MB map (100,000 slots): it starts small and grows
        long memory = 24L * 100_000;
        OffsetMap map = new OffsetMap(memory, 0.9);
        assertThat(map.allocatedBytes()).isLessThan(memory / 10);

        // When it is filled with distinct keys until it refuses one
        int n = 0;
        while (map.put(key("key-" + n), 1000L + n)) {
            n++;
        }

        // Then it took exactly its capacity, every key maps to its offset, and the memory stayed bounded
        assertThat(n).isEqualTo(90_000).isEqualTo(map.capacity()).isEqualTo(map.size());
        assertThat(map.allocatedBytes()).isLessThanOrEqualTo(memory);
        for (int i = 0; i < n; i++) {
            assertThat(map.get(key("key-" + i))).isEqualTo(1000L + i);
        }
        assertThat(map.get(key("key-" + n))).isEqualTo(-1);
        assertThat(map.get(key("absent"))).isEqualTo(-1);
    }
}
