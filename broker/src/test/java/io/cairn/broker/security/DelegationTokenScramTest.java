package io.cairn.broker.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.metadata.controller.DelegationTokenSettings;
import io.cairn.metadata.image.MetadataChanges;
import io.cairn.metadata.image.MetadataDelta;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.MetadataUpdate;
import io.cairn.metadata.image.ScramCredential;
import io.cairn.metadata.image.ScramMechanism;
import io.cairn.metadata.record.DelegationTokenRecord;
import io.cairn.metadata.record.RemoveDelegationTokenRecord;
import io.cairn.wire.protocol.ApiMessage;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;

/** SCRAM logins with delegation tokens ({@code tokenauth=true}) against the credentials derived per token. */
class DelegationTokenScramTest {

    private static final String FAILED_256 = "Authentication failed during authentication due to invalid credentials "
            + "with SASL mechanism SCRAM-SHA-256";
    private static final DelegationTokenSettings SETTINGS =
            new DelegationTokenSettings("secret", 604_800_000L, 86_400_000L, 3_600_000L);

    private final DelegationTokenCache cache = new DelegationTokenCache(SETTINGS);
    private MetadataImage image = MetadataImage.EMPTY;

    private final ScramCredentials credentials = new ScramCredentials() {
        @Override
        public ScramCredential credential(String user, ScramMechanism mechanism) {
            return null;
        }

        @Override
        public TokenCredential tokenCredential(String tokenId, ScramMechanism mechanism) {
            return cache.credential(tokenId, mechanism);
        }
    };

    private void replay(ApiMessage record, long offset) {
        MetadataImage previous = image;
        image = new MetadataDelta(previous).replay(record).apply(offset);
        cache.onUpdate(new MetadataUpdate(previous, image, MetadataChanges.between(previous, image)));
    }

    private void addToken(String id, String owner, long expiry) {
        replay(new DelegationTokenRecord().setTokenId(id).setOwner(owner).setRequester(owner).setRenewers(List.of())
                .setIssueTimestamp(0L).setMaxTimestamp(Long.MAX_VALUE).setExpirationTimestamp(expiry),
                image.offset() + 1);
    }

    private static String password(String tokenId) {
        return Base64.getEncoder().encodeToString(SETTINGS.hmac(tokenId));
    }

    /** A whole client exchange with the {@code tokenauth=true} extension; returns the server. */
    private ScramSaslServer login(ScramMechanism mechanism, String tokenId, String password) throws Exception {
        ScramSaslServer server = new ScramSaslServer(mechanism, credentials);
        String clientNonce = "fyko+d2lbbFgONRv9qkxdawL";
        String bare = "n=" + tokenId + ",r=" + clientNonce + ",tokenauth=true";
        String serverFirst = new String(server.evaluateResponse(("n,," + bare).getBytes(StandardCharsets.UTF_8)),
                StandardCharsets.UTF_8);
        String nonce = serverFirst.split(",")[0].substring(2);
        byte[] salt = Base64.getDecoder().decode(serverFirst.split(",")[1].substring(2));
        int iterations = Integer.parseInt(serverFirst.split(",")[2].substring(2));
        byte[] salted = mechanism.saltedPassword(password, salt, iterations);
        byte[] clientKey = mechanism.clientKey(salted);
        String withoutProof = "c=biws,r=" + nonce;
        byte[] signature = mechanism.hmac(mechanism.storedKey(clientKey),
                (bare + "," + serverFirst + "," + withoutProof).getBytes(StandardCharsets.US_ASCII));
        byte[] proof = new byte[clientKey.length];
        for (int i = 0; i < proof.length; i++) {
            proof[i] = (byte) (clientKey[i] ^ signature[i]);
        }
        server.evaluateResponse((withoutProof + ",p=" + Base64.getEncoder().encodeToString(proof))
                .getBytes(StandardCharsets.US_ASCII));
        return server;
    }

    @Test
    void aTokenLogsInWithItsHmacAsTheOwnerMarkedTokenAuthenticated() throws Exception {
        addToken("token-1", "User:alice", Long.MAX_VALUE);

        for (ScramMechanism mechanism : ScramMechanism.values()) {
            ScramSaslServer server = login(mechanism, "token-1", password("token-1"));

            assertThat(server.complete()).isTrue();
            assertThat(server.authorizationId()).isEqualTo("alice");
            assertThat(server.tokenAuthenticated()).isTrue();
        }
    }

    @Test
    void aWrongHmacAnUnknownTokenAndAnExpiredTokenFailWithKafkasMessage() {
        addToken("token-1", "User:alice", Long.MAX_VALUE);
        addToken("old", "User:alice", System.currentTimeMillis() - 1);

        assertThatThrownBy(() -> login(ScramMechanism.SCRAM_SHA_256, "token-1", password("other")))
                .isInstanceOf(SaslAuthenticationException.class).hasMessage(FAILED_256);
        assertThatThrownBy(() -> login(ScramMechanism.SCRAM_SHA_256, "nope", password("nope")))
                .isInstanceOf(SaslAuthenticationException.class).hasMessage(FAILED_256);
        assertThatThrownBy(() -> login(ScramMechanism.SCRAM_SHA_256, "old", password("old")))
                .isInstanceOf(SaslAuthenticationException.class).hasMessage(FAILED_256);
    }

    @Test
    void aRemovedTokenNoLongerLogsInAndARenewedOneKeepsItsCredential() throws Exception {
        addToken("token-1", "User:alice", Long.MAX_VALUE);
        ScramCredential before = cache.credential("token-1", ScramMechanism.SCRAM_SHA_256).credential();
        addToken("token-1", "User:alice", Long.MAX_VALUE - 1);
        assertThat(cache.credential("token-1", ScramMechanism.SCRAM_SHA_256).credential()).isSameAs(before);

        replay(new RemoveDelegationTokenRecord().setTokenId("token-1"), image.offset() + 1);

        assertThatThrownBy(() -> login(ScramMechanism.SCRAM_SHA_256, "token-1", password("token-1")))
                .isInstanceOf(SaslAuthenticationException.class).hasMessage(FAILED_256);
    }

    @Test
    void aUserLoginIsNotTokenAuthenticatedAndTokensNeedTheSecret() {
        DelegationTokenCache disabled = new DelegationTokenCache(DelegationTokenSettings.DISABLED);
        addToken("token-1", "User:alice", Long.MAX_VALUE);
        disabled.load(image);

        assertThat(disabled.credential("token-1", ScramMechanism.SCRAM_SHA_256)).isNull();
        assertThat(new ScramSaslServer(ScramMechanism.SCRAM_SHA_256, credentials).tokenAuthenticated()).isFalse();
    }
}
