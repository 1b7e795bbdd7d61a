package io.cairn.broker.security.oauth;

import java.security.GeneralSecurityException;
import java.security.PublicKey;
import java.security.Signature;
import java.security.interfaces.ECPublicKey;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.MGF1ParameterSpec;
import java.security.spec.PSSParameterSpec;

/**
 * The JWS signature algorithms (RFC 7518 section 3) the secured validator verifies with the JDK's providers:
 * RSASSA-PKCS1-v1_5 (RS256/384/512), RSASSA-PSS (PS256/384/512) and ECDSA (ES256/384/512, whose signature is the
 * fixed-size R||S concatenation, the JDK's {@code P1363} format). {@code none} and the HMAC algorithms are not here:
 * a signed token must be signed with a public key of the JWKS. RSA keys shorter than 2048 bits are refused (RFC 7518
 * section 3.3; jose4j, which Kafka uses, refuses them too).
 *
 * <p>Immutable and thread-safe ({@link Signature} objects are created per verification).
 */
enum JwsAlgorithm {
    RS256("RSA", "SHA256withRSA", null, 0),
    RS384("RSA", "SHA384withRSA", null, 0),
    RS512("RSA", "SHA512withRSA", null, 0),
    PS256("RSA", "RSASSA-PSS", new PSSParameterSpec("SHA-256", "MGF1", MGF1ParameterSpec.SHA256, 32, 1), 0),
    PS384("RSA", "RSASSA-PSS", new PSSParameterSpec("SHA-384", "MGF1", MGF1ParameterSpec.SHA384, 48, 1), 0),
    PS512("RSA", "RSASSA-PSS", new PSSParameterSpec("SHA-512", "MGF1", MGF1ParameterSpec.SHA512, 64, 1), 0),
    ES256("EC", "SHA256withECDSAinP1363Format", null, 256),
    ES384("EC", "SHA384withECDSAinP1363Format", null, 384),
    ES512("EC", "SHA512withECDSAinP1363Format", null, 521);

    static final int MIN_RSA_BITS = 2048;

    private final String keyType;
    private final String jcaName;
    private final PSSParameterSpec pss;
    /** The field size in bits of the curve ESxxx requires (P-256, P-384, P-521), 0 for RSA. */
    private final int curveBits;

    JwsAlgorithm(String keyType, String jcaName, PSSParameterSpec pss, int curveBits) {
        this.keyType = keyType;
        this.jcaName = jcaName;
        this.pss = pss;
        this.curveBits = curveBits;
    }

    /** The algorithm named {@code alg} in a JWS header, or null when it is not one of these. */
    static JwsAlgorithm forName(String alg) {
        for (JwsAlgorithm algorithm : values()) {
            if (algorithm.name().equals(alg)) {
                return algorithm;
            }
        }
        return null;
    }

    /** The JWK {@code kty} of the keys this algorithm verifies with. */
    String keyType() {
        return keyType;
    }

    /** Whether {@code key} is of the right type (and curve or size) for this algorithm. */
    boolean accepts(PublicKey key) {
        if (curveBits == 0) {
            return key instanceof RSAPublicKey rsa && rsa.getModulus().bitLength() >= MIN_RSA_BITS;
        }
        return key instanceof ECPublicKey ec && ec.getParams().getCurve().getField().getFieldSize() == curveBits;
    }

    /** Whether {@code signature} is a valid signature of {@code signingInput} by {@code key}. */
    boolean verify(PublicKey key, byte[] signingInput, byte[] signature) {
        if (!accepts(key)) {
            return false;
        }
        if (curveBits != 0 && signature.length != 2 * ((curveBits + 7) / 8)) {
            return false;
        }
        try {
            Signature verifier = Signature.getInstance(jcaName);
            if (pss != null) {
                verifier.setParameter(pss);
            }
            verifier.initVerify(key);
            verifier.update(signingInput);
            return verifier.verify(signature);
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            return false;
        }
    }
}
