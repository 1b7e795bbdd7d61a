package io.cairn.broker.security;

import io.cairn.broker.config.SaslSettings;
import java.util.function.Function;

/**
 * Creates the {@link SaslServer} of an enabled mechanism for one connection of a SASL listener.
 *
 * <p>Immutable and thread-safe; the servers it creates are not.
 */
public final class SaslServers implements Function<String, SaslServer> {

    private final SaslSettings settings;

    public SaslServers(SaslSettings settings) {
        this.settings = settings;
    }

    @Override
    public SaslServer apply(String mechanism) {
        if (SaslSettings.PLAIN.equals(mechanism)) {
            return new PlainSaslServer(settings.jaasOf(mechanism));
        }
        throw new IllegalArgumentException("SASL mechanism " + mechanism + " is not enabled");
    }
}
