package io.cairn.isr;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Kafka's {@code RackAwareReplicaSelector} rule (KIP-392), as {@link RackAwareReplicaSelector} applies it. */
class RackAwareReplicaSelectorTest {

    private final RackAwareReplicaSelector selector = new RackAwareReplicaSelector();
    private final ReplicaView leader = new ReplicaView(1, "r1", 100, 0);

    @Test
    void aClientInAFollowersRackReadsFromThatFollower() {
        ReplicaView r2 = new ReplicaView(2, "r2", 100, 10);
        ReplicaView r3 = new ReplicaView(3, "r3", 100, 10);

        assertThat(selector.select("r2", List.of(leader, r2, r3), leader)).isEqualTo(r2);
    }

    @Test
    void theLeaderWhenItIsInTheClientsRackOrNoReplicaIs() {
        ReplicaView r1Follower = new ReplicaView(2, "r1", 100, 0);

        assertThat(selector.select("r1", List.of(leader, r1Follower), leader)).isEqualTo(leader);
        assertThat(selector.select("r9", List.of(leader, r1Follower), leader)).isEqualTo(leader);
    }

    @Test
    void theLeaderForAClientWithoutRack() {
        ReplicaView r2 = new ReplicaView(2, "r2", 100, 0);

        assertThat(selector.select("", List.of(leader, r2), leader)).isEqualTo(leader);
        assertThat(selector.select(null, List.of(leader, r2), leader)).isEqualTo(leader);
    }

    @Test
    void amongTheRacksReplicasTheMostCaughtUpThenTheMostRecentlyCaughtUpThenTheLargestId() {
        ReplicaView behind = new ReplicaView(2, "r2", 90, 0);
        ReplicaView ahead = new ReplicaView(3, "r2", 100, 500);
        ReplicaView aheadRecent = new ReplicaView(4, "r2", 100, 5);
        ReplicaView aheadRecentToo = new ReplicaView(5, "r2", 100, 5);
        ReplicaView noRack = new ReplicaView(6, null, 200, 0);

        assertThat(selector.select("r2", List.of(leader, behind, ahead), leader)).isEqualTo(ahead);
        assertThat(selector.select("r2", List.of(leader, behind, ahead, aheadRecent, noRack), leader))
            .isEqualTo(aheadRecent);
        assertThat(selector.select("r2", List.of(aheadRecentToo, leader, aheadRecent), leader))
            .isEqualTo(aheadRecentToo);
    }
}
