package io.cairn.codegen.schema;

/**
 * Validates a field's schema default against its type: integers in range (decimal, {@code 0x} hex or {@code 0}
 * octal, optionally negative), {@code true}/{@code false} for bools, a number for floats, any text for strings,
 * {@code null} only where every version of the field is nullable, and nothing custom for bytes, arrays, structs
 * and records. Stateless and thread-safe.
 */
public final class Defaults {

    private Defaults() {
    }

    /** Throws {@link SchemaException} naming {@code where} when {@code value} is not a valid default. */
    public static void validate(String where, FieldType type, String value, Versions versions, Versions nullable) {
        if (value == null) {
            return;
        }
        if (value.equals("null")) {
            if (!type.canBeNullable()) {
                throw new SchemaException(where + ": a " + type + " field cannot default to null");
            }
            if (!nullable.contains(versions)) {
                throw new SchemaException(where + ": default null needs the field nullable in all its versions ("
                        + versions + "), but nullableVersions is " + nullable);
            }
            return;
        }
        switch (type.kind()) {
            case BOOL -> {
                if (!value.equals("true") && !value.equals("false")) {
                    throw new SchemaException(where + ": invalid bool default '" + value + "'");
                }
            }
            case INT8 -> checkRange(where, value, Byte.MIN_VALUE, Byte.MAX_VALUE);
            case INT16 -> checkRange(where, value, Short.MIN_VALUE, Short.MAX_VALUE);
            case UINT16 -> checkRange(where, value, 0, 65535);
            case INT32 -> checkRange(where, value, Integer.MIN_VALUE, Integer.MAX_VALUE);
            case UINT32 -> checkRange(where, value, 0, 4294967295L);
            case INT64 -> checkRange(where, value, Long.MIN_VALUE, Long.MAX_VALUE);
            case FLOAT64 -> {
                try {
                    Double.parseDouble(value);
                } catch (NumberFormatException e) {
                    throw new SchemaException(where + ": invalid float64 default '" + value + "'");
                }
            }
            case STRING -> {
                // Any text is a valid string default.
            }
            case UUID -> {
                try {
                    byte[] bytes = java.util.Base64.getUrlDecoder().decode(value);
                    if (bytes.length != 16) {
                        throw new IllegalArgumentException("not 16 bytes");
                    }
                } catch (IllegalArgumentException e) {
                    throw new SchemaException(where + ": invalid uuid default '" + value + "'");
                }
            }
            default -> {
                if (!value.isEmpty()) {
                    throw new SchemaException(where + ": a " + type + " field cannot have a custom default");
                }
            }
        }
    }

    /** Parses an integer default: decimal, {@code 0x} hex or leading-zero octal, with an optional minus sign. */
    public static long parseInteger(String value) {
        return Long.decode(value.trim());
    }

    private static void checkRange(String where, String value, long min, long max) {
        long parsed;
        try {
            parsed = parseInteger(value);
        } catch (NumberFormatException e) {
            throw new SchemaException(where + ": invalid integer default '" + value + "'");
        }
        if (parsed < min || parsed > max) {
            throw new SchemaException(where + ": default " + value + " is out of range [" + min + ", " + max + "]");
        }
    }
}
