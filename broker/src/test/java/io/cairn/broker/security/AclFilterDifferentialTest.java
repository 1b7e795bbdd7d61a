package io.cairn.broker.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.metadata.image.AclEntry;
import io.cairn.metadata.image.AclFilter;
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.Test;

/**
 * DescribeAcls and DeleteAcls filters ({@link AclFilter}) against Kafka's {@code AclBindingFilter.matches}: seeded
 * random ACLs and filters (ANY and MATCH pattern types, null names, principals and hosts) must match alike.
 */
class AclFilterDifferentialTest {

    private static final long SEED = 42L;
    private static final String[] NAMES = {"*", "a", "ab", "abc", "b", "kafka-cluster"};
    private static final String[] PRINCIPALS = {"User:alice", "User:*", "User:bob"};
    private static final String[] HOSTS = {"*", "10.0.0.1"};

    @Test
    void filtersShouldMatchTheAclsKafkasFiltersMatch() {
        // Given
        Random random = new Random(SEED);
        List<String> differences = new ArrayList<>();
        int decisions = 0;

        // When
        for (int i = 0; i < 100_000; i++) {
            AclEntry acl = new AclEntry(Uuid.ONE, (byte) (2 + random.nextInt(6)), pick(random, NAMES),
                    (byte) (3 + random.nextInt(2)), pick(random, PRINCIPALS), pick(random, HOSTS),
                    (byte) (2 + random.nextInt(14)), (byte) (2 + random.nextInt(2)));
            AclFilter filter = new AclFilter((byte) (1 + random.nextInt(7)), random.nextInt(3) == 0 ? null
                    : pick(random, NAMES), (byte) (1 + random.nextInt(4)), random.nextInt(2) == 0 ? null
                    : pick(random, PRINCIPALS), random.nextInt(2) == 0 ? null : pick(random, HOSTS),
                    (byte) (random.nextInt(3) == 0 ? 1 : 2 + random.nextInt(14)),
                    (byte) (1 + random.nextInt(3)));
            AclBinding binding = new AclBinding(new ResourcePattern(ResourceType.fromCode(acl.resourceType()),
                    acl.resourceName(), PatternType.fromCode(acl.patternType())), new AccessControlEntry(
                    acl.principal(), acl.host(), AclOperation.fromCode(acl.operation()),
                    AclPermissionType.fromCode(acl.permissionType())));
            AclBindingFilter kafkaFilter = new AclBindingFilter(new ResourcePatternFilter(
                    ResourceType.fromCode(filter.resourceType()), filter.resourceName(),
                    PatternType.fromCode(filter.patternType())), new AccessControlEntryFilter(filter.principal(),
                    filter.host(), AclOperation.fromCode(filter.operation()),
                    AclPermissionType.fromCode(filter.permissionType())));
            decisions++;
            if (kafkaFilter.matches(binding) != filter.matches(acl)) {
                differences.add(filter + " on " + acl + ": kafka=" + kafkaFilter.matches(binding));
            }
        }

        // Then
        assertThat(decisions).isEqualTo(100_000);
        assertThat(differences).as("seed " + SEED).isEmpty();
    }

    private static String pick(Random random, String[] values) {
        return values[random.nextInt(values.length)];
    }
}
