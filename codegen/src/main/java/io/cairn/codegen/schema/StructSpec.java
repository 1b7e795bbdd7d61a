package io.cairn.codegen.schema;

import java.util.List;

/**
 * A struct: the element of a struct array, a struct-typed field, or a common struct shared by several fields.
 * Generated as a nested class of the message class. Immutable and thread-safe.
 *
 * @param name the struct's type name ({@code ApiVersion})
 * @param versions the versions in which the struct can appear: the union of the versions of every field that
 *     uses it (bounded by the message's), used to emit minimal version conditions
 * @param fields the struct's fields
 */
public record StructSpec(String name, Versions versions, List<FieldSpec> fields) {

    public StructSpec {
        fields = List.copyOf(fields);
    }
}
