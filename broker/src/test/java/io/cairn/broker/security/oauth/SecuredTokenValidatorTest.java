package io.cairn.broker.security.oauth;

import static io.cairn.broker.security.oauth.JwtFixtures.claims;
import static io.cairn.broker.security.oauth.JwtFixtures.jwk;
import static io.cairn.broker.security.oauth.JwtFixtures.jwks;
import static io.cairn.broker.security.oauth.JwtFixtures.sign;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.broker.config.OAuthBearerSettings;
import java.io.IOException;
import java.net.URI;
import java.security.KeyPair;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Kafka's secured OAUTHBEARER validator (KIP-768): signatures against a JWKS, then the claims. */
class SecuredTokenValidatorTest {

    private static final KeyPair RSA = JwtFixtures.rsa(2048);
    private static final KeyPair OTHER_RSA = JwtFixtures.rsa(2048);
    private static final long NOW = 1_800_000_000_000L;

    private final AtomicLong clock = new AtomicLong(NOW);
    private final AtomicReference<String> document = new AtomicReference<>(jwks(List.of(jwk(RSA, "k1"))));
    private final AtomicInteger fetches = new AtomicInteger();
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable closeable : closeables) {
            closeable.close();
        }
    }

    private SecuredTokenValidator validator(List<String> audience, String issuer) throws IOException {
        OAuthBearerSettings.Secured settings = new OAuthBearerSettings.Secured(URI.create("http://idp/jwks"),
                3_600_000L, 100L, 10_000L, audience, issuer, "scope", "sub", 30);
        JwksSource source = new JwksSource("test", () -> {
            fetches.incrementAndGet();
            return document.get();
        }, 3_600_000L, 1L, 1L, 5_000L, clock::get);
        source.start();
        SecuredTokenValidator validator = new SecuredTokenValidator(settings, source, clock::get);
        closeables.add(validator);
        return validator;
    }

    private SecuredTokenValidator validator() throws IOException {
        return validator(List.of(), null);
    }

    private static String token(Map<String, Object> extra) {
        return sign("RS256", "k1", RSA.getPrivate(), claims(NOW, extra));
    }

    @Test
    void aGoodTokenAuthenticatesItsSubjectUntilItsExpiry() throws Exception {
        // When
        OAuthBearerToken token = validator().validate(token(Map.of("scope", "read")));

        // Then
        assertThat(token.principalName()).isEqualTo("alice");
        assertThat(token.lifetimeMs()).isEqualTo(NOW + 3_600_000L);
        assertThat(token.startTimeMs()).isEqualTo(NOW);
        assertThat(token.scope()).containsExactly("read");
    }

    @Test
    void theSubjectComesFromTheConfiguredClaimAndMustBeANonBlankString() throws Exception {
        OAuthBearerSettings.Secured settings = new OAuthBearerSettings.Secured(URI.create("http://idp/jwks"),
                3_600_000L, 100L, 10_000L, List.of(), null, "scp", "client_id", 30);
        JwksSource source = new JwksSource("test", document::get, 3_600_000L, 1L, 1L, 5_000L, clock::get);
        source.start();
        SecuredTokenValidator validator = new SecuredTokenValidator(settings, source, clock::get);
        closeables.add(validator);
        assertThat(validator.validate(token(Map.of("client_id", " svc ", "scp", List.of("a", "b"))))
                .principalName()).isEqualTo("svc");
        assertThatThrownBy(() -> validator.validate(token(Map.of()))).hasMessageContaining("client_id");
        assertThatThrownBy(() -> validator.validate(token(Map.of("client_id", "  "))))
                .hasMessageContaining("whitespace");
        assertThatThrownBy(() -> validator.validate(token(Map.of("client_id", 7))))
                .hasMessageContaining("client_id");
    }

    @ParameterizedTest
    @ValueSource(strings = {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512"})
    void verifiesEveryRsaAlgorithm(String alg) throws Exception {
        assertThat(validator().validate(sign(alg, "k1", RSA.getPrivate(), claims(NOW, Map.of()))).principalName())
                .isEqualTo("alice");
    }

    @ParameterizedTest
    @ValueSource(strings = {"ES256:secp256r1", "ES384:secp384r1", "ES512:secp521r1"})
    void verifiesEveryEcAlgorithmOnItsCurve(String algAndCurve) throws Exception {
        String alg = algAndCurve.split(":")[0];
        KeyPair ec = JwtFixtures.ec(algAndCurve.split(":")[1]);
        document.set(jwks(List.of(jwk(RSA, "k1"), jwk(ec, "ec"))));
        SecuredTokenValidator validator = validator();
        assertThat(validator.validate(sign(alg, "ec", ec.getPrivate(), claims(NOW, Map.of()))).principalName())
                .isEqualTo("alice");
        // The wrong hash for the curve names a key that does not fit the algorithm
        String wrongAlg = alg.equals("ES256") ? "ES384" : "ES256";
        assertThatThrownBy(() -> validator.validate(sign(wrongAlg, "ec", ec.getPrivate(), claims(NOW, Map.of()))))
                .isInstanceOf(TokenValidationException.class);
    }

    @Test
    void refusesATokenSignedByAnotherKeyOrTamperedWith() throws Exception {
        SecuredTokenValidator validator = validator();
        String forged = sign("RS256", "k1", OTHER_RSA.getPrivate(), claims(NOW, Map.of()));
        assertThatThrownBy(() -> validator.validate(forged)).isInstanceOf(TokenValidationException.class)
                .hasMessageContaining("signature is invalid");
        String good = token(Map.of());
        String[] parts = good.split("\\.");
        String tampered = JwtFixtures.b64(JwtFixtures.json(claims(NOW, Map.of("sub", "admin"))));
        assertThatThrownBy(() -> validator.validate(parts[0] + "." + tampered + "." + parts[2]))
                .hasMessageContaining("signature is invalid");
        // Without a kid every key of the type is tried, and none verifies it either
        assertThatThrownBy(() -> validator.validate(sign("RS256", null, OTHER_RSA.getPrivate(),
                claims(NOW, Map.of())))).hasMessageContaining("signature is invalid");
        assertThat(validator.validate(sign("RS256", null, RSA.getPrivate(), claims(NOW, Map.of())))
                .principalName()).isEqualTo("alice");
    }

    @Test
    void refusesAlgNoneHmacUnknownAlgorithmsAndCriticalHeaders() throws Exception {
        SecuredTokenValidator validator = validator();
        assertThatThrownBy(() -> validator.validate(JwtFixtures.unsecured(claims(NOW, Map.of()))))
                .hasMessageContaining("none").hasMessageContaining("not permitted");
        String rs = token(Map.of());
        String hs = JwtFixtures.b64("{\"alg\":\"HS256\",\"kid\":\"k1\"}") + rs.substring(rs.indexOf('.'));
        assertThatThrownBy(() -> validator.validate(hs)).hasMessageContaining("HS256");
        Map<String, Object> header = new LinkedHashMap<>(Map.of("alg", "RS256", "kid", "k1", "crit",
                List.of("exp")));
        assertThatThrownBy(() -> validator.validate(sign(header, RSA.getPrivate(), claims(NOW, Map.of()))))
                .hasMessageContaining("crit");
    }

    @Test
    void checksExpiryAndNotBeforeWithTheClockSkewAndRequiresIat() throws Exception {
        SecuredTokenValidator validator = validator();
        // exp 29 s ago is within the 30 s skew; 30 s ago is not
        assertThat(validator.validate(token(Map.of("exp", NOW / 1000 - 29)))).isNotNull();
        assertThatThrownBy(() -> validator.validate(token(Map.of("exp", NOW / 1000 - 30))))
                .hasMessageContaining("no longer valid");
        assertThat(validator.validate(token(Map.of("nbf", NOW / 1000 + 30)))).isNotNull();
        assertThatThrownBy(() -> validator.validate(token(Map.of("nbf", NOW / 1000 + 31))))
                .hasMessageContaining("not yet valid");
        Map<String, Object> noIat = claims(NOW, Map.of());
        noIat.remove("iat");
        assertThatThrownBy(() -> validator.validate(sign("RS256", "k1", RSA.getPrivate(), noIat)))
                .hasMessageContaining("iat");
        Map<String, Object> noExp = claims(NOW, Map.of());
        noExp.remove("exp");
        assertThatThrownBy(() -> validator.validate(sign("RS256", "k1", RSA.getPrivate(), noExp)))
                .hasMessageContaining("exp");
        assertThatThrownBy(() -> validator.validate(token(Map.of("exp", "tomorrow"))))
                .hasMessageContaining("NumericDate");
    }

    @Test
    void checksTheIssuerWhenExpected() throws Exception {
        SecuredTokenValidator validator = validator(List.of(), "https://idp.example");
        assertThat(validator.validate(token(Map.of("iss", "https://idp.example")))).isNotNull();
        assertThatThrownBy(() -> validator.validate(token(Map.of("iss", "https://evil.example"))))
                .hasMessageContaining("doesn't match expected value");
        assertThatThrownBy(() -> validator.validate(token(Map.of()))).hasMessageContaining("No Issuer");
    }

    @Test
    void checksTheAudienceAsKafkaDoes() throws Exception {
        SecuredTokenValidator expecting = validator(List.of("kafka", "cairn"), null);
        assertThat(expecting.validate(token(Map.of("aud", "cairn")))).isNotNull();
        assertThat(expecting.validate(token(Map.of("aud", List.of("other", "kafka"))))).isNotNull();
        assertThatThrownBy(() -> expecting.validate(token(Map.of("aud", "other"))))
                .hasMessageContaining("acceptable");
        assertThatThrownBy(() -> expecting.validate(token(Map.of()))).hasMessageContaining("No Audience");
        // jose4j's default, which Kafka keeps: a token naming an audience needs an expected one
        SecuredTokenValidator notExpecting = validator();
        assertThat(notExpecting.validate(token(Map.of()))).isNotNull();
        assertThatThrownBy(() -> notExpecting.validate(token(Map.of("aud", "kafka"))))
                .hasMessageContaining("no expected audience");
    }

    @Test
    void anUnknownKidRefreshesTheKeysOnceAndIsRateLimited() throws Exception {
        SecuredTokenValidator validator = validator();
        assertThat(fetches.get()).isEqualTo(1);
        KeyPair rotated = JwtFixtures.rsa(2048);
        String signedByK2 = sign("RS256", "k2", rotated.getPrivate(), claims(NOW, Map.of()));

        // When: the IdP rotates to k2 and a client presents a k2 token
        document.set(jwks(List.of(jwk(RSA, "k1"), jwk(rotated, "k2"))));
        OAuthBearerToken token = validator.validate(signedByK2);

        // Then: the keys were fetched again and the token verifies
        assertThat(token.principalName()).isEqualTo("alice");
        assertThat(fetches.get()).isEqualTo(2);

        // And: unknown kids right after do not fetch again until the interval has passed
        for (int i = 0; i < 20; i++) {
            String kid = "random-" + i;
            assertThatThrownBy(() -> validator.validate(sign("RS256", kid, rotated.getPrivate(),
                    claims(NOW, Map.of())))).hasMessageContaining("Unable to find a suitable verification key");
        }
        assertThat(fetches.get()).isEqualTo(2);
        clock.addAndGet(5_000L);
        assertThatThrownBy(() -> validator.validate(sign("RS256", "k3", rotated.getPrivate(),
                claims(NOW + 5_000L, Map.of())))).hasMessageContaining("Unable to find");
        assertThat(fetches.get()).isEqualTo(3);
        // An overlong kid never fetches
        clock.addAndGet(5_000L);
        String longKid = "k".repeat(JwksSource.MAX_KID_LENGTH + 1);
        assertThatThrownBy(() -> validator.validate(sign("RS256", longKid, rotated.getPrivate(),
                claims(NOW + 10_000L, Map.of())))).isInstanceOf(TokenValidationException.class);
        assertThat(fetches.get()).isEqualTo(3);
    }

    @Test
    void refusesAnOversizeOrMalformedTokenBeforeDecodingIt() throws Exception {
        SecuredTokenValidator validator = validator();
        String huge = token(Map.of("pad", "x".repeat(SecuredTokenValidator.MAX_TOKEN_CHARS)));
        assertThatThrownBy(() -> validator.validate(huge)).hasMessageContaining("characters long");
        assertThatThrownBy(() -> validator.validate("abc")).hasMessageContaining("three sections");
        assertThatThrownBy(() -> validator.validate("a.b.c.d")).hasMessageContaining("three sections");
        assertThatThrownBy(() -> validator.validate("!!!.b.c")).hasMessageContaining("base64url");
        String deep = "[".repeat(100) + "]".repeat(100);
        assertThatThrownBy(() -> validator.validate(JwtFixtures.b64("{\"alg\":\"RS256\",\"x\":" + deep + "}")
                + ".e30.c2ln")).hasMessageContaining("nested deeper");
    }

    @Test
    void aJwksThatCannotBeFetchedFailsStartupAndABadRefreshKeepsTheCachedKeys() throws Exception {
        JwksSource failing = new JwksSource("http://idp/jwks", () -> {
            throw new IOException("Connection refused");
        }, 3_600_000L, 1L, 1L, 5_000L, clock::get);
        closeables.add(failing);
        assertThatThrownBy(failing::start).isInstanceOf(IOException.class)
                .hasMessageContaining("http://idp/jwks").hasMessageContaining("Connection refused");

        SecuredTokenValidator validator = validator();
        document.set("{\"keys\": 5}");
        clock.addAndGet(10_000L);
        assertThatThrownBy(() -> validator.validate(sign("RS256", "k9", RSA.getPrivate(),
                claims(NOW + 10_000L, Map.of())))).hasMessageContaining("Unable to find");
        assertThat(fetches.get()).isEqualTo(2);
        assertThat(validator.validate(sign("RS256", "k1", RSA.getPrivate(), claims(NOW + 10_000L, Map.of()))))
                .isNotNull();
    }
}
