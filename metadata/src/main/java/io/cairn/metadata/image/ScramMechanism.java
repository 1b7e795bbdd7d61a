package io.cairn.metadata.image;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The SCRAM mechanisms Kafka serves (RFC 5802 with the hashes of RFC 7677 and Kafka's SHA-512 variant), with
 * Kafka's type ids (the {@code Mechanism} of UserScramCredentialRecord and of the Alter/DescribeUserScramCredentials
 * APIs), iteration bounds (4096..16384, Kafka's {@code ScramMechanism}) and the RFC 5802 functions everything that
 * stores or checks a credential needs: {@code Hi} (PBKDF2 with the mechanism's HMAC), ClientKey, StoredKey,
 * ServerKey. The broker's SASL server and the inter-broker client use them on the wire; the controller and
 * {@code cairn-storage format --add-scram} use them to turn a salted password into the stored keys.
 *
 * <p>Stateless and thread-safe: each call takes its own {@link Mac} and {@link MessageDigest}.
 */
public enum ScramMechanism {
    SCRAM_SHA_256((byte) 1, "SHA-256", "HmacSHA256"),
    SCRAM_SHA_512((byte) 2, "SHA-512", "HmacSHA512");

    /** The fewest iterations Kafka accepts, in a stored credential and in a server-first message. */
    public static final int MIN_ITERATIONS = 4096;
    /** The most iterations Kafka's controller accepts (ScramControlManager.MAX_ITERATIONS). */
    public static final int MAX_ITERATIONS = 16384;

    private static final SecureRandom RANDOM = new SecureRandom();

    private final byte type;
    private final String mechanismName;
    private final String hashAlgorithm;
    private final String macAlgorithm;

    ScramMechanism(byte type, String hashAlgorithm, String macAlgorithm) {
        this.type = type;
        this.mechanismName = "SCRAM-" + hashAlgorithm;
        this.hashAlgorithm = hashAlgorithm;
        this.macAlgorithm = macAlgorithm;
    }

    /** The id in records and in the Kafka APIs (1 SCRAM-SHA-256, 2 SCRAM-SHA-512). */
    public byte type() {
        return type;
    }

    /** The SASL mechanism name, e.g. {@code SCRAM-SHA-256}. */
    public String mechanismName() {
        return mechanismName;
    }

    /** The mechanism of a SASL name (exact, as Kafka matches it), or null. */
    public static ScramMechanism forMechanismName(String name) {
        for (ScramMechanism mechanism : values()) {
            if (mechanism.mechanismName.equals(name)) {
                return mechanism;
            }
        }
        return null;
    }

    /** The mechanism of a type id, or null for an unknown one (Kafka's {@code ScramMechanism.UNKNOWN}). */
    public static ScramMechanism forType(byte type) {
        for (ScramMechanism mechanism : values()) {
            if (mechanism.type == type) {
                return mechanism;
            }
        }
        return null;
    }

    /** HMAC(key, bytes) with the mechanism's hash. */
    public byte[] hmac(byte[] key, byte[] bytes) {
        try {
            Mac mac = Mac.getInstance(macAlgorithm);
            mac.init(new SecretKeySpec(key, macAlgorithm));
            return mac.doFinal(bytes);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(macAlgorithm + " is not available in this JVM", e);
        }
    }

    /** H(bytes). */
    public byte[] hash(byte[] bytes) {
        try {
            return MessageDigest.getInstance(hashAlgorithm).digest(bytes);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(hashAlgorithm + " is not available in this JVM", e);
        }
    }

    /**
     * RFC 5802's {@code Hi(password, salt, i)}, the salted password. The password is used as its UTF-8 bytes, as
     * Kafka does (no SASLprep), so credentials made by Kafka's tools and by Cairn's agree.
     */
    public byte[] saltedPassword(String password, byte[] salt, int iterations) {
        if (iterations < 1) {
            throw new IllegalArgumentException("iterations must be positive, not " + iterations);
        }
        try {
            Mac mac = Mac.getInstance(macAlgorithm);
            mac.init(new SecretKeySpec(password.getBytes(StandardCharsets.UTF_8), macAlgorithm));
            mac.update(salt);
            byte[] previous = mac.doFinal(new byte[] {0, 0, 0, 1});
            byte[] result = previous.clone();
            for (int i = 2; i <= iterations; i++) {
                previous = mac.doFinal(previous);
                for (int j = 0; j < result.length; j++) {
                    result[j] ^= previous[j];
                }
            }
            return result;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(macAlgorithm + " is not available in this JVM", e);
        }
    }

    /** ClientKey = HMAC(SaltedPassword, "Client Key"). */
    public byte[] clientKey(byte[] saltedPassword) {
        return hmac(saltedPassword, "Client Key".getBytes(StandardCharsets.US_ASCII));
    }

    /** StoredKey = H(ClientKey). */
    public byte[] storedKey(byte[] clientKey) {
        return hash(clientKey);
    }

    /** ServerKey = HMAC(SaltedPassword, "Server Key"). */
    public byte[] serverKey(byte[] saltedPassword) {
        return hmac(saltedPassword, "Server Key".getBytes(StandardCharsets.US_ASCII));
    }

    /** The credential stored for a salted password: what Kafka's controller keeps (never the password). */
    public ScramCredential credential(String user, byte[] salt, byte[] saltedPassword, int iterations) {
        return new ScramCredential(user, type, salt, storedKey(clientKey(saltedPassword)), serverKey(saltedPassword),
                iterations);
    }

    /**
     * A random salt or nonce as Kafka's {@code ScramFormatter.secureRandomString} makes it: 130 random bits written
     * in base 36 (printable, never a comma).
     */
    public static String secureRandomString() {
        return new BigInteger(130, RANDOM).toString(Character.MAX_RADIX);
    }

    /** A new random salt (the UTF-8 bytes of {@link #secureRandomString()}, as Kafka's tools make one). */
    public static byte[] randomSalt() {
        return secureRandomString().getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
        return mechanismName;
    }
}
