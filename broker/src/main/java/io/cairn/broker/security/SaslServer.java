package io.cairn.broker.security;

import java.util.OptionalLong;

/**
 * The server side of one SASL mechanism's exchange on one connection (the part of
 * {@code javax.security.sasl.SaslServer} Kafka's authenticator uses): each client token in, the server's token
 * out, until {@link #complete()}.
 *
 * <p>Not thread-safe: one connection's tokens are evaluated one after another (possibly on different threads, each
 * call happening-after the previous one).
 */
public interface SaslServer {

    /** The mechanism name, e.g. {@code PLAIN}. */
    String mechanism();

    /**
     * Evaluates the client's next token.
     *
     * @return the server's reply token (empty when there is nothing to send)
     * @throws SaslAuthenticationException when the client failed to authenticate; the message goes to the client
     */
    byte[] evaluateResponse(byte[] clientToken) throws SaslAuthenticationException;

    boolean complete();

    /** The authenticated user name; only once {@link #complete()}. */
    String authorizationId();

    /**
     * True when the client authenticated with a delegation token (Kafka's {@code tokenauth} SCRAM extension); the
     * principal is then the token's owner. Only once {@link #complete()}.
     */
    default boolean tokenAuthenticated() {
        return false;
    }

    /**
     * When the credential the client authenticated with expires, in epoch milliseconds (an OAUTHBEARER token's
     * {@code exp}): the session must not outlive it (Kafka's credential lifetime, KIP-368). Empty when the credential
     * does not expire; only once {@link #complete()}.
     */
    default OptionalLong credentialExpiryMs() {
        return OptionalLong.empty();
    }

    /**
     * True when evaluating a token costs enough CPU (a key derivation such as PBKDF2, a signature verification) or may
     * wait (a JWKS refresh) so that it must not run on a network thread. SCRAM's server side only computes HMACs of
     * stored keys, so it is not; OAUTHBEARER is.
     */
    default boolean expensive() {
        return false;
    }
}
