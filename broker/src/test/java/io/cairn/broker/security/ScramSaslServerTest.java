package io.cairn.broker.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.isr.client.ScramClient;
import io.cairn.metadata.image.ScramCredential;
import io.cairn.metadata.image.ScramMechanism;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ScramSaslServerTest {

    // RFC 7677 section 3: user "user", password "pencil", SCRAM-SHA-256, 4096 iterations.
    private static final String RFC_CLIENT_FIRST = "n,,n=user,r=rOprNGfwEbeRWgbNEkqO";
    private static final String RFC_SERVER_NONCE = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";
    private static final String RFC_SALT = "W22ZaJ0SNY7soEsUEjb6gQ==";
    private static final String RFC_SERVER_FIRST = "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
            + "s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
    private static final String RFC_CLIENT_FINAL = "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
            + "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
    private static final String RFC_SERVER_FINAL = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=";
    private static final String FAILED_256 = "Authentication failed during authentication due to invalid credentials "
            + "with SASL mechanism SCRAM-SHA-256";

    private static ScramCredential credential(ScramMechanism mechanism, String user, String password, byte[] salt,
            int iterations) {
        return mechanism.credential(user, salt, mechanism.saltedPassword(password, salt, iterations), iterations);
    }

    private static ScramCredentials rfcUser() {
        ScramCredential user = credential(ScramMechanism.SCRAM_SHA_256, "user", "pencil",
                Base64.getDecoder().decode(RFC_SALT), 4096);
        return (name, mechanism) -> name.equals("user") && mechanism == ScramMechanism.SCRAM_SHA_256 ? user : null;
    }

    private static byte[] bytes(String message) {
        return message.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(byte[] message) {
        return new String(message, StandardCharsets.UTF_8);
    }

    @Test
    void rfc7677TestVectorAuthenticatesAndTheServerSignatureMatches() throws Exception {
        // Given
        ScramSaslServer server = new ScramSaslServer(ScramMechanism.SCRAM_SHA_256, rfcUser(), () -> RFC_SERVER_NONCE);
        String serverFirst = text(server.evaluateResponse(bytes(RFC_CLIENT_FIRST)));

        // When
        String serverFinal = text(server.evaluateResponse(bytes(RFC_CLIENT_FINAL)));

        // Then
        assertThat(serverFirst).isEqualTo(RFC_SERVER_FIRST);
        assertThat(serverFinal).isEqualTo(RFC_SERVER_FINAL);
        assertThat(server.complete()).isTrue();
        assertThat(server.authorizationId()).isEqualTo("user");
    }

    @Test
    void theInterBrokerClientProducesTheRfc7677ClientFinalMessageAndAcceptsTheServerSignature() throws Exception {
        // Given
        ScramClient client = new ScramClient(ScramMechanism.SCRAM_SHA_256, "user", "pencil", "rOprNGfwEbeRWgbNEkqO");
        assertThat(text(client.clientFirst())).isEqualTo(RFC_CLIENT_FIRST);

        // When
        String clientFinal = text(client.clientFinal(bytes(RFC_SERVER_FIRST)));

        // Then
        assertThat(clientFinal).isEqualTo(RFC_CLIENT_FINAL);
        client.verifyServerFinal(bytes(RFC_SERVER_FINAL));
        assertThatThrownBy(() -> client.verifyServerFinal(bytes("v=AAAA" + RFC_SERVER_FINAL.substring(6))))
                .hasMessageContaining("Invalid server signature");
    }

    @Test
    void scramSha512RoundTripsWithARandomSaltAndNonces() throws Exception {
        // Given
        ScramCredential alice = credential(ScramMechanism.SCRAM_SHA_512, "alice", "alice-secret",
                ScramMechanism.randomSalt(), 8192);
        ScramSaslServer server = new ScramSaslServer(ScramMechanism.SCRAM_SHA_512,
                (name, mechanism) -> Map.of("alice", alice).get(name));
        ScramClient client = new ScramClient(ScramMechanism.SCRAM_SHA_512, "alice", "alice-secret");
        byte[] serverFirst = server.evaluateResponse(client.clientFirst());

        // When
        byte[] serverFinal = server.evaluateResponse(client.clientFinal(serverFirst));

        // Then
        assertThat(text(serverFirst)).contains(",i=8192");
        client.verifyServerFinal(serverFinal);
        assertThat(server.complete()).isTrue();
        assertThat(server.authorizationId()).isEqualTo("alice");
        assertThat(server.mechanism()).isEqualTo("SCRAM-SHA-512");
    }

    @Test
    void aWrongPasswordFailsWithKafkaGenericMessage() throws Exception {
        // Given
        ScramSaslServer server = new ScramSaslServer(ScramMechanism.SCRAM_SHA_256, rfcUser());
        ScramClient client = new ScramClient(ScramMechanism.SCRAM_SHA_256, "user", "pencil2");
        byte[] serverFirst = server.evaluateResponse(client.clientFirst());

        // When / Then
        assertThatThrownBy(() -> server.evaluateResponse(client.clientFinal(serverFirst)))
                .isInstanceOf(SaslAuthenticationException.class).hasMessage(FAILED_256);
        assertThat(server.complete()).isFalse();
    }

    @Test
    void anUnknownUserGetsAStableChallengeAndFailsExactlyAsAWrongPasswordDoes() throws Exception {
        // Given
        ScramSaslServer server = new ScramSaslServer(ScramMechanism.SCRAM_SHA_256, rfcUser());
        ScramSaslServer again = new ScramSaslServer(ScramMechanism.SCRAM_SHA_256, rfcUser());
        ScramClient client = new ScramClient(ScramMechanism.SCRAM_SHA_256, "mallory", "pencil", "abc");
        String serverFirst = text(server.evaluateResponse(client.clientFirst()));
        String secondFirst = text(again.evaluateResponse(client.clientFirst()));

        // When / Then
        assertThat(serverFirst).startsWith("r=abc").endsWith(",i=4096");
        assertThat(serverFirst.substring(serverFirst.indexOf(",s="))).isEqualTo(
                secondFirst.substring(secondFirst.indexOf(",s=")));
        assertThatThrownBy(() -> server.evaluateResponse(client.clientFinal(bytes(serverFirst))))
                .isInstanceOf(SaslAuthenticationException.class).hasMessage(FAILED_256);
    }

    @Test
    void aDelegationTokenLoginWithAnUnknownTokenIsRefusedAsInKafka() {
        // Given
        ScramSaslServer server = new ScramSaslServer(ScramMechanism.SCRAM_SHA_256, rfcUser());

        // When / Then
        assertThatThrownBy(() -> server.evaluateResponse(bytes("n,,n=user,r=abc,tokenauth=true")))
                .isInstanceOf(SaslAuthenticationException.class).hasMessage(FAILED_256);
    }

    @Test
    void anAuthorizationIdOtherThanTheUserIsRefusedWithKafkaMessage() {
        // Given
        ScramSaslServer server = new ScramSaslServer(ScramMechanism.SCRAM_SHA_256, rfcUser());

        // When / Then
        assertThatThrownBy(() -> server.evaluateResponse(bytes("n,a=admin,n=user,r=abc")))
                .isInstanceOf(SaslAuthenticationException.class)
                .hasMessage("Authentication failed: Client requested an authorization id that is different from "
                        + "username");
    }

    @Test
    void unsupportedExtensionsAreIgnoredAndEscapedUserNamesAreDecoded() throws Exception {
        // Given
        ScramCredential odd = credential(ScramMechanism.SCRAM_SHA_256, "a,b=c", "pw", bytes("salt"), 4096);
        ScramSaslServer server = new ScramSaslServer(ScramMechanism.SCRAM_SHA_256,
                (name, mechanism) -> name.equals("a,b=c") ? odd : null);

        // When
        String serverFirst = text(server.evaluateResponse(bytes("n,,n=a=2Cb=3Dc,r=xyz,foo=bar")));

        // Then
        assertThat(serverFirst).startsWith("r=xyz").contains(",s=" + Base64.getEncoder().encodeToString(
                bytes("salt")));
    }

    @Test
    void malformedMessagesFailWithTheGenericMessage() throws Exception {
        assertThatThrownBy(() -> new ScramSaslServer(ScramMechanism.SCRAM_SHA_256, rfcUser())
                .evaluateResponse(bytes("y,,n=user,r=abc"))).hasMessage(FAILED_256);
        assertThatThrownBy(() -> new ScramSaslServer(ScramMechanism.SCRAM_SHA_256, rfcUser())
                .evaluateResponse(bytes("n,,n=us=er,r=abc"))).hasMessage(FAILED_256);
        assertThatThrownBy(() -> new ScramSaslServer(ScramMechanism.SCRAM_SHA_256, rfcUser())
                .evaluateResponse(new byte[] {'n', ',', ',', (byte) 0xC3, (byte) 0xA9})).hasMessage(FAILED_256);
        ScramSaslServer server = new ScramSaslServer(ScramMechanism.SCRAM_SHA_256, rfcUser(), () -> "S");
        server.evaluateResponse(bytes("n,,n=user,r=abc"));
        assertThatThrownBy(() -> server.evaluateResponse(bytes("c=biws,r=abcX,p=AAAA"))).hasMessage(FAILED_256);
    }

    @Test
    void aProofOfTheWrongLengthFails() throws Exception {
        // Given
        ScramSaslServer server = new ScramSaslServer(ScramMechanism.SCRAM_SHA_256, rfcUser(), () -> "S");
        server.evaluateResponse(bytes("n,,n=user,r=abc"));

        // When / Then
        assertThatThrownBy(() -> server.evaluateResponse(bytes("c=biws,r=abcS,p=AAAA"))).hasMessage(FAILED_256);
        assertThat(server.complete()).isFalse();
    }
}
