package io.cairn.broker.group;

import io.cairn.broker.group.record.GroupMetadataValue;
import io.cairn.wire.error.Errors;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ClassicGroupTest {

    private static final long NOW = 1_700_000_000_000L;

    private static ClassicGroupMember member(String id, String instanceId, String... protocols) {
        Map<String, byte[]> map = new LinkedHashMap<>();
        for (String protocol : protocols) {
            map.put(protocol, ClassicGroupManagerTest.subscription("topic-" + id));
        }
        return new ClassicGroupMember(id, instanceId, "client-" + id, "/10.0.0.1", 30_000, 10_000, "consumer", map);
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aStoredGroupIsRebuiltWithItsMembersLeaderAndAssignments() {
        // Given
        ClassicGroup group = new ClassicGroup("g", NOW);
        group.add(member("a", null, "range"), null);
        group.add(member("b", "instance-b", "range"), null);
        group.transitionTo(ClassicGroupState.PREPARING_REBALANCE, NOW);
        group.initNextGeneration(NOW + 5);

        // When
        GroupMetadataValue value = group.toRecordValue(Map.of("a", bytes("for-a")), NOW);
        ClassicGroup loaded = ClassicGroup.fromRecord("g", value, NOW + 100);

        // Then
        assertThat(value.generation()).isEqualTo(1);
        assertThat(value.currentStateTimestamp()).isEqualTo(NOW + 5);
        assertThat(value.members().get(1).assignment()).isEmpty();
        assertThat(loaded.state()).isEqualTo(ClassicGroupState.STABLE);
        assertThat(loaded.generationId()).isEqualTo(1);
        assertThat(loaded.protocolType()).isEqualTo("consumer");
        assertThat(loaded.protocolName()).isEqualTo("range");
        assertThat(loaded.leaderId()).isEqualTo("a");
        assertThat(loaded.stateTimestampMs()).isEqualTo(NOW + 5);
        assertThat(loaded.member("a").assignment()).isEqualTo(bytes("for-a"));
        assertThat(loaded.member("b").groupInstanceId()).isEqualTo("instance-b");
        assertThat(loaded.member("b").clientId()).isEqualTo("client-b");
        assertThat(loaded.member("b").rebalanceTimeoutMs()).isEqualTo(30_000);
        assertThat(loaded.staticMemberId("instance-b")).isEqualTo("b");
        assertThat(loaded.subscribedTopics()).contains(Set.of("topic-a", "topic-b"));
        assertThat(loaded.toRecordValue(null, NOW)).isEqualTo(value);
    }

    @Test
    void aVersion0RecordWithoutRebalanceTimeoutUsesTheSessionTimeout() {
        // Given
        GroupMetadataValue value = new GroupMetadataValue().setProtocolType("consumer").setGeneration(3)
                .setProtocol("range").setLeader("a").setMembers(new ArrayList<>(List.of(
                        new GroupMetadataValue.MemberMetadata().setMemberId("a").setClientId("c").setClientHost("/h")
                                .setSessionTimeout(12_000).setRebalanceTimeout(-1)
                                .setSubscription(new byte[] {0, 0}).setAssignment(new byte[0]))));

        // When
        ClassicGroup loaded = ClassicGroup.fromRecord("g", value, NOW);

        // Then
        assertThat(loaded.member("a").rebalanceTimeoutMs()).isEqualTo(12_000);
        assertThat(loaded.stateTimestampMs()).isEqualTo(NOW);
        // An unreadable subscription leaves the topics unknown: a consumer group then counts as subscribed.
        assertThat(loaded.subscribedTopics()).isEmpty();
        assertThat(loaded.isSubscribedToTopic("anything")).isTrue();
    }

    @Test
    void onlyKafkasStateTransitionsAreAllowed() {
        // Given
        ClassicGroup group = new ClassicGroup("g", NOW);

        // Then
        assertThatThrownBy(() -> group.transitionTo(ClassicGroupState.STABLE, NOW))
                .isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> group.transitionTo(ClassicGroupState.COMPLETING_REBALANCE, NOW))
                .isInstanceOf(IllegalStateException.class);
        group.transitionTo(ClassicGroupState.PREPARING_REBALANCE, NOW + 1);
        assertThat(group.previousState()).isEqualTo(ClassicGroupState.EMPTY);
        assertThat(group.stateTimestampMs()).isEqualTo(NOW + 1);
        group.transitionTo(ClassicGroupState.DEAD, NOW);
        assertThat(ClassicGroupState.PREPARING_REBALANCE.toString()).isEqualTo("PreparingRebalance");
        assertThat(ClassicGroupState.COMPLETING_REBALANCE.lowerCaseName()).isEqualTo("completingrebalance");
    }

    @Test
    void theChosenProtocolIsTheMostPreferredAmongThoseAllMembersSupport() {
        // Given
        ClassicGroup group = new ClassicGroup("g", NOW);
        group.add(member("a", null, "sticky", "range", "roundrobin"), null);
        group.add(member("b", null, "roundrobin", "range"), null);
        group.add(member("c", null, "range", "roundrobin"), null);

        // Then: sticky is not common; roundrobin and range are; a and c prefer range
        assertThat(group.selectProtocol()).isEqualTo("range");
    }

    @Test
    void aNonEmptyGroupOnlyAcceptsItsProtocolTypeAndACommonProtocol() {
        // Given
        ClassicGroup group = new ClassicGroup("g", NOW);
        assertThat(group.supportsProtocols("", Set.of("range"))).isFalse();
        assertThat(group.supportsProtocols("consumer", Set.of())).isFalse();
        group.add(member("a", null, "range", "roundrobin"), null);
        group.transitionTo(ClassicGroupState.PREPARING_REBALANCE, NOW);

        // Then
        assertThat(group.supportsProtocols("consumer", Set.of("roundrobin"))).isTrue();
        assertThat(group.supportsProtocols("consumer", Set.of("sticky"))).isFalse();
        assertThat(group.supportsProtocols("connect", Set.of("range"))).isFalse();
    }

    @Test
    void aStaticMemberIsValidatedByItsInstanceIdAndMemberId() {
        // Given
        ClassicGroup group = new ClassicGroup("g", NOW);
        group.add(member("a", "instance-a", "range"), null);

        // Then
        assertThat(group.validateMember("a", "instance-a")).isEqualTo(Errors.NONE);
        assertThat(group.validateMember("a", null)).isEqualTo(Errors.NONE);
        assertThat(group.validateMember("old-a", "instance-a")).isEqualTo(Errors.FENCED_INSTANCE_ID);
        assertThat(group.validateMember("a", "instance-x")).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        assertThat(group.validateMember("x", null)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);

        // When
        group.remove("a");

        // Then
        assertThat(group.hasStaticMember("instance-a")).isFalse();
        assertThat(group.leaderId()).isNull();
    }
}
