package io.cairn.codegen.emit;

import io.cairn.codegen.schema.Defaults;
import io.cairn.codegen.schema.FieldSpec;

/**
 * Renders a field's default as a Java expression, and the check "this value differs from the default" that decides
 * whether a tagged field is written and whether dropping an absent field loses information. Stateless.
 */
final class DefaultValues {

    private DefaultValues() {
    }

    /** The Java expression of the field's default value. */
    static String javaDefault(FieldSpec field) {
        String value = field.defaultValue();
        if (field.defaultsToNull()) {
            return "null";
        }
        boolean custom = value != null && !value.isEmpty();
        return switch (field.type().kind()) {
            case BOOL -> custom ? value : "false";
            case INT8 -> "(byte) " + (custom ? Defaults.parseInteger(value) : 0);
            case INT16 -> "(short) " + (custom ? Defaults.parseInteger(value) : 0);
            case UINT16, INT32 -> Long.toString(custom ? Defaults.parseInteger(value) : 0);
            case UINT32, INT64 -> (custom ? Defaults.parseInteger(value) : 0) + "L";
            case FLOAT64 -> custom ? Double.toString(Double.parseDouble(value)) : "0.0";
            case STRING -> custom ? quote(value) : "\"\"";
            case UUID -> custom ? "Uuid.fromString(" + quote(value) + ")" : "Uuid.ZERO";
            case BYTES -> "new byte[0]";
            case RECORDS -> "null";
            case ARRAY -> "new ArrayList<>(0)";
            case STRUCT -> "new " + field.type().structName() + "()";
        };
    }

    /** A boolean Java expression, true when {@code expr} differs from the field's default. */
    static String nonDefault(FieldSpec field, String expr) {
        boolean defaultNull = field.defaultsToNull();
        boolean nullable = !field.nullableVersions().isEmpty();
        return switch (field.type().kind()) {
            case ARRAY -> objectCheck(defaultNull, nullable, expr, "!" + expr + ".isEmpty()");
            case BYTES -> objectCheck(defaultNull, nullable, expr, expr + ".length != 0");
            case RECORDS -> expr + " != null";
            case STRING, UUID -> objectCheck(defaultNull, nullable, expr,
                    "!" + expr + ".equals(" + javaDefault(field) + ")");
            case STRUCT -> objectCheck(defaultNull, nullable, expr,
                    "!" + expr + ".equals(" + defaultConstant(field) + ")");
            case BOOL -> "true".equals(field.defaultValue()) ? "!" + expr : expr;
            case FLOAT64 -> "Double.compare(" + expr + ", " + javaDefault(field) + ") != 0";
            default -> expr + " != " + javaDefault(field);
        };
    }

    /**
     * The name of the class constant holding a default struct, compared against (never handed out) so that default
     * checks allocate nothing: {@code CURRENT_LEADER_DEFAULT}.
     */
    static String defaultConstant(FieldSpec field) {
        StringBuilder out = new StringBuilder();
        String name = field.name();
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (Character.isUpperCase(c) && i > 0 && !Character.isUpperCase(name.charAt(i - 1))) {
                out.append('_');
            }
            out.append(Character.toUpperCase(c));
        }
        return out.append("_DEFAULT").toString();
    }

    private static String objectCheck(boolean defaultNull, boolean nullable, String expr, String differs) {
        if (defaultNull) {
            return expr + " != null";
        }
        return nullable ? expr + " == null || " + differs : differs;
    }

    /** A Java string literal for {@code text}. */
    static String quote(String text) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : text.toCharArray()) {
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20 || c > 0x7e) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"').toString();
    }
}
