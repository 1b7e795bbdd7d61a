package io.cairn.broker.config;

import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * The settings of Kafka's standard authorizer, which {@code authorizer.class.name} selects by Kafka's class name
 * {@code org.apache.kafka.metadata.authorizer.StandardAuthorizer}: {@code super.users} (principals separated by
 * {@code ;}) and {@code allow.everyone.if.no.acl.found} (default false). Immutable.
 *
 * @param superUsers the principals that may do anything, each {@code type:name}
 * @param allowEveryoneIfNoAclFound whether an action on a resource no ACL names is allowed
 */
public record AuthorizerSettings(Set<String> superUsers, boolean allowEveryoneIfNoAclFound) {

    public AuthorizerSettings {
        superUsers = Collections.unmodifiableSet(new LinkedHashSet<>(superUsers));
    }

    /**
     * The settings of {@code props}, or null when {@code authorizer.class.name} is unset or empty.
     *
     * @throws ConfigException for another authorizer class (Cairn has only Kafka's standard one) or a super user
     *     that is not {@code type:name}
     */
    static AuthorizerSettings parse(Map<String, String> props) {
        String className = props.getOrDefault(BrokerConfig.AUTHORIZER_CLASS_NAME, "").trim();
        if (className.isEmpty()) {
            return null;
        }
        if (!className.equals(BrokerConfig.STANDARD_AUTHORIZER)) {
            throw ConfigException.invalid(BrokerConfig.AUTHORIZER_CLASS_NAME, className, "Cairn's only authorizer "
                    + "is Kafka's " + BrokerConfig.STANDARD_AUTHORIZER + " (ACLs in the metadata quorum); set that "
                    + "class name or leave " + BrokerConfig.AUTHORIZER_CLASS_NAME + " empty");
        }
        Set<String> superUsers = new LinkedHashSet<>();
        String value = props.get(BrokerConfig.SUPER_USERS);
        if (value != null) {
            for (String entry : value.split(";")) {
                String principal = entry.trim();
                if (principal.isEmpty()) {
                    continue;
                }
                if (principal.indexOf(':') < 0) {
                    throw ConfigException.invalid(BrokerConfig.SUPER_USERS, value, "expected a string in format "
                            + "principalType:principalName but got " + principal);
                }
                superUsers.add(principal);
            }
        }
        String allow = props.getOrDefault(BrokerConfig.ALLOW_EVERYONE_IF_NO_ACL_FOUND, "false").trim();
        return new AuthorizerSettings(superUsers, Boolean.parseBoolean(allow));
    }
}
