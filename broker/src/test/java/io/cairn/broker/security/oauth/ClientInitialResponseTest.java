package io.cairn.broker.security.oauth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The RFC 7628 client first message, as Kafka's OAuthBearerClientInitialResponse reads and writes it. */
class ClientInitialResponseTest {

    private static ClientInitialResponse parse(String message) {
        return ClientInitialResponse.parse(message.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void readsTheTokenTheAuthzidAndTheExtensions() {
        // When
        ClientInitialResponse plain = parse("n,,\u0001auth=Bearer abc.def.ghi\u0001\u0001");
        ClientInitialResponse full = parse("n,a=alice,\u0001auth=bearer  eyJ-_.x~+/y.z==\u0001"
                + "traceId=42 a=b\u0001logicalCluster=lkc-1\u0001\u0001");

        // Then
        assertThat(plain.token()).isEqualTo("abc.def.ghi");
        assertThat(plain.authorizationId()).isEmpty();
        assertThat(plain.extensions()).isEmpty();
        assertThat(full.token()).isEqualTo("eyJ-_.x~+/y.z==");
        assertThat(full.authorizationId()).isEqualTo("alice");
        assertThat(full.extensions()).containsExactly(Map.entry("traceId", "42 a=b"),
                Map.entry("logicalCluster", "lkc-1"));
        assertThat(full.toString()).doesNotContain("eyJ");
    }

    @Test
    void readsWhatKafkasClientWrites() throws Exception {
        // Kafka's OAuthBearerClientInitialResponse.toBytes with an extension and an authzid
        String kafka = new String(new org.apache.kafka.common.security.oauthbearer.internals
                .OAuthBearerClientInitialResponse("a.b.c", "user=3D", new org.apache.kafka.common.security.auth
                .SaslExtensions(Map.of("ext", "value"))).toBytes(), StandardCharsets.UTF_8);
        ClientInitialResponse parsed = parse(kafka);
        assertThat(parsed.token()).isEqualTo("a.b.c");
        assertThat(parsed.extensions()).containsExactly(Map.entry("ext", "value"));
        assertThat(parsed.authorizationId()).isEqualTo("user=3D");
    }

    @Test
    void refusesMalformedMessages() {
        for (String bad : new String[] {
            "", "y,,\u0001auth=Bearer t\u0001\u0001", "n,\u0001auth=Bearer t\u0001\u0001",
            "n,,auth=Bearer t\u0001\u0001", "n,,\u0001auth=Bearer t\u0001", "n,,\u0001\u0001",
            "n,,\u0001auth=Bearer t\u0001ext\u0001\u0001", "n,,\u0001auth=Bearer t\u0001e1=v\u0001\u0001",
            "n,,\u0001auth=Bearer t\u0001e=\u0001\u0001", "n,,\u0001auth=Bearer t\u0001e=\u0000\u0001\u0001",
            "n,,\u0001auth=Basic dXNlcg==\u0001\u0001", "n,,\u0001auth=Bearer\u0001\u0001",
            "n,,\u0001auth=Bearer a b\u0001\u0001", "n,,\u0001auth=Bearer t=x\u0001\u0001",
            "n,a=,\u0001auth=Bearer t\u0001\u0001", "n,a=x=2,\u0001auth=Bearer t\u0001\u0001",
            "n,b=x,\u0001auth=Bearer t\u0001\u0001", "n,,\u0001ext=v\u0001\u0001"}) {
            assertThatThrownBy(() -> parse(bad)).as("%s", bad.replace('\u0001', '^'))
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }
}
