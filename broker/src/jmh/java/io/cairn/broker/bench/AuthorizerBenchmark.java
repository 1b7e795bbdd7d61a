package io.cairn.broker.bench;

import io.cairn.broker.security.KafkaPrincipal;
import io.cairn.broker.security.StandardAclAuthorizer;
import io.cairn.metadata.image.AclEntry;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.wire.protocol.Uuid;
import java.net.InetAddress;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.internals.PluginMetricsImpl;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.metadata.authorizer.StandardAcl;
import org.apache.kafka.metadata.authorizer.StandardAuthorizer;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.apache.kafka.server.authorizer.AuthorizationResult;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * What one authorization decision costs (the check a Produce makes per topic, a Fetch per topic, a group request
 * per group), Cairn's {@link StandardAclAuthorizer} beside Kafka 4.1.1's {@code StandardAuthorizer} (test scope) on
 * the same ACLs: {@code acls} literal WRITE grants of 50 users on their own topics, a prefixed READ grant per
 * hundred, and a prefixed DENY. Two decisions: an allowed write (a literal match among many) and a denied one (no
 * ACL matches; {@code allow.everyone.if.no.acl.found=false}). Results are nanoseconds per decision.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class AuthorizerBenchmark {

    private static final int USERS = 50;

    @Param({"10", "1000", "10000"})
    public int acls;

    private StandardAclAuthorizer cairn;
    private StandardAuthorizer kafka;
    private KafkaPrincipal alice;
    private AuthorizableRequestContext aliceContext;
    private String allowedTopic;
    private List<Action> allowedWrite;
    private List<Action> deniedWrite;

    @Setup
    public void setUp() throws Exception {
        Map<Uuid, AclEntry> entries = new HashMap<>();
        kafka = new StandardAuthorizer();
        kafka.withPluginMetrics(new PluginMetricsImpl(new Metrics(), Map.of()));
        kafka.configure(Map.of(StandardAuthorizer.SUPER_USERS_CONFIG, "User:admin",
                StandardAuthorizer.ALLOW_EVERYONE_IF_NO_ACL_IS_FOUND_CONFIG, "false"));
        for (int i = 0; i < acls; i++) {
            boolean prefixed = i % 100 == 99;
            boolean deny = i % 1000 == 998;
            add(entries, new AclEntry(new Uuid(i + 1, i + 1), AclResourceType.TOPIC.code(),
                    prefixed || deny ? "team-" + i + "-" : "topic-" + i,
                    prefixed || deny ? PatternType.PREFIXED.code() : PatternType.LITERAL.code(),
                    "User:user" + (i % USERS), "*",
                    prefixed ? AclOperation.READ.code() : AclOperation.WRITE.code(),
                    deny ? (byte) 2 : (byte) 3));
        }
        kafka.completeInitialLoad();
        cairn = new StandardAclAuthorizer(Set.of("User:admin"), false);
        cairn.load(new MetadataImage(-1L, "", -1, 0L, Map.of(), Map.of(), Map.of(), Map.of(), 0L, 0L, entries,
                Map.of(), Map.of()));
        int user = 7 % USERS;
        alice = new KafkaPrincipal(KafkaPrincipal.USER_TYPE, "user" + user);
        aliceContext = context("user" + user);
        allowedTopic = "topic-7";
        allowedWrite = List.of(new Action(org.apache.kafka.common.acl.AclOperation.WRITE,
                new ResourcePattern(ResourceType.TOPIC, allowedTopic, PatternType.LITERAL), 1, false, false));
        deniedWrite = List.of(new Action(org.apache.kafka.common.acl.AclOperation.WRITE,
                new ResourcePattern(ResourceType.TOPIC, "elsewhere", PatternType.LITERAL), 1, false, false));
    }

    private void add(Map<Uuid, AclEntry> entries, AclEntry acl) {
        entries.put(acl.id(), acl);
        kafka.addAcl(new org.apache.kafka.common.Uuid(acl.id().mostSignificantBits(),
                acl.id().leastSignificantBits()), new StandardAcl(ResourceType.fromCode(acl.resourceType()),
                acl.resourceName(), PatternType.fromCode(acl.patternType()), acl.principal(), acl.host(),
                org.apache.kafka.common.acl.AclOperation.fromCode(acl.operation()),
                org.apache.kafka.common.acl.AclPermissionType.fromCode(acl.permissionType())));
    }

    @Benchmark
    public boolean cairnAllowedWrite() {
        return cairn.authorize(alice, "10.0.0.1", AclOperation.WRITE, AclResourceType.TOPIC, allowedTopic);
    }

    @Benchmark
    public boolean cairnDeniedWrite() {
        return cairn.authorize(alice, "10.0.0.1", AclOperation.WRITE, AclResourceType.TOPIC, "elsewhere");
    }

    @Benchmark
    public boolean kafkaAllowedWrite() {
        return kafka.authorize(aliceContext, allowedWrite).get(0) == AuthorizationResult.ALLOWED;
    }

    @Benchmark
    public boolean kafkaDeniedWrite() {
        return kafka.authorize(aliceContext, deniedWrite).get(0) == AuthorizationResult.ALLOWED;
    }

    private static AuthorizableRequestContext context(String user) throws Exception {
        InetAddress address = InetAddress.getByName("10.0.0.1");
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
                return "bench";
            }

            @Override
            public int correlationId() {
                return 0;
            }
        };
    }
}
