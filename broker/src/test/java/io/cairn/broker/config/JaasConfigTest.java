package io.cairn.broker.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** {@code sasl.jaas.config} values as Kafka's JaasConfig reads them. */
class JaasConfigTest {

    @Test
    void readsModuleFlagAndQuotedAndBareOptions() {
        // When
        JaasConfig jaas = JaasConfig.parse("org.apache.kafka.common.security.plain.PlainLoginModule required\n"
                + "  username=\"admin\" password=\"a b;c=\\\"d\" user_alice=alice-secret;");

        // Then
        assertThat(jaas.loginModule()).isEqualTo("org.apache.kafka.common.security.plain.PlainLoginModule");
        assertThat(jaas.flag()).isEqualTo("required");
        assertThat(jaas.options()).containsExactly(java.util.Map.entry("username", "admin"),
                java.util.Map.entry("password", "a b;c=\"d"), java.util.Map.entry("user_alice", "alice-secret"));
        assertThat(jaas.toString()).doesNotContain("alice-secret");
    }

    @Test
    void skipsComments() {
        // When
        JaasConfig jaas = JaasConfig.parse("/* c */ org.x.M optional // line\n a=\"1\";");

        // Then
        assertThat(jaas.flag()).isEqualTo("optional");
        assertThat(jaas.option("a")).isEqualTo("1");
    }

    @Test
    void refusesTwoModulesNoModuleAMissingSemicolonAndABadFlag() {
        assertThatThrownBy(() -> JaasConfig.parse("a.M required; b.M required;"))
                .hasMessage("JAAS config property contains 2 login modules, should be 1 module");
        assertThatThrownBy(() -> JaasConfig.parse("  ")).hasMessageContaining("contains 0 login modules");
        assertThatThrownBy(() -> JaasConfig.parse("a.M required x=\"1\"")).hasMessageContaining("must end with ';'");
        assertThatThrownBy(() -> JaasConfig.parse("a.M always;")).hasMessageContaining("Invalid control flag");
        assertThatThrownBy(() -> JaasConfig.parse("a.M required x=\"1;")).hasMessageContaining("Unterminated");
    }
}
