package io.cairn.broker.security;

import io.cairn.metadata.controller.DelegationTokenSettings;
import io.cairn.metadata.image.DelegationToken;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.MetadataListener;
import io.cairn.metadata.image.MetadataUpdate;
import io.cairn.metadata.image.ScramCredential;
import io.cairn.metadata.image.ScramMechanism;
import java.util.Base64;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Map;

/**
 * The SCRAM credentials of the delegation tokens in the metadata image, as Kafka's {@code DelegationTokenCache}
 * holds them: for every token and every SCRAM mechanism, a credential whose password is the token's base64 HMAC
 * (HmacSHA512 of the token id with {@code delegation.token.secret.key}), with a random salt and Kafka's minimum
 * iterations. The key derivation (PBKDF2) runs when a token appears in a committed image, on the metadata apply
 * thread, never on a network thread; a token renewed keeps its credentials.
 *
 * <p>Thread-safe: updated by the apply thread, read by any thread through one volatile map.
 */
public final class DelegationTokenCache implements MetadataListener {

    private record Entry(DelegationToken token, Map<ScramMechanism, ScramCredential> credentials) {
    }

    private final DelegationTokenSettings settings;
    private volatile Map<String, Entry> entries = Map.of();
    /** The offset of the image the entries reflect (guarded by this); an older image never replaces them. */
    private long offset = Long.MIN_VALUE;

    public DelegationTokenCache(DelegationTokenSettings settings) {
        this.settings = settings;
    }

    /** Loads the tokens of the image a subscription starts from. */
    public void load(MetadataImage image) {
        refresh(image);
    }

    @Override
    public void onUpdate(MetadataUpdate update) {
        if (update.image().delegationTokens() != update.previous().delegationTokens()) {
            refresh(update.image());
        }
    }

    private synchronized void refresh(MetadataImage image) {
        if (!settings.enabled() || image.offset() < offset) {
            return;
        }
        offset = image.offset();
        Map<String, Entry> current = entries;
        Map<String, Entry> next = new HashMap<>();
        for (DelegationToken token : image.delegationTokens().values()) {
            Entry known = current.get(token.tokenId());
            next.put(token.tokenId(), new Entry(token, known != null ? known.credentials() : derive(token)));
        }
        entries = Map.copyOf(next);
    }

    private Map<ScramMechanism, ScramCredential> derive(DelegationToken token) {
        String password = Base64.getEncoder().encodeToString(settings.hmac(token.tokenId()));
        Map<ScramMechanism, ScramCredential> credentials = new EnumMap<>(ScramMechanism.class);
        for (ScramMechanism mechanism : ScramMechanism.values()) {
            byte[] salt = ScramMechanism.randomSalt();
            credentials.put(mechanism, mechanism.credential(token.tokenId(), salt,
                    mechanism.saltedPassword(password, salt, ScramMechanism.MIN_ITERATIONS),
                    ScramMechanism.MIN_ITERATIONS));
        }
        return credentials;
    }

    /** The login credential of token {@code tokenId} for {@code mechanism}, or null when there is no such token. */
    public ScramCredentials.TokenCredential credential(String tokenId, ScramMechanism mechanism) {
        Entry entry = entries.get(tokenId);
        if (entry == null) {
            return null;
        }
        DelegationToken token = entry.token();
        return new ScramCredentials.TokenCredential(DelegationToken.principalName(token.owner()),
                token.expirationTimestamp(), token.maxTimestamp(), entry.credentials().get(mechanism));
    }
}
