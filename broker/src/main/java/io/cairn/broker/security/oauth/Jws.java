package io.cairn.broker.security.oauth;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;

/**
 * A JWT in JWS compact serialization (RFC 7515 section 7.1): {@code base64url(header).base64url(claims).base64url(
 * signature)}, split and decoded but not yet trusted. The header and the claims must be JSON objects.
 *
 * <p>Immutable and thread-safe.
 *
 * @param header the JOSE header
 * @param claims the claims set
 * @param signingInput the ASCII bytes the signature covers ({@code header.claims} as sent)
 * @param signature the decoded signature (empty for an unsecured JWS)
 */
record Jws(Map<String, Object> header, Map<String, Object> claims, byte[] signingInput, byte[] signature) {

    /**
     * Splits and decodes {@code token}.
     *
     * @throws TokenValidationException when it is not three base64url parts holding two JSON objects
     */
    static Jws parse(String token) throws TokenValidationException {
        int first = token.indexOf('.');
        int second = first < 0 ? -1 : token.indexOf('.', first + 1);
        if (first <= 0 || second < 0 || token.indexOf('.', second + 1) >= 0 || second == first + 1) {
            throw new TokenValidationException("Malformed JWT provided; expected three sections (header, payload, "
                    + "and signature)");
        }
        Map<String, Object> header = object(token.substring(0, first), "header");
        Map<String, Object> claims = object(token.substring(first + 1, second), "payload");
        byte[] signature = decode(token.substring(second + 1), "signature");
        return new Jws(header, claims, token.substring(0, second).getBytes(StandardCharsets.US_ASCII), signature);
    }

    private static Map<String, Object> object(String part, String name) throws TokenValidationException {
        String json = new String(decode(part, name), StandardCharsets.UTF_8);
        try {
            return Json.parseObject(json);
        } catch (IllegalArgumentException e) {
            throw new TokenValidationException("The JWT " + name + " is not a JSON object: " + e.getMessage());
        }
    }

    private static byte[] decode(String part, String name) throws TokenValidationException {
        try {
            return Base64.getUrlDecoder().decode(part);
        } catch (IllegalArgumentException e) {
            throw new TokenValidationException("The JWT " + name + " is not base64url-encoded");
        }
    }

    /** The header member {@code name} when it is a string, else null. */
    String headerString(String name) {
        return header.get(name) instanceof String s ? s : null;
    }
}
