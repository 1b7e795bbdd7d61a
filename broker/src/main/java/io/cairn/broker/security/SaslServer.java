package io.cairn.broker.security;

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
     * True when evaluating a token costs enough CPU (a key derivation such as PBKDF2) that it must not run on a
     * network thread. SCRAM's server side only computes HMACs of stored keys, so no mechanism Cairn serves is.
     */
    default boolean expensive() {
        return false;
    }
}
