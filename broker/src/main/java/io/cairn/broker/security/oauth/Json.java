package io.cairn.broker.security.oauth;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A strict RFC 8259 JSON reader for the small documents OAUTHBEARER handles (a JWT's header and claims, a JWK Set),
 * so that the broker needs no JSON library at run time. Objects become {@code Map<String, Object>} (insertion order;
 * a repeated member name is refused, as the JWS spec allows and as is safest for claims), arrays {@code List<Object>},
 * numbers {@link Long} when integral and in range else {@link Double}, strings, {@link Boolean}, and {@code null}
 * becomes {@link #NULL}. Input comes from clients, so everything is bounded: the caller bounds the text's length and
 * nesting deeper than {@link #MAX_DEPTH} is refused; parsing is one linear pass without recursion on the text's
 * length.
 *
 * <p>Stateless and thread-safe.
 */
final class Json {

    /** The value of a JSON {@code null}. */
    static final Object NULL = new Object() {
        @Override
        public String toString() {
            return "null";
        }
    };
    static final int MAX_DEPTH = 16;

    private final String text;
    private int pos;

    private Json(String text) {
        this.text = text;
    }

    /**
     * Parses one JSON value that must be an object.
     *
     * @throws IllegalArgumentException with the reason when the text is not one well-formed JSON object
     */
    static Map<String, Object> parseObject(String text) {
        Json json = new Json(text);
        json.skipBlanks();
        if (json.pos >= text.length() || text.charAt(json.pos) != '{') {
            throw new IllegalArgumentException("not a JSON object");
        }
        Object value = json.value(0);
        json.skipBlanks();
        if (json.pos != text.length()) {
            throw json.error("unexpected text after the JSON object");
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> object = (Map<String, Object>) value;
        return object;
    }

    private Object value(int depth) {
        if (depth > MAX_DEPTH) {
            throw error("JSON nested deeper than " + MAX_DEPTH);
        }
        skipBlanks();
        if (pos >= text.length()) {
            throw error("unexpected end of JSON");
        }
        char c = text.charAt(pos);
        switch (c) {
            case '{':
                return object(depth);
            case '[':
                return array(depth);
            case '"':
                return string();
            case 't':
                return literal("true", Boolean.TRUE);
            case 'f':
                return literal("false", Boolean.FALSE);
            case 'n':
                return literal("null", NULL);
            default:
                if (c == '-' || (c >= '0' && c <= '9')) {
                    return number();
                }
                throw error("unexpected character '" + c + "'");
        }
    }

    private Map<String, Object> object(int depth) {
        pos++;
        Map<String, Object> members = new LinkedHashMap<>();
        skipBlanks();
        if (peek() == '}') {
            pos++;
            return Collections.unmodifiableMap(members);
        }
        while (true) {
            skipBlanks();
            if (peek() != '"') {
                throw error("expected a member name");
            }
            String name = string();
            skipBlanks();
            expect(':');
            Object value = value(depth + 1);
            if (members.put(name, value) != null) {
                throw error("duplicate member \"" + shorten(name) + "\"");
            }
            skipBlanks();
            char c = peek();
            pos++;
            if (c == '}') {
                return Collections.unmodifiableMap(members);
            }
            if (c != ',') {
                throw error("expected ',' or '}'");
            }
        }
    }

    private List<Object> array(int depth) {
        pos++;
        List<Object> items = new ArrayList<>();
        skipBlanks();
        if (peek() == ']') {
            pos++;
            return Collections.unmodifiableList(items);
        }
        while (true) {
            items.add(value(depth + 1));
            skipBlanks();
            char c = peek();
            pos++;
            if (c == ']') {
                return Collections.unmodifiableList(items);
            }
            if (c != ',') {
                throw error("expected ',' or ']'");
            }
        }
    }

    private String string() {
        pos++;
        StringBuilder out = new StringBuilder();
        while (true) {
            if (pos >= text.length()) {
                throw error("unterminated string");
            }
            char c = text.charAt(pos++);
            if (c == '"') {
                return out.toString();
            }
            if (c < 0x20) {
                throw error("control character in a string");
            }
            if (c != '\\') {
                out.append(c);
                continue;
            }
            if (pos >= text.length()) {
                throw error("unterminated escape");
            }
            char e = text.charAt(pos++);
            switch (e) {
                case '"', '\\', '/' -> out.append(e);
                case 'b' -> out.append('\b');
                case 'f' -> out.append('\f');
                case 'n' -> out.append('\n');
                case 'r' -> out.append('\r');
                case 't' -> out.append('\t');
                case 'u' -> {
                    if (pos + 4 > text.length()) {
                        throw error("truncated \\u escape");
                    }
                    int code = 0;
                    for (int i = 0; i < 4; i++) {
                        int digit = Character.digit(text.charAt(pos++), 16);
                        if (digit < 0) {
                            throw error("bad \\u escape");
                        }
                        code = code * 16 + digit;
                    }
                    out.append((char) code);
                }
                default -> throw error("bad escape \\" + e);
            }
        }
    }

    private Object number() {
        int start = pos;
        if (peek() == '-') {
            pos++;
        }
        if (peek() == '0') {
            pos++;
        } else if (!digits()) {
            throw error("bad number");
        }
        boolean integral = true;
        if (peek() == '.') {
            pos++;
            integral = false;
            if (!digits()) {
                throw error("bad number");
            }
        }
        if (peek() == 'e' || peek() == 'E') {
            pos++;
            integral = false;
            if (peek() == '+' || peek() == '-') {
                pos++;
            }
            if (!digits()) {
                throw error("bad number");
            }
        }
        String literal = text.substring(start, pos);
        if (integral && literal.length() <= 18) {
            return Long.parseLong(literal);
        }
        double value = Double.parseDouble(literal);
        if (Double.isInfinite(value)) {
            throw error("number out of range");
        }
        return value;
    }

    private boolean digits() {
        int start = pos;
        while (pos < text.length() && text.charAt(pos) >= '0' && text.charAt(pos) <= '9') {
            pos++;
        }
        return pos > start;
    }

    private Object literal(String word, Object value) {
        if (!text.startsWith(word, pos)) {
            throw error("bad literal");
        }
        pos += word.length();
        return value;
    }

    private void expect(char c) {
        if (peek() != c) {
            throw error("expected '" + c + "'");
        }
        pos++;
    }

    private char peek() {
        return pos < text.length() ? text.charAt(pos) : '\0';
    }

    private void skipBlanks() {
        while (pos < text.length()) {
            char c = text.charAt(pos);
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                return;
            }
            pos++;
        }
    }

    private IllegalArgumentException error(String reason) {
        return new IllegalArgumentException("malformed JSON at character " + pos + ": " + reason);
    }

    static String shorten(String value) {
        return value.length() <= 64 ? value : value.substring(0, 64) + "...(" + value.length() + " characters)";
    }
}
