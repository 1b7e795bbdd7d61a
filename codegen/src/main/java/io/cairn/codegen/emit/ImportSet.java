package io.cairn.codegen.emit;

import java.util.TreeSet;

/** The imports one generated file needs, emitted sorted with {@code java.*} first. Not thread-safe. */
public final class ImportSet {

    private final TreeSet<String> imports = new TreeSet<>();

    public void add(String qualifiedName) {
        imports.add(qualifiedName);
    }

    /** Prints the import lines: third-party and project imports, then a blank line, then {@code java.*}. */
    public void emit(CodeBuffer buffer) {
        boolean any = false;
        for (String name : imports) {
            if (!name.startsWith("java.")) {
                buffer.printf("import %s;", name);
                any = true;
            }
        }
        boolean first = true;
        for (String name : imports) {
            if (name.startsWith("java.")) {
                if (first && any) {
                    buffer.blank();
                }
                first = false;
                buffer.printf("import %s;", name);
                any = true;
            }
        }
        if (any) {
            buffer.blank();
        }
    }
}
