package io.cairn.codegen.emit;

import io.cairn.codegen.schema.FieldSpec;
import io.cairn.codegen.schema.FieldType;
import io.cairn.codegen.schema.Versions;

import java.util.function.Consumer;

/**
 * Emits the read, write and size code of one field value: fixed-size primitives, strings, bytes and records with
 * their legacy (int16/int32 length, -1 for null) or compact (unsigned varint length + 1, 0 for null) prefix, arrays
 * with the same two count encodings, and structs (nullable ones behind an int8 marker, -1 for null). Generated code
 * uses the parameter names {@code _readable}, {@code _writable}, {@code _cache}, {@code _size} and
 * {@code _version}. Not thread-safe: one instance per generated file.
 */
final class FieldCodec {

    private final CodeBuffer buffer;
    private final Versions flexibleVersions;

    FieldCodec(CodeBuffer buffer, Versions flexibleVersions) {
        this.buffer = buffer;
        this.flexibleVersions = flexibleVersions;
    }

    // ---------------------------------------------------------------------------------------------- reading

    /** Reads a field value into {@code target}; for array elements, {@code element} is true (never null). */
    void readValue(FieldType type, FieldSpec field, String target, Versions context, boolean element) {
        Versions nullable = element ? Versions.NONE : field.nullableVersions();
        Versions compact = field.compactVersions(flexibleVersions);
        switch (type.kind()) {
            case BOOL -> buffer.printf("%s = _readable.readByte() != 0;", target);
            case INT8 -> buffer.printf("%s = _readable.readByte();", target);
            case INT16 -> buffer.printf("%s = _readable.readShort();", target);
            case UINT16 -> buffer.printf("%s = _readable.readShort() & 0xffff;", target);
            case INT32 -> buffer.printf("%s = _readable.readInt();", target);
            case UINT32 -> buffer.printf("%s = _readable.readInt() & 0xffffffffL;", target);
            case INT64 -> buffer.printf("%s = _readable.readLong();", target);
            case FLOAT64 -> buffer.printf("%s = _readable.readDouble();", target);
            case UUID -> buffer.printf("%s = _readable.readUuid();", target);
            case STRING -> readLengthPrefixed(field, target, context, nullable, compact, "readShort",
                    "_readable.readString(_length)", true);
            case BYTES -> readLengthPrefixed(field, target, context, nullable, compact, "readInt",
                    "_readable.readBytes(_length)", false);
            case RECORDS -> readLengthPrefixed(field, target, context, nullable, compact, "readInt",
                    "_readable.readRecords(_length)", false);
            case STRUCT -> VersionCondition.emit(buffer, nullable, context, c -> {
                buffer.open("if (_readable.readByte() < 0)");
                buffer.printf("%s = null;", target);
                buffer.reopen("else");
                buffer.printf("%s = new %s(_readable, _version);", target, type.structName());
                buffer.close();
            }, c -> buffer.printf("%s = new %s(_readable, _version);", target, type.structName()));
            case ARRAY -> readArray(type, field, target, context, nullable, compact);
        }
    }

    private void readLengthPrefixed(FieldSpec field, String target, Versions context, Versions nullable,
            Versions compact, String legacyRead, String readExpr, boolean isString) {
        buffer.open("");
        buffer.printf("int _length;");
        VersionCondition.emit(buffer, compact, context,
                c -> buffer.printf("_length = _readable.readUnsignedVarint() - 1;"),
                c -> buffer.printf("_length = _readable.%s();", legacyRead));
        buffer.open("if (_length < 0)");
        readNull(field, target, context, nullable);
        if (isString) {
            buffer.reopen("else if (_length > 0x7fff)");
            buffer.printf("throw new MessageDecodeException(\"string field %s had invalid length \" + _length);",
                    field.name());
        }
        buffer.reopen("else");
        buffer.printf("%s = %s;", target, readExpr);
        buffer.close();
        buffer.close();
    }

    private void readNull(FieldSpec field, String target, Versions context, Versions nullable) {
        VersionCondition.emit(buffer, nullable, context, c -> buffer.printf("%s = null;", target),
                c -> buffer.printf("throw new MessageDecodeException(\"non-nullable field %s was serialized"
                        + " as null\");", field.name()));
    }

    private void readArray(FieldType type, FieldSpec field, String target, Versions context, Versions nullable,
            Versions compact) {
        FieldType elementType = type.element();
        buffer.open("");
        buffer.printf("int _arrayLength;");
        VersionCondition.emit(buffer, compact, context,
                c -> buffer.printf("_arrayLength = _readable.readUnsignedVarint() - 1;"),
                c -> buffer.printf("_arrayLength = _readable.readInt();"));
        buffer.open("if (_arrayLength < 0)");
        readNull(field, target, context, nullable);
        buffer.reopen("else");
        // Bound the allocation by the bytes left: every element takes at least one byte (or its fixed size).
        String needed = elementType.isFixedSize() ? "(long) _arrayLength * " + elementType.fixedSize() : "_arrayLength";
        buffer.open("if (%s > _readable.remaining())", needed);
        buffer.printf("throw new MessageDecodeException(\"Tried to allocate a collection of size \" + _arrayLength"
                + " + \" for field %s, but there are only \" + _readable.remaining() + \" bytes remaining.\");",
                field.name());
        buffer.close();
        buffer.printf("ArrayList<%s> _collection = new ArrayList<>(_arrayLength);", elementType.boxedType());
        // Assigned before it is filled, so that a failure half-way can still reach (and release) what was read.
        buffer.printf("%s = _collection;", target);
        buffer.open("for (int _i = 0; _i < _arrayLength; _i++)");
        buffer.printf("%s _element;", elementType.javaType());
        readValue(elementType, field, "_element", context, true);
        buffer.printf("_collection.add(_element);");
        buffer.close();
        buffer.close();
        buffer.close();
    }

    // ---------------------------------------------------------------------------------------------- writing

    /** Writes a field value held in {@code expr}. */
    void writeValue(FieldType type, FieldSpec field, String expr, Versions context, boolean element) {
        Versions nullable = element ? Versions.NONE : field.nullableVersions();
        Versions compact = field.compactVersions(flexibleVersions);
        switch (type.kind()) {
            case BOOL -> buffer.printf("_writable.writeByte(%s ? (byte) 1 : (byte) 0);", expr);
            case INT8 -> buffer.printf("_writable.writeByte(%s);", expr);
            case INT16 -> buffer.printf("_writable.writeShort(%s);", expr);
            case UINT16 -> buffer.printf("_writable.writeShort((short) %s);", expr);
            case INT32 -> buffer.printf("_writable.writeInt(%s);", expr);
            case UINT32 -> buffer.printf("_writable.writeInt((int) %s);", expr);
            case INT64 -> buffer.printf("_writable.writeLong(%s);", expr);
            case FLOAT64 -> buffer.printf("_writable.writeDouble(%s);", expr);
            case UUID -> buffer.printf("_writable.writeUuid(%s);", expr);
            case STRING -> nullGuard(field, expr, nullable, context,
                    c -> writeNull(c, compact, "writeShort((short) -1)"), () -> writeString(expr, context, compact));
            case BYTES -> nullGuard(field, expr, nullable, context, c -> writeNull(c, compact, "writeInt(-1)"),
                    () -> writeBlob(expr, ".length", "writeByteArray", context, compact));
            case RECORDS -> nullGuard(field, expr, nullable, context, c -> writeNull(c, compact, "writeInt(-1)"),
                    () -> writeBlob(expr, ".readableBytes()", "writeByteBuf", context, compact));
            case STRUCT -> VersionCondition.emit(buffer, nullable, context, c -> {
                buffer.open("if (%s == null)", expr);
                buffer.printf("_writable.writeByte((byte) -1);");
                buffer.reopen("else");
                buffer.printf("_writable.writeByte((byte) 1);");
                buffer.printf("%s.write(_writable, _cache, _version);", expr);
                buffer.close();
            }, c -> buffer.printf("%s.write(_writable, _cache, _version);", expr));
            case ARRAY -> nullGuard(field, expr, nullable, context, c -> writeNull(c, compact, "writeInt(-1)"), () -> {
                writeLength(context, compact, expr + ".size()", "writeInt(" + expr + ".size())");
                buffer.open("for (%s _element : %s)", type.element().boxedType(), expr);
                writeValue(type.element(), field, "_element", context, true);
                buffer.close();
            });
        }
    }

    private void writeString(String expr, Versions context, Versions compact) {
        buffer.printf("byte[] _stringBytes = _cache.getSerializedValue(%s);", expr);
        writeLength(context, compact, "_stringBytes.length", "writeShort((short) _stringBytes.length)");
        buffer.printf("_writable.writeByteArray(_stringBytes);");
    }

    /** Bytes and records: an int32 or compact length, then the content. */
    private void writeBlob(String expr, String lengthSuffix, String writeMethod, Versions context, Versions compact) {
        String length = expr + lengthSuffix;
        writeLength(context, compact, length, "writeInt(" + length + ")");
        buffer.printf("_writable.%s(%s);", writeMethod, expr);
    }

    private void writeLength(Versions context, Versions compact, String length, String legacyWrite) {
        VersionCondition.emit(buffer, compact, context,
                c -> buffer.printf("_writable.writeUnsignedVarint(%s + 1);", length),
                c -> buffer.printf("_writable.%s;", legacyWrite));
    }

    private void writeNull(Versions context, Versions compact, String legacyWrite) {
        VersionCondition.emit(buffer, compact, context, c -> buffer.printf("_writable.writeUnsignedVarint(0);"),
                c -> buffer.printf("_writable.%s;", legacyWrite));
    }

    /**
     * Emits {@code body} for a non-null value; where the field may be null, an {@code if (expr == null)} branch
     * with {@code onNull} in nullable versions and a NullPointerException in the others.
     */
    void nullGuard(FieldSpec field, String expr, Versions nullable, Versions context, Consumer<Versions> onNull,
            Runnable body) {
        if (nullable.intersect(context).isEmpty()) {
            buffer.open("");
            body.run();
            buffer.close();
            return;
        }
        buffer.open("if (%s == null)", expr);
        VersionCondition.emit(buffer, nullable, context, onNull,
                c -> buffer.printf("throw new NullPointerException(\"Non-nullable field %s is null at version \""
                        + " + _version);", field.name()));
        buffer.reopen("else");
        body.run();
        buffer.close();
    }

    // ---------------------------------------------------------------------------------------------- sizing

    /** Adds the encoded size of a field value held in {@code expr} to {@code _size}, caching what write needs. */
    void sizeValue(FieldType type, FieldSpec field, String expr, Versions context, boolean element) {
        Versions nullable = element ? Versions.NONE : field.nullableVersions();
        Versions compact = field.compactVersions(flexibleVersions);
        if (type.isFixedSize()) {
            buffer.printf("_size.addBytes(%d);", type.fixedSize());
            return;
        }
        switch (type.kind()) {
            case STRING -> nullGuard(field, expr, nullable, context, c -> sizeNull(c, compact, 2), () -> {
                buffer.printf("byte[] _stringBytes = %s.getBytes(StandardCharsets.UTF_8);", expr);
                buffer.open("if (_stringBytes.length > 0x7fff)");
                buffer.printf("throw new IllegalArgumentException(\"'%s' field is too long to be serialized\");",
                        field.camelName());
                buffer.close();
                buffer.printf("_cache.cacheSerializedValue(%s, _stringBytes);", expr);
                sizeLength(context, compact, "_stringBytes.length", 2);
                buffer.printf("_size.addBytes(_stringBytes.length);");
            });
            case BYTES -> nullGuard(field, expr, nullable, context, c -> sizeNull(c, compact, 4), () -> {
                sizeLength(context, compact, expr + ".length", 4);
                buffer.printf("_size.addBytes(%s.length);", expr);
            });
            case RECORDS -> nullGuard(field, expr, nullable, context, c -> sizeNull(c, compact, 4), () -> {
                sizeLength(context, compact, expr + ".readableBytes()", 4);
                buffer.printf("_size.addZeroCopyBytes(%s.readableBytes());", expr);
            });
            case STRUCT -> VersionCondition.emit(buffer, nullable, context, c -> {
                buffer.printf("_size.addBytes(1);");
                buffer.open("if (%s != null)", expr);
                buffer.printf("%s.addSize(_size, _cache, _version);", expr);
                buffer.close();
            }, c -> buffer.printf("%s.addSize(_size, _cache, _version);", expr));
            case ARRAY -> nullGuard(field, expr, nullable, context, c -> sizeNull(c, compact, 4), () -> {
                sizeLength(context, compact, expr + ".size()", 4);
                if (type.element().isFixedSize()) {
                    buffer.printf("_size.addBytes(%s.size() * %d);", expr, type.element().fixedSize());
                } else {
                    buffer.open("for (%s _element : %s)", type.element().boxedType(), expr);
                    sizeValue(type.element(), field, "_element", context, true);
                    buffer.close();
                }
            });
            default -> throw new IllegalStateException("Unhandled type " + type);
        }
    }

    private void sizeLength(Versions context, Versions compact, String length, int legacySize) {
        VersionCondition.emit(buffer, compact, context,
                c -> buffer.printf("_size.addBytes(Varints.sizeOfUnsignedVarint(%s + 1));", length),
                c -> buffer.printf("_size.addBytes(%d);", legacySize));
    }

    private void sizeNull(Versions context, Versions compact, int legacySize) {
        VersionCondition.emit(buffer, compact, context, c -> buffer.printf("_size.addBytes(1);"),
                c -> buffer.printf("_size.addBytes(%d);", legacySize));
    }
}
