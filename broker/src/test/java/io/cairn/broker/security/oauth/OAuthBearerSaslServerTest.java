package io.cairn.broker.security.oauth;

import static io.cairn.broker.security.oauth.JwtFixtures.claims;
import static io.cairn.broker.security.oauth.JwtFixtures.unsecured;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.broker.config.OAuthBearerSettings;
import io.cairn.broker.security.SaslAuthenticationException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The OAUTHBEARER exchange as Kafka's OAuthBearerSaslServer plays it, and Kafka's unsecured validator. */
class OAuthBearerSaslServerTest {

    private static final long NOW = 1_800_000_000_000L;

    private static OAuthBearerSaslServer server(List<String> requiredScope) {
        return new OAuthBearerSaslServer(new UnsecuredTokenValidator(new OAuthBearerSettings.Unsecured("sub",
                "scope", requiredScope, 0), () -> NOW));
    }

    private static byte[] first(String authzid, String token, String extensions) {
        return ("n," + (authzid.isEmpty() ? "" : "a=" + authzid) + ",\u0001auth=Bearer " + token + "\u0001"
                + extensions + "\u0001").getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aValidTokenCompletesAsItsSubjectWithItsExpiryAndExtensions() throws Exception {
        // Given
        OAuthBearerSaslServer server = server(List.of("kafka"));

        // When
        byte[] reply = server.evaluateResponse(first("alice", unsecured(claims(NOW, Map.of("scope", "kafka x"))),
                "traceId=7\u0001"));

        // Then
        assertThat(reply).isEmpty();
        assertThat(server.complete()).isTrue();
        assertThat(server.authorizationId()).isEqualTo("alice");
        assertThat(server.credentialExpiryMs()).hasValue(NOW + 3_600_000L);
        assertThat(server.completedToken().scope()).containsExactly("kafka", "x");
        assertThat(server.extensions()).containsExactly(Map.entry("traceId", "7"));
        assertThat(server.expensive()).isTrue();
        assertThat(server.mechanism()).isEqualTo("OAUTHBEARER");
    }

    @Test
    void anInvalidTokenGetsTheJsonChallengeThenFailsWithItAfterTheClientsControlA() throws Exception {
        // Given: an expired token
        OAuthBearerSaslServer server = server(List.of());
        String expired = unsecured(claims(NOW - 7_200_000L, Map.of()));

        // When
        byte[] challenge = server.evaluateResponse(first("", expired, ""));

        // Then
        assertThat(new String(challenge, StandardCharsets.UTF_8)).isEqualTo("{\"status\":\"invalid_token\"}");
        assertThat(server.complete()).isFalse();
        assertThatThrownBy(() -> server.evaluateResponse(new byte[] {1}))
                .isInstanceOf(SaslAuthenticationException.class).hasMessage("{\"status\":\"invalid_token\"}");
        assertThatThrownBy(server::credentialExpiryMs).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aMissingScopeIsInsufficientScopeAsInKafka() throws Exception {
        OAuthBearerSaslServer server = server(List.of("kafka", "admin"));
        byte[] challenge = server.evaluateResponse(first("", unsecured(claims(NOW, Map.of("scope", "kafka"))), ""));
        assertThat(new String(challenge, StandardCharsets.UTF_8))
                .isEqualTo("{\"status\":\"insufficient_scope\", \"scope\":\"[kafka, admin]\"}");
    }

    @Test
    void anotherAuthzidOrAMalformedMessageFailsAtOnce() {
        assertThatThrownBy(() -> server(List.of()).evaluateResponse(first("bob", unsecured(claims(NOW, Map.of())),
                ""))).isInstanceOf(SaslAuthenticationException.class).hasMessage("Authentication failed: Client "
                + "requested an authorization id (bob) that is different from the token's principal name (alice)");
        assertThatThrownBy(() -> server(List.of()).evaluateResponse("garbage".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(SaslAuthenticationException.class).hasMessage("Authentication failed during "
                + "authentication due to invalid credentials with SASL mechanism OAUTHBEARER");
    }

    @Test
    void theUnsecuredValidatorChecksKafkasRules() {
        UnsecuredTokenValidator validator = new UnsecuredTokenValidator(new OAuthBearerSettings.Unsecured("user",
                "scp", List.of(), 1000), () -> NOW);
        Map<String, Object> base = claims(NOW, Map.of("user", "carol"));
        assertThat(catchValidate(validator, unsecured(base))).isNull();
        assertThat(catchValidate(validator, unsecured(claims(NOW, Map.of())))).contains("user");
        assertThat(catchValidate(validator, unsecured(claims(NOW, Map.of("user", "c", "iat", NOW / 1000 + 2)))))
                .contains("Issued At");
        assertThat(catchValidate(validator, unsecured(claims(NOW, Map.of("user", "c", "exp", NOW / 1000 - 1)))))
                .contains("Expiration Time");
        assertThat(catchValidate(validator, unsecured(claims(NOW, Map.of("user", "c", "exp", NOW / 1000,
                "iat", NOW / 1000 - 10))))).isNull();
        assertThat(catchValidate(validator, JwtFixtures.sign("RS256", "k", JwtFixtures.rsa(2048).getPrivate(),
                base))).contains("'none'");
        assertThat(catchValidate(validator, "a..b")).contains("..");
    }

    private static String catchValidate(TokenValidator validator, String token) {
        try {
            validator.validate(token);
            return null;
        } catch (TokenValidationException e) {
            return e.getMessage();
        }
    }
}
