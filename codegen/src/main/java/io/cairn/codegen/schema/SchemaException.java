package io.cairn.codegen.schema;

/** A schema the generator rejects; the message names the field and the rule it breaks. */
public final class SchemaException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public SchemaException(String message) {
        super(message);
    }

    public SchemaException(String message, Throwable cause) {
        super(message, cause);
    }
}
