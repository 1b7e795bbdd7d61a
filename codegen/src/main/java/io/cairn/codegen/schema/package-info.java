/**
 * The schema model: {@link io.cairn.codegen.schema.MessageSpec}, {@link io.cairn.codegen.schema.StructSpec},
 * {@link io.cairn.codegen.schema.FieldSpec}, {@link io.cairn.codegen.schema.FieldType} and
 * {@link io.cairn.codegen.schema.Versions}, built and validated by {@link io.cairn.codegen.schema.SchemaParser}.
 */
package io.cairn.codegen.schema;
