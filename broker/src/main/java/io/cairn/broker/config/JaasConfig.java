package io.cairn.broker.config;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One {@code sasl.jaas.config} value read as Kafka reads it ({@code JaasConfig}, JAAS file syntax without the
 * context braces): {@code <login module class> <flag> [name=value ...];}, where a value is a bare word or a
 * double-quoted string (backslash escapes the next character), and {@code //} or {@code /* *}{@code /} comments are
 * skipped. Kafka requires exactly one login module in a {@code sasl.jaas.config}; so does this parser.
 *
 * <p>Immutable and thread-safe.
 *
 * @param loginModule the login module class name, e.g. {@code org.apache.kafka.common.security.plain.PlainLoginModule}
 * @param flag the control flag ({@code required}, {@code requisite}, {@code sufficient} or {@code optional})
 * @param options the options in the order written
 */
public record JaasConfig(String loginModule, String flag, Map<String, String> options) {

    private static final List<String> FLAGS = List.of("required", "requisite", "sufficient", "optional");

    /**
     * Parses {@code value}.
     *
     * @throws IllegalArgumentException with Kafka's kind of message when the value is not one well-formed login module
     */
    public static JaasConfig parse(String value) {
        Tokens tokens = new Tokens(value);
        List<JaasConfig> modules = new ArrayList<>();
        while (tokens.hasMore()) {
            modules.add(parseModule(tokens));
        }
        if (modules.size() != 1) {
            throw new IllegalArgumentException("JAAS config property contains " + modules.size()
                    + " login modules, should be 1 module");
        }
        return modules.get(0);
    }

    private static JaasConfig parseModule(Tokens tokens) {
        String module = tokens.word("a login module class name");
        String flag = tokens.word("the control flag of " + module).toLowerCase(Locale.ROOT);
        if (!FLAGS.contains(flag)) {
            throw new IllegalArgumentException("Invalid control flag '" + flag + "' of login module " + module
                    + " (one of " + String.join(", ", FLAGS) + ")");
        }
        Map<String, String> options = new LinkedHashMap<>();
        while (true) {
            String token = tokens.next();
            if (token == null) {
                throw new IllegalArgumentException("Login module " + module + " must end with ';'");
            }
            if (token.equals(";")) {
                return new JaasConfig(module, flag, Collections.unmodifiableMap(options));
            }
            if (!tokens.next("=").equals("=")) {
                throw new IllegalArgumentException("Option " + token + " of login module " + module
                        + " has no '=value'");
            }
            String optionValue = tokens.value();
            if (optionValue == null) {
                throw new IllegalArgumentException("Option " + token + " of login module " + module + " has no value");
            }
            options.put(token, optionValue);
        }
    }

    /** The value of option {@code name}, or null. */
    public String option(String name) {
        return options.get(name);
    }

    /** Never prints the options: they hold passwords. */
    @Override
    public String toString() {
        return loginModule + " " + flag + " (" + options.size() + " options)";
    }

    /** A tokenizer: words, quoted strings, '=' and ';'; skips whitespace and comments. */
    private static final class Tokens {
        private final String text;
        private int pos;
        /** Whether the last token returned was a quoted string (a quoted ";" or "=" is a value). */
        private boolean quoted;

        Tokens(String text) {
            this.text = text == null ? "" : text;
        }

        boolean hasMore() {
            skipBlanks();
            return pos < text.length();
        }

        String word(String what) {
            String token = next();
            if (token == null || (!quoted && (token.equals(";") || token.equals("=")))) {
                throw new IllegalArgumentException("Expected " + what + " in the JAAS config, found "
                        + (token == null ? "the end" : "'" + token + "'"));
            }
            return token;
        }

        String value() {
            return next();
        }

        String next(String expected) {
            String token = next();
            return token == null || quoted ? "" : token.equals(expected) ? token : "";
        }

        String next() {
            skipBlanks();
            quoted = false;
            if (pos >= text.length()) {
                return null;
            }
            char c = text.charAt(pos);
            if (c == ';' || c == '=') {
                pos++;
                return String.valueOf(c);
            }
            StringBuilder token = new StringBuilder();
            if (c == '"') {
                quoted = true;
                pos++;
                while (pos < text.length() && text.charAt(pos) != '"') {
                    char q = text.charAt(pos++);
                    if (q == '\\' && pos < text.length()) {
                        q = text.charAt(pos++);
                    }
                    token.append(q);
                }
                if (pos >= text.length()) {
                    throw new IllegalArgumentException("Unterminated quoted string in the JAAS config");
                }
                pos++;
                return token.toString();
            }
            while (pos < text.length()) {
                char w = text.charAt(pos);
                if (Character.isWhitespace(w) || w == ';' || w == '=' || w == '"') {
                    break;
                }
                token.append(w);
                pos++;
            }
            return token.toString();
        }

        private void skipBlanks() {
            while (pos < text.length()) {
                if (Character.isWhitespace(text.charAt(pos))) {
                    pos++;
                } else if (text.startsWith("//", pos)) {
                    int end = text.indexOf('\n', pos);
                    pos = end < 0 ? text.length() : end + 1;
                } else if (text.startsWith("/*", pos)) {
                    int end = text.indexOf("*/", pos + 2);
                    pos = end < 0 ? text.length() : end + 2;
                } else {
                    return;
                }
            }
        }
    }
}
