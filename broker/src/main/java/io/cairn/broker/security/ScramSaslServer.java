package io.cairn.broker.security;

import io.cairn.broker.security.ScramMessages.ClientFinal;
import io.cairn.broker.security.ScramMessages.ClientFirst;
import io.cairn.broker.security.ScramMessages.ScramFormatException;
import io.cairn.metadata.image.ScramCredential;
import io.cairn.metadata.image.ScramMechanism;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Locale;
import java.util.OptionalLong;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * SASL/SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka's {@code ScramSaslServer} serves them:
 * client-first in, server-first out ({@code r=<client nonce><server nonce>,s=<salt>,i=<iterations>}), client-final
 * in, server-final out ({@code v=<ServerSignature>}). The credential is the user's in the broker's current metadata
 * image; the client proof is checked by recomputing StoredKey and comparing it in constant time
 * ({@link MessageDigest#isEqual}).
 *
 * <p>Every failure a client could learn something from is answered with Kafka's one message, "Authentication failed
 * during authentication due to invalid credentials with SASL mechanism &lt;mechanism&gt;": a wrong password, a
 * malformed message, a bad nonce, an unknown or expired delegation token and an unknown user. An unknown user is
 * not refused at the first message (where Kafka refuses it): it gets a server-first message with a salt derived
 * from the user name and a secret of this broker and Kafka's minimum iterations, and fails at the proof exactly as a
 * wrong password does, so the exchange does not tell whether a user exists (RFC 5802 section 9). Only the
 * authorization-id check has its own message, as in Kafka.
 *
 * <p>Delegation tokens (KIP-48): a client-first message with the extension {@code tokenauth=true} names a token id as
 * its user and proves the token's base64 HMAC as its password, against the credential the broker derived from the
 * token ({@link ScramCredentials#tokenCredential}). An unknown token fails at the first message, as in Kafka; so does
 * a token past its expiry (Kafka accepts it until the controller's expiry sweep removes it). The authenticated
 * principal is the token's owner, marked token-authenticated.
 *
 * <p>The server never computes {@code Hi()} (only HMACs and hashes of a few hundred bytes), so it is cheap enough
 * to run on the network thread. Not thread-safe (one connection's exchange).
 */
public final class ScramSaslServer implements SaslServer {

    private static final Logger LOGGER = LogManager.getLogger(ScramSaslServer.class);
    /** Keys the salts of unknown users; random per broker process, so they are stable within one broker's life. */
    private static final byte[] UNKNOWN_USER_SECRET = new SecureRandom().generateSeed(32);

    private enum State { RECEIVE_CLIENT_FIRST_MESSAGE, RECEIVE_CLIENT_FINAL_MESSAGE, COMPLETE, FAILED }

    private final ScramMechanism mechanism;
    private final ScramCredentials credentials;
    private final Supplier<String> serverNonces;
    private State state = State.RECEIVE_CLIENT_FIRST_MESSAGE;
    private ScramCredential credential;
    private boolean knownUser;
    private String username;
    private String clientFirstBare;
    private String serverFirst;
    private String nonce;
    private String authorizationId;
    /** The owner of the delegation token being used, or null for a user login. */
    private String tokenOwner;
    private long tokenExpiryMs = -1L;

    public ScramSaslServer(ScramMechanism mechanism, ScramCredentials credentials) {
        this(mechanism, credentials, ScramMechanism::secureRandomString);
    }

    /** With a given source of server nonces (RFC test vectors). */
    ScramSaslServer(ScramMechanism mechanism, ScramCredentials credentials, Supplier<String> serverNonces) {
        this.mechanism = mechanism;
        this.credentials = credentials;
        this.serverNonces = serverNonces;
    }

    @Override
    public String mechanism() {
        return mechanism.mechanismName();
    }

    @Override
    public byte[] evaluateResponse(byte[] clientToken) throws SaslAuthenticationException {
        try {
            return switch (state) {
                case RECEIVE_CLIENT_FIRST_MESSAGE -> clientFirst(ScramMessages.clientFirst(clientToken));
                case RECEIVE_CLIENT_FINAL_MESSAGE -> clientFinal(ScramMessages.clientFinal(clientToken));
                default -> throw invalidCredentials("unexpected token in state " + state);
            };
        } catch (ScramFormatException e) {
            throw invalidCredentials(e.getMessage());
        } catch (SaslAuthenticationException e) {
            state = State.FAILED;
            credential = null;
            throw e;
        }
    }

    private byte[] clientFirst(ClientFirst first) throws SaslAuthenticationException {
        username = first.username();
        ScramCredentials.TokenCredential token = null;
        if (first.tokenAuthenticated()) {
            token = credentials.tokenCredential(username, mechanism);
            if (token == null || token.expired(System.currentTimeMillis())) {
                throw invalidCredentials("Token Authentication failed: Invalid tokenId : " + username);
            }
        }
        if (!first.authorizationId().isEmpty() && !first.authorizationId().equals(username)) {
            throw new SaslAuthenticationException("Authentication failed: Client requested an authorization id that "
                    + "is different from username");
        }
        credential = token != null ? token.credential() : credentials.credential(username, mechanism);
        tokenOwner = token != null ? token.ownerName() : null;
        tokenExpiryMs = token != null ? token.expirationTimestamp() : -1L;
        knownUser = credential != null;
        if (!knownUser) {
            credential = unknownUserCredential(username);
        } else if (credential.iterations() < ScramMechanism.MIN_ITERATIONS) {
            throw invalidCredentials("Iterations " + credential.iterations() + " is less than the minimum "
                    + ScramMechanism.MIN_ITERATIONS + " for " + mechanism);
        }
        nonce = first.nonce() + serverNonces.get();
        clientFirstBare = first.bare();
        serverFirst = "r=" + nonce + ",s=" + Base64.getEncoder().encodeToString(credential.salt()) + ",i="
                + credential.iterations();
        state = State.RECEIVE_CLIENT_FINAL_MESSAGE;
        return serverFirst.getBytes(StandardCharsets.US_ASCII);
    }

    private byte[] clientFinal(ClientFinal last) throws SaslAuthenticationException {
        if (!last.nonce().equals(nonce)) {
            throw invalidCredentials("Invalid client nonce in the final client message.");
        }
        byte[] authMessage = (clientFirstBare + "," + serverFirst + "," + last.withoutProof())
                .getBytes(StandardCharsets.US_ASCII);
        byte[] storedKey = credential.storedKey();
        byte[] clientSignature = mechanism.hmac(storedKey, authMessage);
        byte[] proof = last.proof();
        if (proof.length != clientSignature.length) {
            throw invalidCredentials("Invalid client proof length " + proof.length);
        }
        byte[] clientKey = new byte[proof.length];
        for (int i = 0; i < proof.length; i++) {
            clientKey[i] = (byte) (proof[i] ^ clientSignature[i]);
        }
        boolean proven = MessageDigest.isEqual(mechanism.hash(clientKey), storedKey);
        if (!proven || !knownUser) {
            throw invalidCredentials("Invalid client credentials");
        }
        byte[] serverSignature = mechanism.hmac(credential.serverKey(), authMessage);
        authorizationId = tokenOwner != null ? tokenOwner : username;
        credential = null;
        state = State.COMPLETE;
        return ("v=" + Base64.getEncoder().encodeToString(serverSignature)).getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * The stand-in credential of a user without one: a salt that is the same on every attempt for the same name
     * (so retries do not reveal it is made up), Kafka's minimum iterations, and keys no password matches.
     */
    private ScramCredential unknownUserCredential(String user) {
        byte[] seed = mechanism.hmac(UNKNOWN_USER_SECRET, user.getBytes(StandardCharsets.UTF_8));
        byte[] salt = Base64.getEncoder().withoutPadding().encodeToString(seed).substring(0, 26)
                .toLowerCase(Locale.ROOT).getBytes(StandardCharsets.US_ASCII);
        byte[] keys = mechanism.hmac(UNKNOWN_USER_SECRET, seed);
        return new ScramCredential(user, mechanism.type(), salt, keys, keys, ScramMechanism.MIN_ITERATIONS);
    }

    /** Kafka's SaslException path: the reason is logged at DEBUG, the client gets the one generic message. */
    private SaslAuthenticationException invalidCredentials(String reason) {
        LOGGER.debug("SASL/{} authentication failed: {}", mechanism, reason);
        state = State.FAILED;
        credential = null;
        return new SaslAuthenticationException(invalidCredentialsMessage(mechanism.mechanismName()));
    }

    /** Kafka's {@code SaslServerAuthenticator} message for a failed exchange that must not say why. */
    public static String invalidCredentialsMessage(String mechanism) {
        return "Authentication failed during authentication due to invalid credentials with SASL mechanism "
                + mechanism;
    }

    @Override
    public boolean tokenAuthenticated() {
        return state == State.COMPLETE && tokenOwner != null;
    }

    /** A delegation token's expiry, which bounds the session as Kafka's credential lifetime (KIP-368). */
    @Override
    public OptionalLong credentialExpiryMs() {
        return tokenAuthenticated() ? OptionalLong.of(tokenExpiryMs) : OptionalLong.empty();
    }

    @Override
    public boolean complete() {
        return state == State.COMPLETE;
    }

    @Override
    public String authorizationId() {
        if (state != State.COMPLETE) {
            throw new IllegalStateException("Authentication exchange has not completed");
        }
        return authorizationId;
    }
}
