package io.cairn.broker.security.oauth;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.interfaces.ECPublicKey;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.MGF1ParameterSpec;
import java.security.spec.PSSParameterSpec;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/** Test keys, signed JWTs and JWK Sets, made with the JDK alone. */
final class JwtFixtures {

    private JwtFixtures() {
    }

    static KeyPair rsa(int bits) {
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
            generator.initialize(bits);
            return generator.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    static KeyPair ec(String curve) {
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
            generator.initialize(new ECGenParameterSpec(curve));
            return generator.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    static String b64(byte[] bytes) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    static String b64(String text) {
        return b64(text.getBytes(StandardCharsets.UTF_8));
    }

    /** An unsigned BigInteger's big-endian bytes, left-padded to {@code size} (0: minimal). */
    static byte[] unsigned(BigInteger value, int size) {
        byte[] bytes = value.toByteArray();
        if (bytes.length > 1 && bytes[0] == 0) {
            bytes = java.util.Arrays.copyOfRange(bytes, 1, bytes.length);
        }
        if (size == 0 || bytes.length == size) {
            return bytes;
        }
        byte[] padded = new byte[size];
        System.arraycopy(bytes, 0, padded, size - bytes.length, bytes.length);
        return padded;
    }

    /** The JWK of a public key, with {@code kid}. */
    static Map<String, Object> jwk(KeyPair pair, String kid) {
        Map<String, Object> jwk = new LinkedHashMap<>();
        if (pair.getPublic() instanceof RSAPublicKey rsa) {
            jwk.put("kty", "RSA");
            jwk.put("kid", kid);
            jwk.put("use", "sig");
            jwk.put("n", b64(unsigned(rsa.getModulus(), 0)));
            jwk.put("e", b64(unsigned(rsa.getPublicExponent(), 0)));
        } else {
            ECPublicKey ec = (ECPublicKey) pair.getPublic();
            int bits = ec.getParams().getCurve().getField().getFieldSize();
            int size = (bits + 7) / 8;
            jwk.put("kty", "EC");
            jwk.put("kid", kid);
            jwk.put("crv", bits == 256 ? "P-256" : bits == 384 ? "P-384" : "P-521");
            jwk.put("x", b64(unsigned(ec.getW().getAffineX(), size)));
            jwk.put("y", b64(unsigned(ec.getW().getAffineY(), size)));
        }
        return jwk;
    }

    static String jwks(List<Map<String, Object>> keys) {
        return json(Map.of("keys", keys));
    }

    /** A compact JWS of {@code claims} signed by {@code key} with {@code alg} (RS/PS/ES), header {@code kid}. */
    static String sign(String alg, String kid, PrivateKey key, Map<String, Object> claims) {
        Map<String, Object> header = new LinkedHashMap<>();
        header.put("alg", alg);
        header.put("typ", "JWT");
        if (kid != null) {
            header.put("kid", kid);
        }
        return sign(header, key, claims);
    }

    static String sign(Map<String, Object> header, PrivateKey key, Map<String, Object> claims) {
        String input = b64(json(header)) + "." + b64(json(claims));
        String alg = (String) header.get("alg");
        try {
            Signature signer = switch (alg.substring(0, 2)) {
                case "RS" -> Signature.getInstance("SHA" + alg.substring(2) + "withRSA");
                case "ES" -> Signature.getInstance("SHA" + alg.substring(2) + "withECDSAinP1363Format");
                case "PS" -> {
                    Signature pss = Signature.getInstance("RSASSA-PSS");
                    String hash = "SHA-" + alg.substring(2);
                    pss.setParameter(new PSSParameterSpec(hash, "MGF1", new MGF1ParameterSpec(hash),
                            Integer.parseInt(alg.substring(2)) / 8, 1));
                    yield pss;
                }
                default -> throw new IllegalArgumentException(alg);
            };
            signer.initSign(key);
            signer.update(input.getBytes(StandardCharsets.US_ASCII));
            return input + "." + b64(signer.sign());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** An unsecured JWS (alg none, empty signature). */
    static String unsecured(Map<String, Object> claims) {
        return b64(json(Map.of("alg", "none"))) + "." + b64(json(claims)) + ".";
    }

    /** Claims with sub, iat now and exp in an hour, plus {@code extra}. */
    static Map<String, Object> claims(long nowMs, Map<String, Object> extra) {
        Map<String, Object> claims = new LinkedHashMap<>();
        claims.put("sub", "alice");
        claims.put("iat", nowMs / 1000);
        claims.put("exp", nowMs / 1000 + 3600);
        claims.putAll(extra);
        return claims;
    }

    /** JSON of maps, lists, strings, numbers and booleans. */
    static String json(Object value) {
        if (value instanceof Map<?, ?> map) {
            return map.entrySet().stream().map(e -> json(e.getKey()) + ":" + json(e.getValue()))
                    .collect(Collectors.joining(",", "{", "}"));
        }
        if (value instanceof List<?> list) {
            return list.stream().map(JwtFixtures::json).collect(Collectors.joining(",", "[", "]"));
        }
        if (value instanceof String s) {
            return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
        }
        return String.valueOf(value);
    }
}
