package io.cairn.wire.message;

import io.cairn.wire.error.UnsupportedVersionException;
import io.cairn.wire.protocol.ByteBufAccessor;
import io.cairn.wire.protocol.Message;
import io.cairn.wire.protocol.MessageDecodeException;
import io.cairn.wire.protocol.RawTaggedField;
import io.cairn.wire.protocol.SerializationCache;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Behaviour of the generated classes that the differential test does not show by itself. */
class GeneratedMessageBehaviourTest {

    private static ByteBuf encode(Message message, short version) {
        SerializationCache cache = new SerializationCache();
        int size = message.size(cache, version);
        ByteBuf buf = PooledByteBufAllocator.DEFAULT.buffer(size);
        message.write(new ByteBufAccessor(buf), cache, version);
        return buf;
    }

    @Test
    void writingANonDefaultNonIgnorableFieldAtAVersionWithoutItShouldThrow() {
        // Given
        MetadataRequestData request = new MetadataRequestData().setAllowAutoTopicCreation(false);
        SerializationCache cache = new SerializationCache();
        ByteBuf buf = PooledByteBufAllocator.DEFAULT.buffer();

        // When / Then
        assertThatThrownBy(() -> request.write(new ByteBufAccessor(buf), cache, (short) 3))
                .isInstanceOf(UnsupportedVersionException.class).hasMessageContaining("allowAutoTopicCreation");
        buf.release();
    }

    @Test
    void writingANonDefaultIgnorableFieldAtAVersionWithoutItShouldDropIt() {
        // Given
        ApiVersionsResponseData response = new ApiVersionsResponseData().setThrottleTimeMs(100);

        // When
        ByteBuf buf = encode(response, (short) 0);

        // Then
        ApiVersionsResponseData decoded = new ApiVersionsResponseData(new ByteBufAccessor(buf), (short) 0);
        buf.release();
        assertThat(decoded.throttleTimeMs()).isZero();
    }

    @Test
    void unknownTaggedFieldsShouldBeKeptAndWrittenAgain() {
        // Given
        ApiVersionsResponseData response = new ApiVersionsResponseData().setFinalizedFeaturesEpoch(5);
        response.unknownTaggedFields().add(new RawTaggedField(9, new byte[] {1, 2, 3}));
        ByteBuf first = encode(response, (short) 3);

        // When
        ApiVersionsResponseData decoded = new ApiVersionsResponseData(new ByteBufAccessor(first.duplicate()),
                (short) 3);
        ByteBuf second = encode(decoded, (short) 3);

        // Then
        assertThat(decoded.unknownTaggedFields()).containsExactly(new RawTaggedField(9, new byte[] {1, 2, 3}));
        assertThat(decoded.finalizedFeaturesEpoch()).isEqualTo(5);
        assertThat(ByteBufUtil.equals(first, second)).isTrue();
        first.release();
        second.release();
    }

    @Test
    void taggedFieldsAtANonFlexibleVersionShouldThrow() {
        // Given
        ApiVersionsResponseData response = new ApiVersionsResponseData();
        response.unknownTaggedFields().add(new RawTaggedField(9, new byte[0]));

        // When / Then
        assertThatThrownBy(() -> response.size(new SerializationCache(), (short) 2))
                .isInstanceOf(UnsupportedVersionException.class).hasMessageContaining("Tagged fields");
    }

    @Test
    void recordsShouldDecodeAsARetainedSliceTheCallerReleases() {
        // Given
        byte[] payload = "batch".getBytes(StandardCharsets.US_ASCII);
        ProduceRequestData request = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(1000)
                .setTopicData(List.of(new ProduceRequestData.TopicProduceData().setName("t").setPartitionData(List.of(
                        new ProduceRequestData.PartitionProduceData().setIndex(0)
                                .setRecords(Unpooled.wrappedBuffer(payload))))));
        ByteBuf input = encode(request, (short) 9);

        // When
        ProduceRequestData decoded = new ProduceRequestData(new ByteBufAccessor(input), (short) 9);
        input.release();

        // Then
        ByteBuf records = decoded.topicData().get(0).partitionData().get(0).records();
        assertThat(records.refCnt()).isPositive();
        assertThat(ByteBufUtil.getBytes(records)).isEqualTo(payload);
        records.release();
        assertThat(input.refCnt()).isZero();
    }

    @Test
    void aFailedDecodeShouldReleaseTheRecordsItAlreadyRead() {
        // Given a valid request cut short after its records
        ProduceRequestData request = new ProduceRequestData().setTopicData(List.of(
                new ProduceRequestData.TopicProduceData().setName("t").setPartitionData(List.of(
                        new ProduceRequestData.PartitionProduceData().setRecords(Unpooled.wrappedBuffer(new byte[8])),
                        new ProduceRequestData.PartitionProduceData()
                                .setRecords(Unpooled.wrappedBuffer(new byte[8]))))));
        ByteBuf full = encode(request, (short) 9);
        ByteBuf input = full.retainedSlice(0, full.readableBytes() - 3);
        full.release();

        // When / Then
        assertThatThrownBy(() -> new ProduceRequestData(new ByteBufAccessor(input), (short) 9))
                .isInstanceOf(MessageDecodeException.class);
        assertThat(input.refCnt()).isEqualTo(1);
        input.release();
    }
}
