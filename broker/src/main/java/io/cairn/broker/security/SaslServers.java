package io.cairn.broker.security;

import io.cairn.broker.config.SaslSettings;
import io.cairn.broker.security.oauth.OAuthBearerSaslServer;
import io.cairn.broker.security.oauth.TokenValidator;
import io.cairn.metadata.image.ScramMechanism;
import java.io.IOException;
import java.util.function.Function;

/**
 * Creates the {@link SaslServer} of an enabled mechanism for one connection of a SASL listener: PLAIN against the
 * listener's JAAS users, SCRAM-SHA-256/512 against the credentials in the metadata image, OAUTHBEARER with the
 * listener's {@link TokenValidator}, which is started here (a secured one fetches its JWKS on the constructing
 * thread and refreshes it in the background until {@link #close()}).
 *
 * <p>Immutable and thread-safe; the servers it creates are not.
 */
public final class SaslServers implements Function<String, SaslServer>, AutoCloseable {

    private final SaslSettings settings;
    private final ScramCredentials scramCredentials;
    /** The OAUTHBEARER token validator, or null when OAUTHBEARER is not enabled. */
    private final TokenValidator oauthBearer;

    public SaslServers(SaslSettings settings) {
        this(settings, ScramCredentials.NONE);
    }

    /**
     * @throws IllegalStateException when OAUTHBEARER's verification keys cannot be fetched (the listener does not
     *     start, as in Kafka)
     */
    public SaslServers(SaslSettings settings, ScramCredentials scramCredentials) {
        this.settings = settings;
        this.scramCredentials = scramCredentials;
        if (settings.oauthBearer() == null) {
            this.oauthBearer = null;
        } else {
            try {
                this.oauthBearer = TokenValidator.start(settings.oauthBearer());
            } catch (IOException e) {
                throw new IllegalStateException("Cannot start SASL listener " + settings.listenerName()
                        + ": OAUTHBEARER " + e.getMessage(), e);
            }
        }
    }

    @Override
    public SaslServer apply(String mechanism) {
        if (!settings.enabledMechanisms().contains(mechanism)) {
            throw new IllegalArgumentException("SASL mechanism " + mechanism + " is not enabled");
        }
        if (SaslSettings.PLAIN.equals(mechanism)) {
            return new PlainSaslServer(settings.jaasOf(mechanism));
        }
        if (SaslSettings.OAUTHBEARER.equals(mechanism)) {
            return new OAuthBearerSaslServer(oauthBearer);
        }
        ScramMechanism scram = ScramMechanism.forMechanismName(mechanism);
        if (scram != null) {
            return new ScramSaslServer(scram, scramCredentials);
        }
        throw new IllegalArgumentException("SASL mechanism " + mechanism + " is not served");
    }

    /** Stops the OAUTHBEARER key refresh, if any. */
    @Override
    public void close() {
        if (oauthBearer != null) {
            oauthBearer.close();
        }
    }
}
