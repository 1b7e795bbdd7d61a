package io.cairn.broker.security;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Parsers of the two client messages of SCRAM (RFC 5802 section 7), accepting what Kafka's {@code ScramMessages}
 * accepts: a gs2 header {@code n,} with an optional {@code a=} authorization id (no channel binding), an optional
 * reserved {@code m=} field, the user as a saslname (ASCII, {@code =2C} and {@code =3D} escapes), a printable nonce
 * and {@code name=value} extensions. Parsing is one left-to-right pass over the message (no backtracking), and the
 * message itself is bounded by {@code sasl.server.max.receive.size}. A malformed message is a
 * {@link ScramFormatException}, whose text is logged, never sent to the client. Stateless, thread-safe.
 */
final class ScramMessages {

    private ScramMessages() {
    }

    /** A malformed SCRAM message. */
    static final class ScramFormatException extends Exception {

        private static final long serialVersionUID = 1L;

        ScramFormatException(String message) {
            super(message, null, false, false);
        }
    }

    /**
     * The client-first message.
     *
     * @param authorizationId the {@code a=} authorization id, unescaped, or empty
     * @param username the user, unescaped
     * @param nonce the client nonce
     * @param extensions the extensions in order
     * @param bare the client-first-message-bare as sent (part of the AuthMessage)
     */
    record ClientFirst(String authorizationId, String username, String nonce, Map<String, String> extensions,
            String bare) {

        /** True when the client asks for delegation-token authentication ({@code tokenauth=true}, Kafka's key). */
        boolean tokenAuthenticated() {
            return Boolean.parseBoolean(extensions.get("tokenauth"));
        }
    }

    /**
     * The client-final message.
     *
     * @param nonce the combined nonce
     * @param proof the ClientProof
     * @param withoutProof the client-final-message-without-proof as sent (part of the AuthMessage)
     */
    record ClientFinal(String nonce, byte[] proof, String withoutProof) {
    }

    static ClientFirst clientFirst(byte[] bytes) throws ScramFormatException {
        String message = ascii(bytes, "client first");
        if (!message.startsWith("n,")) {
            throw new ScramFormatException("Invalid SCRAM client first message format: only the gs2 header 'n' "
                    + "(no channel binding) is supported");
        }
        int headerEnd = message.indexOf(',', 2);
        if (headerEnd < 0) {
            throw new ScramFormatException("Invalid SCRAM client first message format: no gs2 header");
        }
        String authzField = message.substring(2, headerEnd);
        String authorizationId = "";
        if (!authzField.isEmpty()) {
            if (!authzField.startsWith("a=")) {
                throw new ScramFormatException("Invalid SCRAM client first message format: bad authzid");
            }
            authorizationId = saslNameToUsername(authzField.substring(2));
        }
        String bare = message.substring(headerEnd + 1);
        String[] fields = bare.split(",", -1);
        int i = 0;
        if (fields.length > 0 && fields[0].startsWith("m=")) {
            value(fields[0].substring(2), "m");
            i++;
        }
        if (fields.length < i + 2) {
            throw new ScramFormatException("Invalid SCRAM client first message format: missing user or nonce");
        }
        String username = saslNameToUsername(value(prefixed(fields[i], "n"), "n"));
        String nonce = printable(prefixed(fields[i + 1], "r"));
        Map<String, String> extensions = extensions(fields, i + 2, fields.length);
        return new ClientFirst(authorizationId, username, nonce, extensions, bare);
    }

    static ClientFinal clientFinal(byte[] bytes) throws ScramFormatException {
        String message = ascii(bytes, "client final");
        String[] fields = message.split(",", -1);
        if (fields.length < 3) {
            throw new ScramFormatException("Invalid SCRAM client final message format: too few fields");
        }
        base64(prefixed(fields[0], "c"));
        String nonce = printable(prefixed(fields[1], "r"));
        extensions(fields, 2, fields.length - 1);
        byte[] proof = base64(prefixed(fields[fields.length - 1], "p"));
        String withoutProof = message.substring(0, message.length() - fields[fields.length - 1].length() - 1);
        return new ClientFinal(nonce, proof, withoutProof);
    }

    /** A saslname ({@code =2C} is a comma, {@code =3D} an equals sign; any other {@code =} is invalid). */
    static String saslNameToUsername(String saslName) throws ScramFormatException {
        if (saslName.isEmpty()) {
            throw new ScramFormatException("Invalid SCRAM message format: empty user name");
        }
        StringBuilder username = new StringBuilder(saslName.length());
        for (int i = 0; i < saslName.length(); i++) {
            char c = saslName.charAt(i);
            if (c == '=') {
                if (saslName.startsWith("=2C", i)) {
                    username.append(',');
                } else if (saslName.startsWith("=3D", i)) {
                    username.append('=');
                } else {
                    throw new ScramFormatException("Invalid SCRAM message format: invalid user name escape");
                }
                i += 2;
            } else {
                username.append(c);
            }
        }
        return username.toString();
    }

    private static String ascii(byte[] bytes, String which) throws ScramFormatException {
        for (byte b : bytes) {
            if (b <= 0) {
                throw new ScramFormatException("Invalid SCRAM " + which + " message format: not 7-bit text");
            }
        }
        return new String(bytes, StandardCharsets.US_ASCII);
    }

    private static String prefixed(String field, String attribute) throws ScramFormatException {
        if (!field.startsWith(attribute + "=")) {
            throw new ScramFormatException("Invalid SCRAM message format: expected attribute '" + attribute + "'");
        }
        return field.substring(attribute.length() + 1);
    }

    private static String value(String value, String attribute) throws ScramFormatException {
        if (value.isEmpty()) {
            throw new ScramFormatException("Invalid SCRAM message format: empty attribute '" + attribute + "'");
        }
        return value;
    }

    private static String printable(String value) throws ScramFormatException {
        if (value.isEmpty()) {
            throw new ScramFormatException("Invalid SCRAM message format: empty nonce");
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c < 0x21 || c > 0x7E) {
                throw new ScramFormatException("Invalid SCRAM message format: nonce is not printable");
            }
        }
        return value;
    }

    private static byte[] base64(String value) throws ScramFormatException {
        try {
            return Base64.getDecoder().decode(value);
        } catch (IllegalArgumentException e) {
            throw new ScramFormatException("Invalid SCRAM message format: bad base64");
        }
    }

    private static Map<String, String> extensions(String[] fields, int from, int to) throws ScramFormatException {
        Map<String, String> extensions = new LinkedHashMap<>();
        for (int i = from; i < to; i++) {
            int equals = fields[i].indexOf('=');
            if (equals <= 0 || equals == fields[i].length() - 1) {
                throw new ScramFormatException("Invalid SCRAM message format: bad extension");
            }
            String name = fields[i].substring(0, equals);
            for (int j = 0; j < name.length(); j++) {
                char c = name.charAt(j);
                if (!(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z')) {
                    throw new ScramFormatException("Invalid SCRAM message format: bad extension name");
                }
            }
            extensions.put(name, fields[i].substring(equals + 1));
        }
        return extensions;
    }
}
