package io.cairn.broker.net;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.broker.fetch.FetchResponses;
import io.cairn.broker.handler.ApiHandler;
import io.cairn.broker.handler.ClientConnection;
import io.cairn.broker.handler.HandlerRegistry;
import io.cairn.broker.handler.RequestContext;
import io.cairn.log.FileSlice;
import io.cairn.log.io.SharedChannel;
import io.cairn.testkit.LeakDetection;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.FetchRequestData;
import io.cairn.wire.message.FetchResponseData;
import io.cairn.wire.protocol.Uuid;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.ChannelFuture;
import io.netty.channel.FileRegion;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.requests.ResponseHeader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The zero-copy path of Fetch responses: file-backed records leave the encoder as a file region between the heap
 * parts of the frame, the bytes are what kafka-clients parses, and the file slice is closed exactly once whether
 * the response is written or dropped.
 */
@ExtendWith(LeakDetection.class)
class ZeroCopyResponseTest {

    private static final int GAP = 100;
    private static final Uuid TOPIC_ID = new Uuid(11, 22);

    @TempDir
    Path dir;

    private SharedChannel shared;
    private byte[] recordBytes;

    @BeforeEach
    void setUp() throws IOException {
        MemoryRecords records = MemoryRecords.withRecords(Compression.NONE,
            new SimpleRecord("k1".getBytes(StandardCharsets.UTF_8), "v1".getBytes(StandardCharsets.UTF_8)),
            new SimpleRecord("k2".getBytes(StandardCharsets.UTF_8), "v2".getBytes(StandardCharsets.UTF_8)));
        recordBytes = new byte[records.sizeInBytes()];
        records.buffer().duplicate().get(recordBytes);
        FileChannel file = FileChannel.open(dir.resolve("00000000000000000000.log"), StandardOpenOption.CREATE,
            StandardOpenOption.READ, StandardOpenOption.WRITE);
        file.write(ByteBuffer.allocate(GAP), 0);
        file.write(ByteBuffer.wrap(recordBytes), GAP);
        shared = new SharedChannel(file);
    }

    @AfterEach
    void tearDown() {
        shared.release();
    }

    private ByteBuf fileRecords() {
        assertThat(shared.tryRetain()).isTrue();
        return FileSliceByteBuf.of(new FileSlice(shared, GAP, recordBytes.length));
    }

    private FetchResponseData response(short version, ByteBuf records) {
        FetchResponseData.PartitionData partition = new FetchResponseData.PartitionData().setPartitionIndex(3)
            .setHighWatermark(2).setLastStableOffset(2).setLogStartOffset(0).setRecords(records);
        FetchResponseData.FetchableTopicResponse topic = new FetchResponseData.FetchableTopicResponse()
            .setTopic(version >= 13 ? "" : "events").setTopicId(TOPIC_ID).setPartitions(new ArrayList<>());
        topic.partitions().add(partition);
        FetchResponseData response = new FetchResponseData().setSessionId(version >= 7 ? 77 : 0);
        response.responses().add(topic);
        return response;
    }

    private ResponseFrame frame(long sequence, short version, FetchResponseData body) {
        return new ResponseFrame(sequence, 1234, ApiKey.FETCH.responseHeaderVersion(version), version, body,
            () -> FetchResponses.release(body));
    }

    private static byte[] bytesOf(List<Object> parts) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        WritableByteChannel sink = Channels.newChannel(out);
        for (Object part : parts) {
            if (part instanceof ByteBuf) {
                ByteBuf buf = (ByteBuf) part;
                byte[] bytes = new byte[buf.readableBytes()];
                buf.getBytes(buf.readerIndex(), bytes);
                out.write(bytes);
            } else {
                FileRegion region = (FileRegion) part;
                while (region.transferred() < region.count()) {
                    region.transferTo(sink, region.transferred());
                }
            }
        }
        return out.toByteArray();
    }

    private byte[] parsedRecords(byte[] frame, short version) {
        ByteBuffer buf = ByteBuffer.wrap(frame);
        assertThat(buf.getInt()).isEqualTo(frame.length - 4);
        ResponseHeader header = ResponseHeader.parse(buf, ApiKeys.FETCH.responseHeaderVersion(version));
        assertThat(header.correlationId()).isEqualTo(1234);
        FetchResponse response = FetchResponse.parse(new ByteBufferAccessor(buf), version);
        org.apache.kafka.common.message.FetchResponseData.PartitionData partition =
            response.data().responses().get(0).partitions().get(0);
        assertThat(partition.partitionIndex()).isEqualTo(3);
        assertThat(partition.highWatermark()).isEqualTo(2);
        if (version >= 13) {
            assertThat(response.data().responses().get(0).topicId().getMostSignificantBits()).isEqualTo(11);
        } else {
            assertThat(response.data().responses().get(0).topic()).isEqualTo("events");
        }
        ByteBuffer records = ((MemoryRecords) FetchResponse.recordsOrFail(partition)).buffer();
        byte[] bytes = new byte[records.remaining()];
        records.get(bytes);
        return bytes;
    }

    @Test
    void fileRecordsBecomeAFileRegionBetweenHeapPartsAndParseAsKafkaDoesAtEveryVersion() throws IOException {
        for (short version = 4; version <= 18; version++) {
            // Given
            ResponseFrame frame = frame(0, version, response(version, fileRecords()));

            // When
            List<Object> parts = ResponseEncoder.encode(PooledByteBufAllocator.DEFAULT, frame, true);
            frame.release();

            // Then
            try {
                // Before v12 the records end the body; from v12 on tagged-field counts follow them.
                assertThat(parts).hasSize(version >= 12 ? 3 : 2);
                assertThat(parts.get(0)).isInstanceOf(ByteBuf.class);
                assertThat(parts.get(1)).isInstanceOf(FileSliceRegion.class);
                assertThat(((FileRegion) parts.get(1)).count()).isEqualTo(recordBytes.length);
                assertThat(parts.subList(2, parts.size())).allMatch(ByteBuf.class::isInstance);
                assertThat(parsedRecords(bytesOf(parts), version)).as("v%d", version).isEqualTo(recordBytes);
                assertThat(shared.refCount()).isEqualTo(2);
            } finally {
                parts.forEach(ReferenceCountUtil::release);
            }
            assertThat(shared.refCount()).as("the slice is closed once the region is released").isEqualTo(1);
        }
    }

    @Test
    void withoutZeroCopyTheRecordsAreReadFromTheFileIntoTheSameBytes() throws IOException {
        // Given
        short version = 16;
        ResponseFrame zeroCopy = frame(0, version, response(version, fileRecords()));
        ResponseFrame copied = frame(0, version, response(version, fileRecords()));

        // When
        List<Object> regions = ResponseEncoder.encode(PooledByteBufAllocator.DEFAULT, zeroCopy, true);
        List<Object> buffer = ResponseEncoder.encode(PooledByteBufAllocator.DEFAULT, copied, false);
        zeroCopy.release();
        copied.release();

        // Then
        try {
            assertThat(buffer).hasSize(1);
            assertThat(bytesOf(buffer)).isEqualTo(bytesOf(regions));
        } finally {
            regions.forEach(ReferenceCountUtil::release);
            buffer.forEach(ReferenceCountUtil::release);
        }
        assertThat(shared.refCount()).isEqualTo(1);
    }

    @Test
    void aFileSliceBufferReadsTheFileLikeAnyBuffer() {
        // Given
        ByteBuf records = fileRecords();

        // When
        byte[] copy = new byte[records.readableBytes()];
        records.getBytes(0, copy);
        long baseOffset = records.getLong(0);
        int length = records.getInt(8);

        // Then
        try {
            assertThat(copy).isEqualTo(recordBytes);
            assertThat(baseOffset).isZero();
            assertThat(length).isEqualTo(recordBytes.length - 12);
            assertThat(records.isReadOnly()).isTrue();
            assertThat(ByteBuffer.wrap(recordBytes).getInt(17)).isEqualTo(records.getInt(17));
        } finally {
            records.release();
        }
        assertThat(shared.refCount()).isEqualTo(1);
    }

    @Test
    void aZeroCopyResponseWrittenToAChannelArrivesAsRegionAndIsReleasedWhenConsumed() {
        // Given
        EmbeddedChannel channel = new EmbeddedChannel(new ResponseEncoder(), new ResponseOrderer());
        short version = 12;

        // When
        channel.writeAndFlush(frame(0, version, response(version, fileRecords())));

        // Then
        List<Object> written = new ArrayList<>();
        Object msg;
        while ((msg = channel.readOutbound()) != null) {
            written.add(msg);
        }
        assertThat(written).hasSize(3).element(1).isInstanceOf(FileSliceRegion.class);
        written.forEach(ReferenceCountUtil::release);
        channel.finishAndReleaseAll();
        assertThat(shared.refCount()).isEqualTo(1);
    }

    @Test
    void aParkedResponseIsReleasedWhenTheConnectionCloses() {
        // Given
        EmbeddedChannel channel = new EmbeddedChannel(new ResponseEncoder(), new ResponseOrderer());
        short version = 12;
        ChannelFuture parked = channel.writeAndFlush(frame(1, version, response(version, fileRecords())));
        assertThat(shared.refCount()).isEqualTo(2);

        // When
        channel.close();

        // Then
        assertThat(parked.isSuccess()).isFalse();
        assertThat(shared.refCount()).isEqualTo(1);
        channel.finishAndReleaseAll();
    }

    @Test
    void aResponseThatCompletesAfterTheConnectionClosedIsReleased() {
        // Given
        PendingFetchHandler handler = new PendingFetchHandler();
        RequestMemoryPool pool = new RequestMemoryPool(-1);
        HandlerRegistry registry = HandlerRegistry.forListener(List.of(handler), false);
        EmbeddedChannel channel = new EmbeddedChannel(new RequestFrameDecoder(1 << 20, "TEST", pool),
            new ResponseEncoder(), new ResponseOrderer(), new RequestDispatcher(new RequestDecoder(registry, "TEST"),
            pool, Runnable::run, "TEST", ctx -> new ClientConnection("c", "TEST", ctx.channel().remoteAddress()),
            RequestDispatcherTest.metrics()));
        short version = 12;
        channel.writeInbound(RequestDispatcherTest.frame(ApiKey.FETCH, version, 1, new FetchRequestData()));
        assertThat(handler.pending).isNotNull();
        channel.close();

        // When
        handler.pending.complete(response(version, fileRecords()));
        channel.runPendingTasks();

        // Then
        assertThat(shared.refCount()).isEqualTo(1);
        channel.finishAndReleaseAll();
    }

    /** Serves Fetch v12 with a future the test completes; releases responses as FetchHandler does. */
    private static final class PendingFetchHandler implements ApiHandler<FetchRequestData, FetchResponseData> {

        CompletableFuture<FetchResponseData> pending;

        @Override
        public ApiKey apiKey() {
            return ApiKey.FETCH;
        }

        @Override
        public short minVersion() {
            return 12;
        }

        @Override
        public short maxVersion() {
            return 12;
        }

        @Override
        public CompletionStage<FetchResponseData> handle(RequestContext ctx, FetchRequestData request) {
            pending = new CompletableFuture<>();
            return pending;
        }

        @Override
        public FetchResponseData errorResponse(RequestContext ctx, FetchRequestData request, Errors error) {
            return new FetchResponseData().setErrorCode(error.code());
        }

        @Override
        public void releaseResponse(FetchResponseData response) {
            FetchResponses.release(response);
        }
    }
}
