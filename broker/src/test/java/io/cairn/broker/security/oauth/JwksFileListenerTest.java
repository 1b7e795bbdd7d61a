package io.cairn.broker.security.oauth;

import static io.cairn.broker.security.oauth.JwtFixtures.claims;
import static io.cairn.broker.security.oauth.JwtFixtures.jwk;
import static io.cairn.broker.security.oauth.JwtFixtures.jwks;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.broker.config.JaasConfig;
import io.cairn.broker.config.OAuthBearerSettings;
import io.cairn.broker.config.SaslSettings;
import io.cairn.broker.security.SaslServer;
import io.cairn.broker.security.SaslServers;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A listener's OAUTHBEARER server from its settings, with the JWKS in a file: URL. */
class JwksFileListenerTest {

    private static SaslSettings settings(Path jwks) {
        OAuthBearerSettings.Secured secured = new OAuthBearerSettings.Secured(jwks.toUri(), 3_600_000L, 100L,
                10_000L, List.of(), null, "scope", "sub", 30);
        return new SaslSettings("SASL_PLAINTEXT", List.of("OAUTHBEARER"), Map.of("OAUTHBEARER",
                JaasConfig.parse("org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;")),
                524288, 0, Map.of(), secured);
    }

    @Test
    void aListenerReadsItsJwksFileAndAuthenticatesSignedTokens(@TempDir Path dir) throws Exception {
        // Given
        KeyPair key = JwtFixtures.rsa(2048);
        Path file = Files.writeString(dir.resolve("jwks.json"), jwks(List.of(jwk(key, "file-key"))));
        String token = JwtFixtures.sign("RS256", "file-key", key.getPrivate(),
                claims(System.currentTimeMillis(), Map.of("sub", "dave")));

        // When
        try (SaslServers servers = new SaslServers(settings(file))) {
            SaslServer server = servers.apply("OAUTHBEARER");
            server.evaluateResponse(("n,,\u0001auth=Bearer " + token + "\u0001\u0001")
                    .getBytes(StandardCharsets.UTF_8));

            // Then
            assertThat(server.complete()).isTrue();
            assertThat(server.authorizationId()).isEqualTo("dave");
            assertThat(server.credentialExpiryMs()).isPresent();
        }
    }

    @Test
    void aListenerWhoseJwksCannotBeReadDoesNotStart(@TempDir Path dir) throws Exception {
        Path missing = dir.resolve("missing.json");
        assertThatThrownBy(() -> new SaslServers(settings(missing))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("Cannot start SASL listener SASL_PLAINTEXT: OAUTHBEARER verification keys "
                        + "could not be loaded from " + missing.toUri());
        Files.writeString(dir.resolve("bad.json"), "{\"keys\":[{\"kty\":\"RSA\"}]}");
        assertThatThrownBy(() -> new SaslServers(settings(dir.resolve("bad.json"))))
                .hasMessageContaining("not usable");
    }
}
