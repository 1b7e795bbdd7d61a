package io.cairn.broker.security;

import io.cairn.broker.config.JaasConfig;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;

/**
 * SASL/PLAIN (RFC 4616) against the {@code user_<name>="<password>"} options of the listener's
 * {@code PlainLoginModule} JAAS config, as Kafka's {@code PlainServerCallbackHandler} checks them; the messages are
 * Kafka's {@code PlainSaslServer} ones. Passwords are compared in constant time, and an unknown user fails with the
 * same message as a wrong password.
 *
 * <p>Not thread-safe (one connection's exchange).
 */
public final class PlainSaslServer implements SaslServer {

    public static final String MECHANISM = "PLAIN";
    private static final String USER_PREFIX = "user_";

    private final JaasConfig jaas;
    private String authorizationId;

    public PlainSaslServer(JaasConfig jaas) {
        this.jaas = jaas;
    }

    @Override
    public String mechanism() {
        return MECHANISM;
    }

    @Override
    public byte[] evaluateResponse(byte[] clientToken) throws SaslAuthenticationException {
        List<String> tokens = tokens(new String(clientToken, StandardCharsets.UTF_8));
        String authorizationIdFromClient = tokens.get(0);
        String username = tokens.get(1);
        String password = tokens.get(2);
        if (username.isEmpty()) {
            throw new SaslAuthenticationException("Authentication failed: username not specified");
        }
        if (password.isEmpty()) {
            throw new SaslAuthenticationException("Authentication failed: password not specified");
        }
        String expected = jaas.option(USER_PREFIX + username);
        // Compared even for an unknown user (against the offered password itself, then discarded), so that the time
        // taken does not tell whether the user exists.
        byte[] offered = password.getBytes(StandardCharsets.UTF_8);
        byte[] stored = expected != null ? expected.getBytes(StandardCharsets.UTF_8) : offered.clone();
        boolean matches = MessageDigest.isEqual(offered, stored) && expected != null;
        if (!matches) {
            throw new SaslAuthenticationException("Authentication failed: Invalid username or password");
        }
        if (!authorizationIdFromClient.isEmpty() && !authorizationIdFromClient.equals(username)) {
            throw new SaslAuthenticationException("Authentication failed: Client requested an authorization id that "
                    + "is different from username");
        }
        authorizationId = username;
        return new byte[0];
    }

    /** authzid NUL authcid NUL passwd: exactly three fields. */
    private static List<String> tokens(String message) throws SaslAuthenticationException {
        List<String> tokens = new ArrayList<>();
        int start = 0;
        for (int i = 0; i < 4; i++) {
            int end = message.indexOf('\u0000', start);
            if (end < 0) {
                tokens.add(message.substring(start));
                break;
            }
            tokens.add(message.substring(start, end));
            start = end + 1;
        }
        if (tokens.size() != 3) {
            throw new SaslAuthenticationException("Invalid SASL/PLAIN response: expected 3 tokens, got "
                    + tokens.size());
        }
        return tokens;
    }

    @Override
    public boolean complete() {
        return authorizationId != null;
    }

    @Override
    public String authorizationId() {
        if (authorizationId == null) {
            throw new IllegalStateException("Authentication exchange has not completed");
        }
        return authorizationId;
    }
}
