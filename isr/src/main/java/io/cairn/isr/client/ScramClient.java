package io.cairn.isr.client;

import io.cairn.metadata.image.ScramMechanism;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Base64;

/**
 * The client side of one SCRAM exchange (RFC 5802), as Kafka's {@code ScramSaslClient} runs it: client-first
 * {@code n,,n=<user>,r=<nonce>}, then from the server-first message (whose nonce must extend ours and whose
 * iterations must be at least Kafka's minimum, 4096) the client-final message with the proof, then the server's
 * signature checked in constant time. Used by the inter-broker clients when
 * {@code sasl.mechanism.inter.broker.protocol} is SCRAM-SHA-256 or SCRAM-SHA-512.
 *
 * <p>Not thread-safe: one exchange, its three steps in order.
 */
public final class ScramClient {

    private final ScramMechanism mechanism;
    private final String username;
    private final String password;
    private final String clientNonce;
    private String clientFirstBare;
    private byte[] serverSignature;

    public ScramClient(ScramMechanism mechanism, String username, String password) {
        this(mechanism, username, password, ScramMechanism.secureRandomString());
    }

    /** With a given client nonce (RFC test vectors). */
    public ScramClient(ScramMechanism mechanism, String username, String password, String clientNonce) {
        this.mechanism = mechanism;
        this.username = username;
        this.password = password;
        this.clientNonce = clientNonce;
    }

    /** The client-first message. */
    public byte[] clientFirst() {
        clientFirstBare = "n=" + username.replace("=", "=3D").replace(",", "=2C") + ",r=" + clientNonce;
        return ("n,," + clientFirstBare).getBytes(StandardCharsets.UTF_8);
    }

    /** The client-final message answering {@code serverFirstBytes}. */
    public byte[] clientFinal(byte[] serverFirstBytes) throws IOException {
        String serverFirst = new String(serverFirstBytes, StandardCharsets.UTF_8);
        String[] fields = serverFirst.split(",", -1);
        if (fields.length < 3 || !fields[0].startsWith("r=") || !fields[1].startsWith("s=")
                || !fields[2].startsWith("i=")) {
            throw new IOException("Invalid SCRAM server first message format");
        }
        String nonce = fields[0].substring(2);
        if (!nonce.startsWith(clientNonce) || nonce.length() == clientNonce.length()) {
            throw new IOException("Invalid server nonce: does not start with client nonce");
        }
        byte[] salt;
        int iterations;
        try {
            salt = Base64.getDecoder().decode(fields[1].substring(2));
            iterations = Integer.parseInt(fields[2].substring(2));
        } catch (IllegalArgumentException e) {
            throw new IOException("Invalid SCRAM server first message format: " + e.getMessage());
        }
        if (iterations < ScramMechanism.MIN_ITERATIONS) {
            throw new IOException("Requested iterations " + iterations + " is less than the minimum "
                    + ScramMechanism.MIN_ITERATIONS + " for " + mechanism);
        }
        String withoutProof = "c=" + Base64.getEncoder().encodeToString("n,,".getBytes(StandardCharsets.US_ASCII))
                + ",r=" + nonce;
        byte[] authMessage = (clientFirstBare + "," + serverFirst + "," + withoutProof)
                .getBytes(StandardCharsets.UTF_8);
        byte[] saltedPassword = mechanism.saltedPassword(password, salt, iterations);
        byte[] clientKey = mechanism.clientKey(saltedPassword);
        byte[] clientSignature = mechanism.hmac(mechanism.storedKey(clientKey), authMessage);
        byte[] proof = new byte[clientKey.length];
        for (int i = 0; i < proof.length; i++) {
            proof[i] = (byte) (clientKey[i] ^ clientSignature[i]);
        }
        serverSignature = mechanism.hmac(mechanism.serverKey(saltedPassword), authMessage);
        return (withoutProof + ",p=" + Base64.getEncoder().encodeToString(proof)).getBytes(StandardCharsets.UTF_8);
    }

    /** Checks the server-final message: an error, or a signature other than the one expected, fails. */
    public void verifyServerFinal(byte[] serverFinalBytes) throws IOException {
        String serverFinal = new String(serverFinalBytes, StandardCharsets.UTF_8);
        if (serverFinal.startsWith("e=")) {
            throw new IOException("Sasl authentication using " + mechanism + " failed with error: "
                    + serverFinal.substring(2));
        }
        int end = serverFinal.indexOf(',');
        String signature = serverFinal.startsWith("v=") ? serverFinal.substring(2, end < 0 ? serverFinal.length()
                : end) : "";
        byte[] received;
        try {
            received = Base64.getDecoder().decode(signature);
        } catch (IllegalArgumentException e) {
            throw new IOException("Invalid SCRAM server final message format");
        }
        if (serverSignature == null || !MessageDigest.isEqual(received, serverSignature)) {
            throw new IOException("Invalid server signature in server final message");
        }
    }
}
