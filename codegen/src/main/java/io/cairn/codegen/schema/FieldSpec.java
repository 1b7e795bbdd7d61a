package io.cairn.codegen.schema;

import java.util.List;

/**
 * One field of a message or struct, validated against the schema format's rules when built by
 * {@link SchemaParser}. Immutable and thread-safe.
 *
 * @param name the schema name, UpperCamel ({@code "ErrorCode"})
 * @param type the field type
 * @param versions the versions in which the field is present
 * @param nullableVersions the versions in which it may be null ({@link Versions#NONE} if never)
 * @param taggedVersions the versions in which it is a tagged field ({@link Versions#NONE} if never)
 * @param tag the tag when tagged, else null
 * @param flexibleVersions a field-level override of the message's flexible versions (only strings and bytes use
 *     it: {@code RequestHeader.ClientId} is never compact), or null to inherit
 * @param ignorable whether writing a non-default value at a version lacking the field silently drops it
 * @param defaultValue the schema default as text, or null for the type's implicit default
 * @param about the field's documentation
 * @param fields the fields of an inline struct definition (empty otherwise)
 * @param mapKey whether the field is a map key (generated as a plain list element field all the same)
 * @param zeroCopy whether a bytes field is zero-copy in Kafka (generated as {@code byte[]} all the same)
 * @param entityType the entity type annotation, kept for documentation only
 */
public record FieldSpec(String name, FieldType type, Versions versions, Versions nullableVersions,
        Versions taggedVersions, Integer tag, Versions flexibleVersions, boolean ignorable, String defaultValue,
        String about, List<FieldSpec> fields, boolean mapKey, boolean zeroCopy, String entityType) {

    public FieldSpec {
        fields = List.copyOf(fields);
    }

    /** The lowerCamel name used for the Java field, accessor and setter ({@code errorCode}). */
    public String camelName() {
        return Character.toLowerCase(name.charAt(0)) + name.substring(1);
    }

    /** The setter's name ({@code setErrorCode}). */
    public String setterName() {
        return "set" + Character.toUpperCase(name.charAt(0)) + name.substring(1);
    }

    public boolean isTagged() {
        return tag != null;
    }

    /** Whether the schema default is the literal {@code null}. */
    public boolean defaultsToNull() {
        return "null".equals(defaultValue);
    }

    /** The versions in which a variable-length value of this field uses the compact encoding. */
    public Versions compactVersions(Versions messageFlexibleVersions) {
        return flexibleVersions == null ? messageFlexibleVersions : messageFlexibleVersions.intersect(flexibleVersions);
    }
}
