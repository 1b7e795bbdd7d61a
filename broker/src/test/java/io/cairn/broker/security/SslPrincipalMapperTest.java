package io.cairn.broker.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SslPrincipalMapperTest {

    @Test
    void shouldKeepTheDistinguishedNameUnderTheDefaultRule() throws Exception {
        assertThat(SslPrincipalMapper.fromRules("DEFAULT").name("CN=alice,OU=Eng,O=Example"))
                .isEqualTo("CN=alice,OU=Eng,O=Example");
        assertThat(SslPrincipalMapper.fromRules(null).name("CN=bob")).isEqualTo("CN=bob");
    }

    @Test
    void shouldMapKafkasDocumentedExamples() throws Exception {
        // Given: the rules of Kafka's security documentation, in order
        SslPrincipalMapper mapper = SslPrincipalMapper.fromRules(String.join(", ",
                "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L",
                "RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L",
                "RULE:^cn=(.*?),ou=(.*?),dc=(.*?),dc=(.*?)$/$1@$2/U",
                "RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U",
                "DEFAULT"));

        // Then
        assertThat(mapper.name("CN=Duke,OU=ServiceUsers,O=Org,C=US")).isEqualTo("duke");
        assertThat(mapper.name("CN=Duke,OU=SME,O=mycp,L=Fulton,ST=MD,C=US")).isEqualTo("duke@sme");
        assertThat(mapper.name("cn=duke,ou=sme,dc=mycp,dc=com")).isEqualTo("DUKE@SME");
        assertThat(mapper.name("cN=duke,OU=JavaSoft,O=Sun Microsystems")).isEqualTo("DUKE");
        assertThat(mapper.name("OU=JavaSoft,O=Sun Microsystems,C=US")).isEqualTo("OU=JavaSoft,O=Sun Microsystems,C=US");
    }

    @Test
    void shouldKeepEscapedCommasAndSlashesInsideARule() throws Exception {
        assertThat(SslPrincipalMapper.fromRules("RULE:^CN=((\\\\, *|\\w)+)(,.*|$)/$1/,DEFAULT")
                .name("CN=Tkac\\, Adam,OU=ITZ,DC=geodis,DC=cz")).isEqualTo("Tkac\\, Adam");
        assertThat(SslPrincipalMapper.fromRules("RULE:^CN=([^,]*),OU=a\\/b$/$1\\/x/").name("CN=c,OU=a/b"))
                .isEqualTo("c/x");
    }

    @Test
    void shouldLeaveAReferenceToAMissingGroupLiteral() throws Exception {
        assertThat(SslPrincipalMapper.fromRules("RULE:^CN=(.*?),.*$/$1@$2/").name("CN=eve,O=x")).isEqualTo("eve@$2");
    }

    @Test
    void shouldFailWhenNoRuleApplies() {
        SslPrincipalMapper mapper = SslPrincipalMapper.fromRules("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/");
        assertThatThrownBy(() -> mapper.name("CN=alice,OU=Eng"))
                .isInstanceOf(SslPrincipalMapper.NoMatchingRuleException.class)
                .hasMessageStartingWith("No rules apply to CN=alice,OU=Eng");
    }

    @ParameterizedTest
    @ValueSource(strings = {"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/", "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, DEFAULT",
        "RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/", "RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L",
        "RULE:^cn=(.?),ou=(.?),dc=(.?),dc=(.?)$/$1@$2/U", "RULE:^CN=([^,ADEFLTU,]+)(,.*|$)/$1/", "",
        ",,RULE://,,,DEFAULT,,", "  RULE:  /     /U   ,DEFAULT  "})
    void shouldAcceptKafkasValidRules(String rules) {
        SslPrincipalMapper.fromRules(rules);
    }

    @ParameterizedTest
    @ValueSource(strings = {"default", "DEFAUL", "DEFAULT/L", "DEFAULT/U", "RULE:CN=(.*?),OU=ServiceUsers.*/$1",
        "rule:^CN=(.*?),OU=ServiceUsers.*$/$1/", "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L/U",
        "RULE:^CN=(.*?),OU=ServiceUsers.*$/L", "RULE:^CN=(.*?),OU=ServiceUsers.*$/U",
        "RULE:^CN=(.*?),OU=ServiceUsers.*$/LU"})
    void shouldRefuseKafkasInvalidRules(String rules) {
        assertThatThrownBy(() -> SslPrincipalMapper.fromRules(rules)).isInstanceOf(IllegalArgumentException.class);
    }
}
