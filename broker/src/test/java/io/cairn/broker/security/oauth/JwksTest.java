package io.cairn.broker.security.oauth;

import static io.cairn.broker.security.oauth.JwtFixtures.jwk;
import static io.cairn.broker.security.oauth.JwtFixtures.jwks;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.security.KeyPair;
import java.security.interfaces.ECPublicKey;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** JWK Sets (RFC 7517) read into verification keys, and the bounded JSON reader under them. */
class JwksTest {

    private static final KeyPair RSA = JwtFixtures.rsa(2048);

    @Test
    void readsRsaAndEcKeysAndSkipsWhatCannotVerify() {
        // Given
        KeyPair p256 = JwtFixtures.ec("secp256r1");
        KeyPair p384 = JwtFixtures.ec("secp384r1");
        KeyPair p521 = JwtFixtures.ec("secp521r1");
        Map<String, Object> encryption = new LinkedHashMap<>(jwk(JwtFixtures.rsa(2048), "enc"));
        encryption.put("use", "enc");
        Map<String, Object> symmetric = Map.of("kty", "oct", "kid", "hmac", "k", "c2VjcmV0");
        Map<String, Object> okp = Map.of("kty", "OKP", "crv", "Ed25519", "kid", "ed", "x", "AAAA");

        // When
        Jwks jwks = Jwks.parse(jwks(List.of(jwk(RSA, "rsa"), jwk(p256, "p256"), jwk(p384, "p384"),
                jwk(p521, "p521"), encryption, symmetric, okp)));

        // Then
        assertThat(jwks.keys()).extracting(Jwks.Key::kid).containsExactly("rsa", "p256", "p384", "p521");
        assertThat(jwks.keys().get(0).publicKey()).isEqualTo(RSA.getPublic());
        assertThat(((ECPublicKey) jwks.keys().get(3).publicKey()).getW()).isEqualTo(
                ((ECPublicKey) p521.getPublic()).getW());
        assertThat(jwks.candidates(JwsAlgorithm.ES384, null)).extracting(Jwks.Key::kid).containsExactly("p384");
        assertThat(jwks.candidates(JwsAlgorithm.RS256, "p256")).isEmpty();
        assertThat(jwks.candidates(JwsAlgorithm.PS512, "rsa")).hasSize(1);
        assertThat(jwks.hasKid("hmac")).isFalse();
    }

    @Test
    void aKeysAlgRestrictsItAndShortRsaKeysAreRefusedAtVerification() {
        Map<String, Object> rs384Only = new LinkedHashMap<>(jwk(RSA, "rsa"));
        rs384Only.put("alg", "RS384");
        Jwks jwks = Jwks.parse(jwks(List.of(rs384Only, jwk(JwtFixtures.rsa(1024), "short"))));
        assertThat(jwks.candidates(JwsAlgorithm.RS256, "rsa")).isEmpty();
        assertThat(jwks.candidates(JwsAlgorithm.RS384, "rsa")).hasSize(1);
        assertThat(jwks.candidates(JwsAlgorithm.RS256, "short")).isEmpty();
    }

    @Test
    void refusesMalformedSetsAndTooManyKeys() {
        assertThatThrownBy(() -> Jwks.parse("{}")).hasMessageContaining("\"keys\" array");
        assertThatThrownBy(() -> Jwks.parse("[]")).hasMessageContaining("not a JSON object");
        assertThatThrownBy(() -> Jwks.parse("{\"keys\":[{\"kty\":\"RSA\",\"kid\":\"a\",\"e\":\"AQAB\"}]}"))
                .hasMessageContaining("\"n\"");
        assertThatThrownBy(() -> Jwks.parse("{\"keys\":[{\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":\"AQ\","
                + "\"y\":\"AQ\"}]}")).hasMessageContaining("coordinates");
        assertThatThrownBy(() -> Jwks.parse("{\"keys\":[{\"kid\":\"a\"}]}")).hasMessageContaining("kty");
        List<Map<String, Object>> many = new ArrayList<>();
        for (int i = 0; i <= Jwks.MAX_KEYS; i++) {
            many.add(jwk(RSA, "k" + i));
        }
        assertThatThrownBy(() -> Jwks.parse(jwks(many))).hasMessageContaining("more than the " + Jwks.MAX_KEYS);
    }

    @Test
    void theJsonReaderIsStrictAndBounded() {
        assertThat(Json.parseObject("{\"a\":[1,2.5,\"x\\u0041\\n\",true,null,{}],\"b\":-0}"))
                .containsEntry("b", 0L)
                .containsEntry("a", List.of(1L, 2.5, "xA\n", true, Json.NULL, Map.of()));
        assertThatThrownBy(() -> Json.parseObject("{\"a\":1,\"a\":2}")).hasMessageContaining("duplicate");
        assertThatThrownBy(() -> Json.parseObject("{\"a\":1} x")).hasMessageContaining("after");
        assertThatThrownBy(() -> Json.parseObject("{\"a\":01}")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Json.parseObject("{\"a\":\"unterminated}")).hasMessageContaining("unterminated");
        assertThatThrownBy(() -> Json.parseObject("{\"a\":1e999}")).hasMessageContaining("range");
        assertThatThrownBy(() -> Json.parseObject("{\"a\":" + "[".repeat(17) + "]".repeat(17) + "}"))
                .hasMessageContaining("nested deeper");
        assertThat(Json.parseObject("{\"a\":" + "[".repeat(15) + "]".repeat(15) + "}")).containsKey("a");
    }
}
