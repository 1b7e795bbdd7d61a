package io.cairn.metadata.image;

import io.cairn.wire.protocol.ApiMessage;
import io.cairn.wire.protocol.ByteBufAccessor;
import io.cairn.wire.protocol.MessageDecodeException;
import io.cairn.wire.protocol.SerializationCache;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;

/**
 * The byte encoding of a batch of metadata records, as stored in one metadata-log entry and in snapshots:
 * {@code int32 count}, then per record {@code int16 type, int16 version, int32 size, bytes}. Records are written at
 * their highest version; a reader skips nothing silently (an unknown type or version fails the decode). Stateless,
 * thread-safe.
 */
public final class MetadataRecords {

    private MetadataRecords() {
    }

    /** Encodes a batch. */
    public static byte[] encode(List<? extends ApiMessage> records) {
        ByteBuf buf = Unpooled.buffer();
        try {
            ByteBufAccessor out = new ByteBufAccessor(buf);
            out.writeInt(records.size());
            for (ApiMessage record : records) {
                short version = record.highestSupportedVersion();
                SerializationCache cache = new SerializationCache();
                int size = record.size(cache, version);
                out.writeShort(record.apiKey());
                out.writeShort(version);
                out.writeInt(size);
                int before = buf.writerIndex();
                record.write(out, cache, version);
                if (buf.writerIndex() - before != size) {
                    throw new IllegalStateException("Record " + record + " wrote " + (buf.writerIndex() - before)
                            + " bytes, expected " + size);
                }
            }
            byte[] bytes = new byte[buf.readableBytes()];
            buf.readBytes(bytes);
            return bytes;
        } finally {
            buf.release();
        }
    }

    /** Decodes a batch; throws {@link MessageDecodeException} on malformed or unknown input. */
    public static List<ApiMessage> decode(byte[] bytes) {
        ByteBuf buf = Unpooled.wrappedBuffer(bytes);
        try {
            ByteBufAccessor in = new ByteBufAccessor(buf);
            int count = in.readInt();
            if (count < 0 || count > in.remaining() / 8) {
                throw new MessageDecodeException("Invalid metadata record count " + count);
            }
            List<ApiMessage> records = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                short typeId = in.readShort();
                short version = in.readShort();
                int size = in.readInt();
                MetadataRecordType type = MetadataRecordType.forId(typeId);
                if (type == null) {
                    throw new MessageDecodeException("Unknown metadata record type " + typeId);
                }
                if (size < 0 || size > in.remaining()) {
                    throw new MessageDecodeException("Invalid metadata record size " + size);
                }
                ApiMessage record = type.newRecord();
                if (version < record.lowestSupportedVersion() || version > record.highestSupportedVersion()) {
                    throw new MessageDecodeException("Unsupported version " + version + " of record type " + type);
                }
                ByteBuf slice = buf.readSlice(size);
                record.read(new ByteBufAccessor(slice), version);
                if (slice.isReadable()) {
                    throw new MessageDecodeException(slice.readableBytes() + " trailing bytes in a " + type);
                }
                records.add(record);
            }
            if (buf.isReadable()) {
                throw new MessageDecodeException(buf.readableBytes() + " trailing bytes after a record batch");
            }
            return records;
        } finally {
            buf.release();
        }
    }
}
