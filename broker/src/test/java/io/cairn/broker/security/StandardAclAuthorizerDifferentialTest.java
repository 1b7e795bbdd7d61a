package io.cairn.broker.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.metadata.image.AclEntry;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.wire.protocol.Uuid;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.apache.kafka.common.metrics.internals.PluginMetricsImpl;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.metadata.authorizer.StandardAcl;
import org.apache.kafka.metadata.authorizer.StandardAuthorizer;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.apache.kafka.server.authorizer.AuthorizationResult;
import org.junit.jupiter.api.Test;

/**
 * Seeded random ACL sets, principals, hosts, resources and operations, each decided by {@link StandardAclAuthorizer}
 * and by Kafka's own {@code StandardAuthorizer} (4.1.1, test scope): the two must never disagree, neither on
 * {@code authorize} nor on {@code authorizeByResourceType}.
 */
class StandardAclAuthorizerDifferentialTest {

    private static final long SEED = 20261204L;
    private static final int ACL_SETS = 400;
    private static final int DECISIONS_PER_SET = 300;

    private static final byte[] RESOURCE_TYPES = {AclResourceType.TOPIC.code(), AclResourceType.GROUP.code(),
        AclResourceType.CLUSTER.code(), AclResourceType.TRANSACTIONAL_ID.code(), AclResourceType.USER.code(),
        AclResourceType.DELEGATION_TOKEN.code()};
    /** Names that are prefixes of each other, the wildcard, and names no ACL uses. */
    private static final String[] ACL_NAMES = {"*", "a", "ab", "abc", "abd", "abcd", "b", "ba", "kafka-cluster",
        "t-1", "t", "*a"};
    private static final String[] RESOURCE_NAMES = {"*", "a", "ab", "abc", "abd", "abcd", "abcde", "b", "ba", "bab",
        "kafka-cluster", "t-1", "t-10", "t", "c", "*a", "*ab", "hardcode"};
    private static final String[] ACL_PRINCIPALS = {"User:alice", "User:bob", "User:*", "User:carol", "Group:alice",
        "User:ANONYMOUS"};
    /** Not {@code *}: Kafka's authorizer throws for the principal {@code User:*} (a duplicate in its Set.of). */
    private static final String[] USERS = {"alice", "bob", "carol", "dave", "ANONYMOUS"};
    private static final String[] ACL_HOSTS = {"*", "10.0.0.1", "10.0.0.2"};
    private static final String[] HOSTS = {"10.0.0.1", "10.0.0.2", "10.0.0.3"};

    @Test
    void decisionsShouldEqualKafkaStandardAuthorizerForRandomAclSets() throws UnknownHostException {
        // Given
        Random random = new Random(SEED);
        int decisions = 0;
        List<String> differences = new ArrayList<>();

        // When
        for (int set = 0; set < ACL_SETS; set++) {
            Set<String> superUsers = new HashSet<>();
            if (random.nextInt(4) == 0) {
                superUsers.add("User:" + USERS[random.nextInt(USERS.length)]);
            }
            boolean allowIfNoAcl = random.nextBoolean();
            List<AclEntry> acls = randomAcls(random);
            StandardAclAuthorizer ours = ours(superUsers, allowIfNoAcl, acls);
            StandardAuthorizer kafka = kafka(superUsers, allowIfNoAcl, acls);
            for (int i = 0; i < DECISIONS_PER_SET; i++) {
                String user = USERS[random.nextInt(USERS.length)];
                String host = HOSTS[random.nextInt(HOSTS.length)];
                byte type = RESOURCE_TYPES[random.nextInt(RESOURCE_TYPES.length)];
                AclOperation operation = AclOperation.fromCode((byte) (2 + random.nextInt(14)));
                String name = RESOURCE_NAMES[random.nextInt(RESOURCE_NAMES.length)];
                AuthorizableRequestContext context = context(user, host);
                boolean expected = kafka.authorize(context, List.of(new Action(
                        org.apache.kafka.common.acl.AclOperation.fromCode(operation.code()),
                        new ResourcePattern(ResourceType.fromCode(type), name, PatternType.LITERAL), 1, false,
                        false))).get(0) == AuthorizationResult.ALLOWED;
                boolean actual = ours.authorize(new KafkaPrincipal(KafkaPrincipal.USER_TYPE, user), host, operation,
                        AclResourceType.fromCode(type), name);
                decisions++;
                if (expected != actual) {
                    differences.add("set " + set + " " + acls + " super " + superUsers + " allowIfNoAcl "
                            + allowIfNoAcl + ": User:" + user + "@" + host + " " + operation + " "
                            + AclResourceType.fromCode(type) + ":" + name + " kafka=" + expected);
                }
                boolean expectedByType = kafka.authorizeByResourceType(context,
                        org.apache.kafka.common.acl.AclOperation.fromCode(operation.code()),
                        ResourceType.fromCode(type)) == AuthorizationResult.ALLOWED;
                boolean actualByType = ours.authorizeByResourceType(
                        new KafkaPrincipal(KafkaPrincipal.USER_TYPE, user), host, operation,
                        AclResourceType.fromCode(type));
                decisions++;
                if (expectedByType != actualByType) {
                    differences.add("set " + set + " " + acls + " super " + superUsers + " allowIfNoAcl "
                            + allowIfNoAcl + ": by type User:" + user + "@" + host + " " + operation + " "
                            + AclResourceType.fromCode(type) + " kafka=" + expectedByType);
                }
            }
        }

        // Then
        assertThat(decisions).isGreaterThanOrEqualTo(200_000);
        assertThat(differences).as("seed " + SEED).isEmpty();
    }

    private static List<AclEntry> randomAcls(Random random) {
        int count = random.nextInt(4) == 0 ? 0 : 1 + random.nextInt(30);
        List<AclEntry> acls = new ArrayList<>();
        // As the controller keeps them: one entry per distinct binding (Kafka's cache refuses a duplicate).
        Set<List<Object>> bindings = new HashSet<>();
        for (int i = 0; i < count; i++) {
            // Mostly ALL and the operations with implications, so implied and explicit grants meet often.
            byte operation = random.nextInt(3) == 0 ? AclOperation.ALL.code() : (byte) (3 + random.nextInt(13));
            acls.add(new AclEntry(new Uuid(random.nextLong(), random.nextLong()),
                    RESOURCE_TYPES[random.nextInt(3)],
                    ACL_NAMES[random.nextInt(ACL_NAMES.length)],
                    random.nextBoolean() ? (byte) 3 : (byte) 4,
                    ACL_PRINCIPALS[random.nextInt(ACL_PRINCIPALS.length)],
                    ACL_HOSTS[random.nextInt(ACL_HOSTS.length)],
                    operation,
                    random.nextInt(3) == 0 ? (byte) 2 : (byte) 3));
            AclEntry acl = acls.get(acls.size() - 1);
            if (!bindings.add(List.of(acl.resourceType(), acl.resourceName(), acl.patternType(), acl.principal(),
                    acl.host(), acl.operation(), acl.permissionType()))) {
                acls.remove(acls.size() - 1);
            }
        }
        return acls;
    }

    private static StandardAclAuthorizer ours(Set<String> superUsers, boolean allowIfNoAcl, List<AclEntry> acls) {
        StandardAclAuthorizer authorizer = new StandardAclAuthorizer(superUsers, allowIfNoAcl);
        Map<io.cairn.wire.protocol.Uuid, AclEntry> byId = new HashMap<>();
        acls.forEach(acl -> byId.put(acl.id(), acl));
        authorizer.load(new MetadataImage(-1L, "", -1, 0L, Map.of(), Map.of(), Map.of(), Map.of(), 0L, 0L, byId,
                Map.of(), Map.of()));
        return authorizer;
    }

    private static StandardAuthorizer kafka(Set<String> superUsers, boolean allowIfNoAcl, List<AclEntry> acls) {
        StandardAuthorizer authorizer = new StandardAuthorizer();
        authorizer.withPluginMetrics(new PluginMetricsImpl(new Metrics(), Map.of()));
        authorizer.configure(Map.of(StandardAuthorizer.SUPER_USERS_CONFIG, String.join(";", superUsers),
                StandardAuthorizer.ALLOW_EVERYONE_IF_NO_ACL_IS_FOUND_CONFIG, String.valueOf(allowIfNoAcl)));
        for (AclEntry acl : acls) {
            authorizer.addAcl(new org.apache.kafka.common.Uuid(acl.id().mostSignificantBits(),
                    acl.id().leastSignificantBits()), new StandardAcl(ResourceType.fromCode(acl.resourceType()),
                    acl.resourceName(), PatternType.fromCode(acl.patternType()), acl.principal(), acl.host(),
                    org.apache.kafka.common.acl.AclOperation.fromCode(acl.operation()),
                    org.apache.kafka.common.acl.AclPermissionType.fromCode(acl.permissionType())));
        }
        authorizer.completeInitialLoad();
        return authorizer;
    }

    private static AuthorizableRequestContext context(String user, String host) throws UnknownHostException {
        InetAddress address = InetAddress.getByName(host);
        org.apache.kafka.common.security.auth.KafkaPrincipal principal =
                new org.apache.kafka.common.security.auth.KafkaPrincipal("User", user);
        return new AuthorizableRequestContext() {
            @Override
            public String listenerName() {
                return "SASL_PLAINTEXT";
            }

            @Override
            public SecurityProtocol securityProtocol() {
                return SecurityProtocol.SASL_PLAINTEXT;
            }

            @Override
            public org.apache.kafka.common.security.auth.KafkaPrincipal principal() {
                return principal;
            }

            @Override
            public InetAddress clientAddress() {
                return address;
            }

            @Override
            public int requestType() {
                return 0;
            }

            @Override
            public int requestVersion() {
                return 0;
            }

            @Override
            public String clientId() {
                return "differential";
            }

            @Override
            public int correlationId() {
                return 0;
            }
        };
    }
}
