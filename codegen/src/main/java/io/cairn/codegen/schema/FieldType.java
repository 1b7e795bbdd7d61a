package io.cairn.codegen.schema;

import java.util.Map;

/**
 * The type of one schema field: a primitive, an array ({@code "[]T"}) of a primitive or a struct, or a struct
 * named by its type. Immutable and thread-safe.
 *
 * @param kind what the type is
 * @param element the element type of an array, else null
 * @param structName the struct's name for {@link Kind#STRUCT}, else null
 */
public record FieldType(Kind kind, FieldType element, String structName) {

    /** The kinds of field the schema format knows. */
    public enum Kind {
        BOOL("boolean", "Boolean", 1),
        INT8("byte", "Byte", 1),
        INT16("short", "Short", 2),
        UINT16("int", "Integer", 2),
        INT32("int", "Integer", 4),
        UINT32("long", "Long", 4),
        INT64("long", "Long", 8),
        FLOAT64("double", "Double", 8),
        UUID("Uuid", "Uuid", 16),
        STRING("String", "String", -1),
        BYTES("byte[]", "byte[]", -1),
        RECORDS("ByteBuf", "ByteBuf", -1),
        ARRAY(null, null, -1),
        STRUCT(null, null, -1);

        private final String javaType;
        private final String boxedType;
        private final int fixedSize;

        Kind(String javaType, String boxedType, int fixedSize) {
            this.javaType = javaType;
            this.boxedType = boxedType;
            this.fixedSize = fixedSize;
        }
    }

    private static final Map<String, Kind> PRIMITIVES = Map.ofEntries(
            Map.entry("bool", Kind.BOOL),
            Map.entry("int8", Kind.INT8),
            Map.entry("int16", Kind.INT16),
            Map.entry("uint16", Kind.UINT16),
            Map.entry("int32", Kind.INT32),
            Map.entry("uint32", Kind.UINT32),
            Map.entry("int64", Kind.INT64),
            Map.entry("float64", Kind.FLOAT64),
            Map.entry("uuid", Kind.UUID),
            Map.entry("string", Kind.STRING),
            Map.entry("bytes", Kind.BYTES),
            Map.entry("records", Kind.RECORDS));

    /** Parses a schema type name such as {@code "int32"}, {@code "[]string"} or {@code "[]Partition"}. */
    public static FieldType parse(String text) {
        if (text.startsWith("[]")) {
            FieldType element = parse(text.substring(2));
            if (element.kind == Kind.ARRAY) {
                throw new SchemaException("Arrays of arrays are not supported: '" + text + "'");
            }
            if (element.kind == Kind.RECORDS || element.kind == Kind.BYTES) {
                throw new SchemaException("Arrays of " + text.substring(2) + " are not supported: '" + text + "'");
            }
            return new FieldType(Kind.ARRAY, element, null);
        }
        Kind primitive = PRIMITIVES.get(text);
        if (primitive != null) {
            return new FieldType(primitive, null, null);
        }
        boolean structName = !text.isEmpty() && Character.isUpperCase(text.charAt(0))
                && text.chars().allMatch(Character::isLetterOrDigit);
        if (structName) {
            return new FieldType(Kind.STRUCT, null, text);
        }
        throw new SchemaException("Unknown field type '" + text + "'");
    }

    public boolean isStruct() {
        return kind == Kind.STRUCT;
    }

    public boolean isArray() {
        return kind == Kind.ARRAY;
    }

    public boolean isStructArray() {
        return kind == Kind.ARRAY && element.kind == Kind.STRUCT;
    }

    /** The struct this type names, directly or as array element, else null. */
    public String referencedStruct() {
        if (kind == Kind.STRUCT) {
            return structName;
        }
        return isStructArray() ? element.structName : null;
    }

    /** Fixed encoded size in bytes, or -1 for variable-length types. */
    public int fixedSize() {
        return kind.fixedSize;
    }

    public boolean isFixedSize() {
        return kind.fixedSize > 0;
    }

    /** Types the format lets be null: strings, bytes, records, arrays and structs. */
    public boolean canBeNullable() {
        return kind == Kind.STRING || kind == Kind.BYTES || kind == Kind.RECORDS || kind == Kind.ARRAY
                || kind == Kind.STRUCT;
    }

    /** The Java type of a field of this type. */
    public String javaType() {
        if (kind == Kind.ARRAY) {
            return "List<" + element.boxedType() + ">";
        }
        return kind == Kind.STRUCT ? structName : kind.javaType;
    }

    /** The Java type used as a list element. */
    public String boxedType() {
        return kind == Kind.STRUCT ? structName : kind.boxedType;
    }

    @Override
    public String toString() {
        if (kind == Kind.ARRAY) {
            return "[]" + element;
        }
        return kind == Kind.STRUCT ? structName : kind.name().toLowerCase(java.util.Locale.ROOT);
    }
}
