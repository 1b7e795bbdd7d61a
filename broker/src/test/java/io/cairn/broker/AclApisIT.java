package io.cairn.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.testkit.LeakDetection;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.SecurityDisabledException;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * CreateAcls, DescribeAcls and DeleteAcls as the admin client uses them, on an in-process broker with Kafka's
 * standard authorizer (the PLAINTEXT principal {@code User:ANONYMOUS} a super user) and on one without an authorizer.
 */
@ExtendWith(LeakDetection.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AclApisIT {

    private static final AclBinding ALICE_READS_ORDERS = new AclBinding(
            new ResourcePattern(ResourceType.TOPIC, "orders", PatternType.LITERAL),
            new AccessControlEntry("User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW));
    private static final AclBinding BOB_WRITES_PREFIX = new AclBinding(
            new ResourcePattern(ResourceType.TOPIC, "ord", PatternType.PREFIXED),
            new AccessControlEntry("User:bob", "10.0.0.1", AclOperation.WRITE, AclPermissionType.DENY));
    private static final AclBinding EVERYONE_JOINS_GROUP = new AclBinding(
            new ResourcePattern(ResourceType.GROUP, "*", PatternType.LITERAL),
            new AccessControlEntry("User:*", "*", AclOperation.READ, AclPermissionType.ALLOW));

    @TempDir
    static Path secureDir;
    @TempDir
    static Path openDir;
    private static LogCapture logs;
    private static InProcessBroker secure;
    private static InProcessBroker open;
    private static Admin admin;
    private static Admin openAdmin;

    @BeforeAll
    static void startBrokers() throws Exception {
        logs = LogCapture.start();
        secure = InProcessBroker.start(secureDir, Map.of("authorizer.class.name",
                "org.apache.kafka.metadata.authorizer.StandardAuthorizer", "super.users", "User:ANONYMOUS"));
        open = InProcessBroker.start(openDir, Map.of());
        admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + secure.port()));
        openAdmin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + open.port()));
    }

    @AfterAll
    static void stopBrokers() {
        admin.close();
        openAdmin.close();
        secure.close();
        open.close();
        logs.close();
    }

    @Test
    void aclsCreatedShouldBeListedByFilterAndRemovedByFilter() throws Exception {
        // Given
        admin.createAcls(List.of(ALICE_READS_ORDERS, BOB_WRITES_PREFIX, EVERYONE_JOINS_GROUP)).all()
                .get(30, TimeUnit.SECONDS);
        // Creating the same binding again succeeds without a second copy.
        admin.createAcls(List.of(ALICE_READS_ORDERS)).all().get(30, TimeUnit.SECONDS);
        Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(describe(AclBindingFilter.ANY)).containsExactlyInAnyOrder(ALICE_READS_ORDERS,
                        BOB_WRITES_PREFIX, EVERYONE_JOINS_GROUP));

        // When
        Collection<AclBinding> matchingOrders = describe(new AclBindingFilter(
                new ResourcePatternFilter(ResourceType.TOPIC, "orders", PatternType.MATCH),
                AccessControlEntryFilter.ANY));
        Collection<AclBinding> bobs = describe(new AclBindingFilter(ResourcePatternFilter.ANY,
                new AccessControlEntryFilter("User:bob", null, AclOperation.ANY, AclPermissionType.ANY)));
        Collection<AclBinding> deleted = admin.deleteAcls(List.of(new AclBindingFilter(
                new ResourcePatternFilter(ResourceType.TOPIC, null, PatternType.ANY), AccessControlEntryFilter.ANY)))
                .all().get(30, TimeUnit.SECONDS);

        // Then
        assertThat(matchingOrders).containsExactlyInAnyOrder(ALICE_READS_ORDERS, BOB_WRITES_PREFIX);
        assertThat(bobs).containsExactly(BOB_WRITES_PREFIX);
        assertThat(deleted).containsExactlyInAnyOrder(ALICE_READS_ORDERS, BOB_WRITES_PREFIX);
        Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(describe(AclBindingFilter.ANY)).containsExactly(EVERYONE_JOINS_GROUP));
    }

    @Test
    void aClusterAclNotNamedKafkaClusterShouldBeRefusedAsInvalid() {
        // Given
        AclBinding wrongCluster = new AclBinding(new ResourcePattern(ResourceType.CLUSTER, "prod", PatternType.LITERAL),
                new AccessControlEntry("User:alice", "*", AclOperation.ALTER, AclPermissionType.ALLOW));

        // When / Then
        assertThatThrownBy(() -> admin.createAcls(List.of(wrongCluster)).all().get(30, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class).cause().isInstanceOf(InvalidRequestException.class)
                .hasMessage("The only valid name for the CLUSTER resource is kafka-cluster");
    }

    @Test
    void withoutAnAuthorizerTheAclApisShouldAnswerSecurityDisabled() {
        // When / Then
        assertThatThrownBy(() -> openAdmin.createAcls(List.of(ALICE_READS_ORDERS)).all().get(30, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class).cause().isInstanceOf(SecurityDisabledException.class);
        assertThatThrownBy(() -> openAdmin.describeAcls(AclBindingFilter.ANY).values().get(30, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class).cause().isInstanceOf(SecurityDisabledException.class);
        assertThatThrownBy(() -> openAdmin.deleteAcls(List.of(AclBindingFilter.ANY)).all()
                .get(30, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class).cause().isInstanceOf(SecurityDisabledException.class);
    }

    private static Collection<AclBinding> describe(AclBindingFilter filter) throws Exception {
        return admin.describeAcls(filter).values().get(30, TimeUnit.SECONDS);
    }
}
