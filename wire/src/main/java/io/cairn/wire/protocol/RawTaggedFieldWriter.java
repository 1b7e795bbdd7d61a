package io.cairn.wire.protocol;

import java.util.List;

/**
 * Writes a message's unknown tagged fields interleaved with its known ones in ascending tag order, as the tagged
 * field section requires: generated code calls {@link #writeRawTags} with the next known tag before writing it,
 * then with {@link Integer#MAX_VALUE}. The unknown fields are expected in ascending tag order (as read).
 * Used for one write; not thread-safe.
 */
public final class RawTaggedFieldWriter {

    private static final RawTaggedFieldWriter EMPTY = new RawTaggedFieldWriter(List.of());

    private final List<RawTaggedField> fields;
    private int next;

    private RawTaggedFieldWriter(List<RawTaggedField> fields) {
        this.fields = fields;
    }

    /** A writer over {@code fields}, which may be null. */
    public static RawTaggedFieldWriter forFields(List<RawTaggedField> fields) {
        return fields == null || fields.isEmpty() ? EMPTY : new RawTaggedFieldWriter(fields);
    }

    public int numFields() {
        return fields.size();
    }

    /** Writes the not yet written unknown fields whose tag is below {@code nextDefinedTag}. */
    public void writeRawTags(WireWriter writer, int nextDefinedTag) {
        while (next < fields.size()) {
            RawTaggedField field = fields.get(next);
            if (field.tag() >= nextDefinedTag) {
                return;
            }
            writer.writeUnsignedVarint(field.tag());
            writer.writeUnsignedVarint(field.size());
            writer.writeByteArray(field.data());
            next++;
        }
    }
}
