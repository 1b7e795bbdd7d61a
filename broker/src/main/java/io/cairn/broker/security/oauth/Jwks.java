package io.cairn.broker.security.oauth;

import java.math.BigInteger;
import java.security.AlgorithmParameters;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.ECParameterSpec;
import java.security.spec.ECPoint;
import java.security.spec.ECPublicKeySpec;
import java.security.spec.RSAPublicKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * A JSON Web Key Set (RFC 7517 section 5) read into the public keys the secured validator verifies with: RSA keys
 * ({@code n}, {@code e}) and EC keys on P-256, P-384 and P-521 ({@code crv}, {@code x}, {@code y}). Keys of other
 * types (symmetric {@code oct}, {@code OKP}) and keys whose {@code use} is not {@code sig} are skipped with a DEBUG
 * line, as a JWS consumer ignores keys it cannot use; a malformed key of a supported type refuses the whole set, so
 * that a broken JWKS never silently replaces a good one. At most {@link #MAX_KEYS} keys.
 *
 * <p>Immutable and thread-safe.
 *
 * @param keys the usable keys, in the order of the set
 */
record Jwks(List<Key> keys) {

    private static final Logger LOGGER = LogManager.getLogger(Jwks.class);
    static final int MAX_KEYS = 256;
    static final Jwks EMPTY = new Jwks(List.of());

    /**
     * One verification key.
     *
     * @param kid its key id, or null
     * @param alg the one JWS algorithm it may be used with ({@code alg} member), or null for any of its type
     * @param publicKey the key
     */
    record Key(String kid, String alg, PublicKey publicKey) {
    }

    /**
     * Parses a JWK Set document.
     *
     * @throws IllegalArgumentException with the reason when it is not a well-formed JWK Set
     */
    static Jwks parse(String json) {
        Object keysValue = Json.parseObject(json).get("keys");
        if (!(keysValue instanceof List<?> entries)) {
            throw new IllegalArgumentException("a JWK Set needs a \"keys\" array");
        }
        if (entries.size() > MAX_KEYS) {
            throw new IllegalArgumentException("the JWK Set has " + entries.size() + " keys, more than the "
                    + MAX_KEYS + " Cairn accepts");
        }
        List<Key> keys = new ArrayList<>();
        for (Object entry : entries) {
            if (!(entry instanceof Map<?, ?> jwk)) {
                throw new IllegalArgumentException("a JWK Set's keys must be JSON objects");
            }
            String kty = string(jwk, "kty");
            String kid = string(jwk, "kid");
            String use = string(jwk, "use");
            if (kty == null) {
                throw new IllegalArgumentException("a JWK without \"kty\"");
            }
            if (use != null && !use.equals("sig")) {
                LOGGER.debug("Skipping JWK {} whose use is {}", kid, use);
                continue;
            }
            PublicKey key = switch (kty) {
                case "RSA" -> rsa(jwk, kid);
                case "EC" -> ec(jwk, kid);
                default -> null;
            };
            if (key == null) {
                LOGGER.debug("Skipping JWK {} of type {}", kid, kty);
                continue;
            }
            keys.add(new Key(kid, string(jwk, "alg"), key));
        }
        return new Jwks(List.copyOf(keys));
    }

    private static PublicKey rsa(Map<?, ?> jwk, String kid) {
        BigInteger n = new BigInteger(1, bytes(jwk, "n", kid));
        BigInteger e = new BigInteger(1, bytes(jwk, "e", kid));
        try {
            return KeyFactory.getInstance("RSA").generatePublic(new RSAPublicKeySpec(n, e));
        } catch (GeneralSecurityException ex) {
            throw new IllegalArgumentException("bad RSA JWK " + kid + ": " + ex.getMessage());
        }
    }

    private static PublicKey ec(Map<?, ?> jwk, String kid) {
        String crv = string(jwk, "crv");
        String curve = crv == null ? null : switch (crv) {
            case "P-256" -> "secp256r1";
            case "P-384" -> "secp384r1";
            case "P-521" -> "secp521r1";
            default -> null;
        };
        if (curve == null) {
            LOGGER.debug("Skipping EC JWK {} on curve {}", kid, crv);
            return null;
        }
        try {
            AlgorithmParameters parameters = AlgorithmParameters.getInstance("EC");
            parameters.init(new ECGenParameterSpec(curve));
            ECParameterSpec spec = parameters.getParameterSpec(ECParameterSpec.class);
            int size = (spec.getCurve().getField().getFieldSize() + 7) / 8;
            byte[] x = bytes(jwk, "x", kid);
            byte[] y = bytes(jwk, "y", kid);
            if (x.length != size || y.length != size) {
                throw new IllegalArgumentException("bad EC JWK " + kid + ": coordinates of " + crv + " are " + size
                        + " bytes");
            }
            ECPoint point = new ECPoint(new BigInteger(1, x), new BigInteger(1, y));
            return KeyFactory.getInstance("EC").generatePublic(new ECPublicKeySpec(point, spec));
        } catch (GeneralSecurityException ex) {
            throw new IllegalArgumentException("bad EC JWK " + kid + ": " + ex.getMessage());
        }
    }

    private static String string(Map<?, ?> jwk, String member) {
        Object value = jwk.get(member);
        if (value == null) {
            return null;
        }
        if (!(value instanceof String s)) {
            throw new IllegalArgumentException("JWK member \"" + member + "\" is not a string");
        }
        return s;
    }

    private static byte[] bytes(Map<?, ?> jwk, String member, String kid) {
        String value = string(jwk, member);
        if (value == null || value.isEmpty()) {
            throw new IllegalArgumentException("JWK " + kid + " has no \"" + member + "\"");
        }
        try {
            return Base64.getUrlDecoder().decode(value);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("JWK " + kid + " member \"" + member + "\" is not base64url");
        }
    }

    /** The keys a token signed with {@code algorithm} and key id {@code kid} (may be null) may be verified with. */
    List<Key> candidates(JwsAlgorithm algorithm, String kid) {
        List<Key> candidates = new ArrayList<>();
        for (Key key : keys) {
            if (kid != null && !kid.equals(key.kid())) {
                continue;
            }
            if (key.alg() != null && !key.alg().equals(algorithm.name())) {
                continue;
            }
            if (algorithm.accepts(key.publicKey())) {
                candidates.add(key);
            }
        }
        return candidates;
    }

    /** Whether a key with id {@code kid} is in the set. */
    boolean hasKid(String kid) {
        for (Key key : keys) {
            if (kid.equals(key.kid())) {
                return true;
            }
        }
        return false;
    }
}
