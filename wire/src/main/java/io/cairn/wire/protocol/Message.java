package io.cairn.wire.protocol;

import java.util.List;

/**
 * A versioned protocol structure generated from a Kafka JSON schema: one object represents every version, and the
 * version is given on each read and write (Kafka {@code Message}).
 *
 * <p>Writing is two passes: {@link #addSize} fills a {@link SerializationCache}, then {@link #write} uses it.
 * Instances are mutable and not thread-safe.
 */
public interface Message {

    short lowestSupportedVersion();

    short highestSupportedVersion();

    /** Replaces this object's fields with the ones decoded from {@code in}. */
    void read(WireReader in, short version);

    void write(WireWriter out, SerializationCache cache, short version);

    void addSize(SizeAccumulator size, SerializationCache cache, short version);

    /** Tagged fields read from the wire that the schema does not name; re-written on write. */
    List<RawTaggedField> unknownTaggedFields();

    /** The encoded size at {@code version}, filling {@code cache} for a following {@link #write}. */
    default int size(SerializationCache cache, short version) {
        SizeAccumulator size = new SizeAccumulator();
        addSize(size, cache, version);
        return size.totalSize();
    }
}
