package io.cairn.codegen.emit;

/**
 * Accumulates generated Java source line by line with explicit indentation (four spaces a level).
 * Not thread-safe; one buffer per generated file.
 */
public final class CodeBuffer {

    private static final String INDENT = "    ";

    private final StringBuilder text = new StringBuilder();
    private int indent;

    /** Appends one formatted line at the current indentation. */
    public CodeBuffer printf(String format, Object... args) {
        String line = args.length == 0 ? format : String.format(format, args);
        if (!line.isEmpty()) {
            text.append(INDENT.repeat(indent));
        }
        text.append(line).append('\n');
        return this;
    }

    /** Appends an empty line. */
    public CodeBuffer blank() {
        text.append('\n');
        return this;
    }

    /** Appends {@code header + " {"} and indents. */
    public CodeBuffer open(String header, Object... args) {
        String text = args.length == 0 ? header : String.format(header, args);
        printf(text.isEmpty() ? "{" : text + " {");
        indent++;
        return this;
    }

    /** Dedents and closes a block with {@code "}"}. */
    public CodeBuffer close() {
        indent--;
        printf("}");
        return this;
    }

    /** Dedents, prints {@code "} " + header + " {"}, and indents again: {@code } else {}. */
    public CodeBuffer reopen(String header) {
        indent--;
        printf("} " + header + " {");
        indent++;
        return this;
    }

    public void incrementIndent() {
        indent++;
    }

    public void decrementIndent() {
        if (indent == 0) {
            throw new IllegalStateException("Indentation below zero");
        }
        indent--;
    }

    public int indentation() {
        return indent;
    }

    @Override
    public String toString() {
        return text.toString();
    }
}
