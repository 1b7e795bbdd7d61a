package io.cairn.broker.coordinator;

import io.cairn.broker.coordinator.CoordinatorSerde.MalformedRecordException;
import io.cairn.wire.protocol.ApiMessage;
import io.cairn.wire.protocol.ByteBufAccessor;
import io.cairn.wire.protocol.SerializationCache;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/**
 * The byte layout every Kafka coordinator topic shares ({@code __consumer_offsets}, {@code __transaction_state};
 * Kafka's {@code CoordinatorRecordSerde}), used by each kind's {@link CoordinatorSerde}:
 *
 * <pre>
 *   key:   int16 record type   | key message   (written at the version the kind gives the type)
 *   value: int16 value version | value message (written at that version); absent for a tombstone
 * </pre>
 *
 * <p>Which message a record type names, and which value versions it has, is the kind's business; this class writes
 * and reads the prefix and one message, and turns a short or undecodable message into a
 * {@link MalformedRecordException} (bytes after a complete message are ignored, as Kafka ignores them).
 *
 * <p>Thread-safety: stateless, thread-safe.
 */
public final class CoordinatorRecordSerde {

    /** The bytes of the int16 prefix (record type or value version). */
    public static final int PREFIX_BYTES = 2;

    private CoordinatorRecordSerde() {
    }

    /** The bytes of {@code prefix} followed by {@code message} written at {@code version}. */
    public static byte[] prefixed(short prefix, short version, ApiMessage message) {
        SerializationCache cache = new SerializationCache();
        int size = message.size(cache, version);
        byte[] bytes = new byte[PREFIX_BYTES + size];
        ByteBuf buf = Unpooled.wrappedBuffer(bytes).writerIndex(0);
        try {
            buf.writeShort(prefix);
            message.write(new ByteBufAccessor(buf), cache, version);
            if (buf.writerIndex() != bytes.length) {
                throw new IllegalStateException(message.getClass().getSimpleName() + " wrote "
                        + (buf.writerIndex() - PREFIX_BYTES) + " bytes at version " + version + ", expected " + size);
            }
            return bytes;
        } finally {
            buf.release();
        }
    }

    /**
     * Reads the int16 prefix of a key ({@code what} "key") or a value.
     *
     * @throws MalformedRecordException when fewer than two bytes are left
     */
    public static short readPrefix(ByteBuf buf, String what) {
        if (buf.readableBytes() < PREFIX_BYTES) {
            throw new MalformedRecordException("The " + what + " has " + buf.readableBytes()
                    + " byte(s), too few for its version");
        }
        return buf.readShort();
    }

    /**
     * Reads {@code message} at {@code version} from {@code buf}.
     *
     * @param what what the message is, for the error ("key", "value of ...")
     * @throws MalformedRecordException when it does not decode
     */
    public static void read(ApiMessage message, ByteBuf buf, short version, String what) {
        try {
            message.read(new ByteBufAccessor(buf), version);
        } catch (RuntimeException e) {
            throw new MalformedRecordException("Could not read the " + what + " as a "
                    + message.getClass().getSimpleName() + " version " + version + ": " + e.getMessage(), e);
        }
    }
}
