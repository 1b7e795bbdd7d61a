package io.cairn.broker.security.oauth;

import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The OAUTHBEARER client's first message (RFC 7628 section 3.1), read as Kafka's
 * {@code OAuthBearerClientInitialResponse} reads it:
 * {@code n,[a=<authzid>],^Aauth=Bearer <token>^A[<key>=<value>^A]...^A} where {@code ^A} is 0x01, the GS2 header is
 * {@code n,} (no channel binding) with an optional authorization id, the {@code auth} pair is required, and every other
 * pair is a SASL extension (KIP-342) whose key is letters only and whose value is printable ASCII, space, tab, CR or
 * LF. The scheme is {@code Bearer} in any case and the token is a {@code b64token} (RFC 6750). Parsed by hand in one
 * pass (a regular expression with nested repetition would recurse once per character of client input).
 *
 * <p>Immutable and thread-safe.
 *
 * @param authorizationId the requested authorization id, as sent (empty when absent)
 * @param token the bearer token
 * @param extensions the SASL extensions, in the order sent (a repeated key keeps its last value, as in Kafka)
 */
record ClientInitialResponse(String authorizationId, String token, Map<String, String> extensions) {

    static final char SEPARATOR = '\u0001';
    static final String AUTH_KEY = "auth";

    /**
     * Parses the client's first message.
     *
     * @throws IllegalArgumentException with the reason (for the log, never the client) when it is malformed
     */
    static ClientInitialResponse parse(byte[] message) {
        String text = new String(message, StandardCharsets.UTF_8);
        if (!text.startsWith("n,")) {
            throw new IllegalArgumentException("Invalid OAUTHBEARER client first message: no 'n,' GS2 header");
        }
        int comma = text.indexOf(',', 2);
        if (comma < 0) {
            throw new IllegalArgumentException("Invalid OAUTHBEARER client first message: unterminated GS2 header");
        }
        String authzid = "";
        if (comma > 2) {
            if (!text.startsWith("a=", 2) || comma == 4 || !saslName(text, 4, comma)) {
                throw new IllegalArgumentException("Invalid OAUTHBEARER client first message: bad authzid");
            }
            authzid = text.substring(4, comma);
        }
        int start = comma + 1;
        if (start >= text.length() || text.charAt(start) != SEPARATOR || text.length() < start + 2
                || text.charAt(text.length() - 1) != SEPARATOR) {
            throw new IllegalArgumentException("Invalid OAUTHBEARER client first message: bad separators");
        }
        // The pairs are between the first and the last ^A, each ending with its own ^A.
        Map<String, String> pairs = new LinkedHashMap<>();
        int pos = start + 1;
        int end = text.length() - 1;
        while (pos < end) {
            int next = text.indexOf(SEPARATOR, pos);
            if (next < 0 || next >= end + 1) {
                throw new IllegalArgumentException("Invalid OAUTHBEARER client first message: unterminated pair");
            }
            int equals = text.indexOf('=', pos);
            if (equals < 0 || equals > next || !key(text, pos, equals) || !value(text, equals + 1, next)) {
                throw new IllegalArgumentException("Invalid OAUTHBEARER client first message: bad key=value pair");
            }
            pairs.put(text.substring(pos, equals), text.substring(equals + 1, next));
            pos = next + 1;
        }
        if (pos != end) {
            throw new IllegalArgumentException("Invalid OAUTHBEARER client first message: bad separators");
        }
        String auth = pairs.remove(AUTH_KEY);
        if (auth == null) {
            throw new IllegalArgumentException("Invalid OAUTHBEARER client first message: 'auth' not specified");
        }
        return new ClientInitialResponse(authzid, bearerToken(auth), Collections.unmodifiableMap(pairs));
    }

    /** {@code <scheme> SP+ <b64token>}: the scheme must be Bearer (any case). */
    private static String bearerToken(String auth) {
        int space = auth.indexOf(' ');
        if (space <= 0) {
            throw new IllegalArgumentException("Invalid OAUTHBEARER client first message: invalid 'auth' format");
        }
        for (int i = 0; i < space; i++) {
            char c = auth.charAt(i);
            if (!(Character.isLetterOrDigit(c) && c < 0x80) && c != '_') {
                throw new IllegalArgumentException("Invalid OAUTHBEARER client first message: invalid 'auth' format");
            }
        }
        int tokenStart = space;
        while (tokenStart < auth.length() && auth.charAt(tokenStart) == ' ') {
            tokenStart++;
        }
        String token = auth.substring(tokenStart);
        if (!b64token(token)) {
            throw new IllegalArgumentException("Invalid OAUTHBEARER client first message: invalid 'auth' format");
        }
        String scheme = auth.substring(0, space);
        if (!"bearer".equalsIgnoreCase(scheme)) {
            throw new IllegalArgumentException("Invalid scheme in OAUTHBEARER client first message: "
                    + Json.shorten(scheme));
        }
        return token;
    }

    /** RFC 6750 b64token: 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=". */
    private static boolean b64token(String token) {
        int i = 0;
        while (i < token.length() && b64char(token.charAt(i))) {
            i++;
        }
        if (i == 0) {
            return false;
        }
        while (i < token.length() && token.charAt(i) == '=') {
            i++;
        }
        return i == token.length();
    }

    private static boolean b64char(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.'
                || c == '_' || c == '~' || c == '+' || c == '/';
    }

    /** RFC 5801 saslname: UTF8 without '=' and ',' (Kafka: ASCII 0x01-0x7F), with =2C and =3D escapes. */
    private static boolean saslName(String text, int from, int to) {
        for (int i = from; i < to; i++) {
            char c = text.charAt(i);
            if (c == '=') {
                if (i + 2 >= to || !(text.startsWith("2C", i + 1) || text.startsWith("3D", i + 1))) {
                    return false;
                }
                i += 2;
            } else if (c < 0x01 || c > 0x7F || c == ',') {
                return false;
            }
        }
        return true;
    }

    /** KIP-342 extension key: {@code [A-Za-z]+}. */
    static boolean key(String text, int from, int to) {
        if (from >= to) {
            return false;
        }
        for (int i = from; i < to; i++) {
            char c = text.charAt(i);
            if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) {
                return false;
            }
        }
        return true;
    }

    /** KIP-342 extension value: {@code [\x21-\x7E \t\r\n]+}. */
    static boolean value(String text, int from, int to) {
        if (from >= to) {
            return false;
        }
        for (int i = from; i < to; i++) {
            char c = text.charAt(i);
            if (!((c >= 0x21 && c <= 0x7E) || c == ' ' || c == '\t' || c == '\r' || c == '\n')) {
                return false;
            }
        }
        return true;
    }

    /** Never prints the token (a credential). */
    @Override
    public String toString() {
        return "OAUTHBEARER client first message (authzid '" + authorizationId + "', extensions "
                + extensions.keySet() + ")";
    }
}
