package io.cairn.broker.security;

import io.cairn.broker.config.SaslSettings;
import io.cairn.metadata.image.ScramMechanism;
import java.util.function.Function;

/**
 * Creates the {@link SaslServer} of an enabled mechanism for one connection of a SASL listener: PLAIN against the
 * listener's JAAS users, SCRAM-SHA-256/512 against the credentials in the metadata image.
 *
 * <p>Immutable and thread-safe; the servers it creates are not.
 */
public final class SaslServers implements Function<String, SaslServer> {

    private final SaslSettings settings;
    private final ScramCredentials scramCredentials;

    public SaslServers(SaslSettings settings) {
        this(settings, ScramCredentials.NONE);
    }

    public SaslServers(SaslSettings settings, ScramCredentials scramCredentials) {
        this.settings = settings;
        this.scramCredentials = scramCredentials;
    }

    @Override
    public SaslServer apply(String mechanism) {
        if (!settings.enabledMechanisms().contains(mechanism)) {
            throw new IllegalArgumentException("SASL mechanism " + mechanism + " is not enabled");
        }
        if (SaslSettings.PLAIN.equals(mechanism)) {
            return new PlainSaslServer(settings.jaasOf(mechanism));
        }
        ScramMechanism scram = ScramMechanism.forMechanismName(mechanism);
        if (scram != null) {
            return new ScramSaslServer(scram, scramCredentials);
        }
        throw new IllegalArgumentException("SASL mechanism " + mechanism + " is not served");
    }
}
