package io.cairn.broker.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.broker.config.JaasConfig;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** SASL/PLAIN with Kafka's PlainSaslServer messages. */
class PlainSaslServerTest {

    private final PlainSaslServer server = new PlainSaslServer(JaasConfig.parse(
            "org.apache.kafka.common.security.plain.PlainLoginModule required user_alice=\"alice-secret\";"));

    private static byte[] token(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void theRightPasswordCompletesWithTheUserAsAuthorizationId() throws Exception {
        // When
        byte[] reply = server.evaluateResponse(token("alice\u0000alice\u0000alice-secret"));

        // Then
        assertThat(reply).isEmpty();
        assertThat(server.complete()).isTrue();
        assertThat(server.authorizationId()).isEqualTo("alice");
    }

    @Test
    void failuresCarryKafkaMessages() {
        assertThatThrownBy(() -> server.evaluateResponse(token("\u0000alice\u0000wrong")))
                .isInstanceOf(SaslAuthenticationException.class)
                .hasMessage("Authentication failed: Invalid username or password");
        assertThatThrownBy(() -> server.evaluateResponse(token("\u0000bob\u0000alice-secret")))
                .hasMessage("Authentication failed: Invalid username or password");
        assertThatThrownBy(() -> server.evaluateResponse(token("\u0000\u0000x")))
                .hasMessage("Authentication failed: username not specified");
        assertThatThrownBy(() -> server.evaluateResponse(token("\u0000alice\u0000")))
                .hasMessage("Authentication failed: password not specified");
        assertThatThrownBy(() -> server.evaluateResponse(token("alice")))
                .hasMessage("Invalid SASL/PLAIN response: expected 3 tokens, got 1");
        assertThatThrownBy(() -> server.evaluateResponse(token("bob\u0000alice\u0000alice-secret")))
                .hasMessage("Authentication failed: Client requested an authorization id that is different from "
                        + "username");
        assertThat(server.complete()).isFalse();
    }
}
