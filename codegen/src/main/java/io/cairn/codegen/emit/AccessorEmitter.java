package io.cairn.codegen.emit;

import io.cairn.codegen.schema.FieldSpec;
import io.cairn.codegen.schema.FieldType;

import java.util.List;

/**
 * Emits the plain-object part of a generated class: accessors, fluent setters (range-checked for unsigned
 * types), {@code unknownTaggedFields()}, {@code equals}, {@code hashCode} and {@code toString}. Not thread-safe.
 */
final class AccessorEmitter {

    private final CodeBuffer buffer;
    private final String className;
    private final List<FieldSpec> fields;

    AccessorEmitter(CodeBuffer buffer, String className, List<FieldSpec> fields) {
        this.buffer = buffer;
        this.className = className;
        this.fields = fields;
    }

    void emit() {
        emitAccessors();
        emitEquals();
        emitHashCode();
        emitToString();
    }

    private void emitAccessors() {
        for (FieldSpec field : fields) {
            String type = field.type().javaType();
            String name = field.camelName();
            buffer.blank();
            if (!field.about().isEmpty()) {
                buffer.printf("/** %s */", field.about().replace("*/", "*&#47;").replace("\\u", "\\\\u"));
            }
            buffer.open("public %s %s()", type, name);
            buffer.printf("return this.%s;", name);
            buffer.close();
        }
        buffer.blank();
        buffer.printf("@Override");
        buffer.open("public List<RawTaggedField> unknownTaggedFields()");
        buffer.open("if (_unknownTaggedFields == null)");
        buffer.printf("_unknownTaggedFields = new ArrayList<>(0);");
        buffer.close();
        buffer.printf("return _unknownTaggedFields;");
        buffer.close();
        for (FieldSpec field : fields) {
            String type = field.type().javaType();
            String name = field.camelName();
            buffer.blank();
            buffer.open("public %s %s(%s v)", className, field.setterName(), type);
            if (field.type().kind() == FieldType.Kind.UINT16) {
                buffer.open("if (v < 0 || v > 65535)");
                buffer.printf("throw new IllegalArgumentException(\"Invalid value \" + v"
                        + " + \" for unsigned short field.\");");
                buffer.close();
            } else if (field.type().kind() == FieldType.Kind.UINT32) {
                buffer.open("if (v < 0 || v > 4294967295L)");
                buffer.printf("throw new IllegalArgumentException(\"Invalid value \" + v"
                        + " + \" for unsigned int field.\");");
                buffer.close();
            }
            buffer.printf("this.%s = v;", name);
            buffer.printf("return this;");
            buffer.close();
        }
    }

    private void emitEquals() {
        buffer.blank();
        buffer.printf("@Override");
        buffer.open("public boolean equals(Object obj)");
        buffer.open("if (!(obj instanceof %s))", className);
        buffer.printf("return false;");
        buffer.close();
        buffer.printf("%s other = (%s) obj;", className, className);
        for (FieldSpec field : fields) {
            String name = field.camelName();
            String differs = switch (field.type().kind()) {
                case BOOL, INT8, INT16, UINT16, INT32, UINT32, INT64 -> "this." + name + " != other." + name;
                case FLOAT64 -> "Double.compare(this." + name + ", other." + name + ") != 0";
                case BYTES -> "!Arrays.equals(this." + name + ", other." + name + ")";
                default -> "!Objects.equals(this." + name + ", other." + name + ")";
            };
            buffer.open("if (%s)", differs);
            buffer.printf("return false;");
            buffer.close();
        }
        buffer.printf("return RawTaggedFields.equal(_unknownTaggedFields, other._unknownTaggedFields);");
        buffer.close();
    }

    private void emitHashCode() {
        buffer.blank();
        buffer.printf("@Override");
        buffer.open("public int hashCode()");
        buffer.printf("int hashCode = 0;");
        for (FieldSpec field : fields) {
            String name = "this." + field.camelName();
            String hash = switch (field.type().kind()) {
                case BOOL -> "Boolean.hashCode(" + name + ")";
                case INT8 -> "Byte.hashCode(" + name + ")";
                case INT16 -> "Short.hashCode(" + name + ")";
                case UINT16, INT32 -> "Integer.hashCode(" + name + ")";
                case UINT32, INT64 -> "Long.hashCode(" + name + ")";
                case FLOAT64 -> "Double.hashCode(" + name + ")";
                case BYTES -> "Arrays.hashCode(" + name + ")";
                default -> "Objects.hashCode(" + name + ")";
            };
            buffer.printf("hashCode = 31 * hashCode + %s;", hash);
        }
        buffer.printf("return hashCode;");
        buffer.close();
    }

    private void emitToString() {
        buffer.blank();
        buffer.printf("@Override");
        buffer.open("public String toString()");
        buffer.printf("return \"%s(\"", className);
        buffer.incrementIndent();
        buffer.incrementIndent();
        String separator = "";
        for (FieldSpec field : fields) {
            String name = "this." + field.camelName();
            String value = switch (field.type().kind()) {
                case STRING -> "(" + name + " == null ? \"null\" : \"'\" + " + name + " + \"'\")";
                case BYTES -> "Arrays.toString(" + name + ")";
                default -> name;
            };
            buffer.printf("+ \"%s%s=\" + %s", separator, field.camelName(), value);
            separator = ", ";
        }
        buffer.printf("+ \")\";");
        buffer.decrementIndent();
        buffer.decrementIndent();
        buffer.close();
    }
}
