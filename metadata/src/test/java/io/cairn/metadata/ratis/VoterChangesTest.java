package io.cairn.metadata.ratis;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AddRaftVoterRequestData;
import io.cairn.wire.message.RemoveRaftVoterRequestData;
import io.cairn.wire.protocol.Uuid;
import java.util.List;
import org.junit.jupiter.api.Test;

class VoterChangesTest {

    private static final Uuid DIR_1 = Uuid.fromString("AAAAAAAAAAAAAAAAAAAAAQ");
    private static final Uuid DIR_2 = Uuid.fromString("AAAAAAAAAAAAAAAAAAAAAg");
    private static final Uuid DIR_3 = Uuid.fromString("AAAAAAAAAAAAAAAAAAAAAw");
    private static final Uuid DIR_4 = Uuid.fromString("AAAAAAAAAAAAAAAAAAAABA");
    private static final List<VoterChanges.Voter> VOTERS = List.of(new VoterChanges.Voter(1, DIR_1, "h1", 9093),
            new VoterChanges.Voter(2, DIR_2, "h2", 9093), new VoterChanges.Voter(3, DIR_3, "h3", 9093));
    private static final VoterChanges.LeaderState LEADER = new VoterChanges.LeaderState("cluster", true, false,
            (short) 1, VOTERS, "CONTROLLER");

    @Test
    void addShouldAppendTheNewVoterAtItsControllerListener() {
        // When
        VoterChanges.Outcome outcome = VoterChanges.add(add(4, DIR_4, "CONTROLLER"), LEADER);

        // Then
        assertThat(outcome.refused()).isFalse();
        assertThat(outcome.newVoters()).extracting(VoterChanges.Voter::id).containsExactly(1, 2, 3, 4);
        assertThat(outcome.changed()).isEqualTo(new VoterChanges.Voter(4, DIR_4, "h4", 9094));
    }

    @Test
    void addShouldRefuseAnotherClusterBeforeAnythingElse() {
        // When
        VoterChanges.Outcome outcome = VoterChanges.add(add(1, Uuid.ZERO, "OTHER").setClusterId("other"),
                new VoterChanges.LeaderState("cluster", false, true, (short) 0, VOTERS, "CONTROLLER"));

        // Then
        assertThat(outcome.addResponse().errorCode()).isEqualTo(Errors.INCONSISTENT_CLUSTER_ID.code());
        assertThat(outcome.addResponse().errorMessage())
                .isEqualTo("The given id \"other\" doesn't match the cluster id \"cluster\"");
    }

    @Test
    void aNullClusterIdShouldNotBeChecked() {
        // When
        VoterChanges.Outcome outcome = VoterChanges.add(add(4, DIR_4, "CONTROLLER").setClusterId(null), LEADER);

        // Then
        assertThat(outcome.refused()).isFalse();
    }

    @Test
    void addShouldBeNotLeaderOrFollowerOffTheReadyLeader() {
        // When
        VoterChanges.Outcome outcome = VoterChanges.add(add(4, DIR_4, "CONTROLLER"),
                new VoterChanges.LeaderState("cluster", false, false, (short) 1, VOTERS, "CONTROLLER"));

        // Then
        assertThat(outcome.addResponse().errorCode()).isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER.code());
    }

    @Test
    void addShouldRefuseAVoterWithoutADirectoryIdOrAControllerEndpoint() {
        // When
        VoterChanges.Outcome noDirectory = VoterChanges.add(add(4, Uuid.ZERO, "CONTROLLER"), LEADER);
        VoterChanges.Outcome negativeId = VoterChanges.add(add(-1, DIR_4, "CONTROLLER"), LEADER);
        VoterChanges.Outcome otherListener = VoterChanges.add(add(4, DIR_4, "PLAINTEXT"), LEADER);

        // Then
        assertThat(noDirectory.addResponse().errorCode()).isEqualTo(Errors.INVALID_REQUEST.code());
        assertThat(noDirectory.addResponse().errorMessage())
                .isEqualTo("Add voter request didn't include a valid voter");
        assertThat(negativeId.addResponse().errorCode()).isEqualTo(Errors.INVALID_REQUEST.code());
        assertThat(otherListener.addResponse().errorCode()).isEqualTo(Errors.INVALID_REQUEST.code());
        assertThat(otherListener.addResponse().errorMessage()).startsWith("Add voter request didn't include the "
                + "endpoint (").endsWith(") for the default listener CONTROLLER");
    }

    @Test
    void addShouldTimeOutWhileAnotherVoterChangeIsInProgress() {
        // When
        VoterChanges.Outcome outcome = VoterChanges.add(add(4, DIR_4, "CONTROLLER"),
                new VoterChanges.LeaderState("cluster", true, true, (short) 1, VOTERS, "CONTROLLER"));

        // Then
        assertThat(outcome.addResponse().errorCode()).isEqualTo(Errors.REQUEST_TIMED_OUT.code());
        assertThat(outcome.addResponse().errorMessage())
                .isEqualTo("Request timed out waiting for leader to handle previous voter change request");
    }

    @Test
    void aStaticQuorumShouldAnswerUnsupportedVersion() {
        // Given
        VoterChanges.LeaderState staticQuorum = new VoterChanges.LeaderState("cluster", true, false, (short) 0,
                VOTERS, "CONTROLLER");

        // When
        VoterChanges.Outcome add = VoterChanges.add(add(4, DIR_4, "CONTROLLER"), staticQuorum);
        VoterChanges.Outcome remove = VoterChanges.remove(remove(3, DIR_3), staticQuorum);

        // Then
        assertThat(add.addResponse().errorCode()).isEqualTo(Errors.UNSUPPORTED_VERSION.code());
        assertThat(add.addResponse().errorMessage())
                .isEqualTo("Cluster doesn't support adding voter because the kraft.version feature is 0");
        assertThat(remove.removeResponse().errorCode()).isEqualTo(Errors.UNSUPPORTED_VERSION.code());
        assertThat(remove.removeResponse().errorMessage())
                .isEqualTo("Cluster doesn't support removing voter because the kraft.version feature is 0");
    }

    @Test
    void addShouldRefuseAVoterIdAlreadyInTheSetWhateverItsDirectory() {
        // When
        VoterChanges.Outcome outcome = VoterChanges.add(add(2, DIR_4, "CONTROLLER"), LEADER);

        // Then
        assertThat(outcome.addResponse().errorCode()).isEqualTo(Errors.DUPLICATE_VOTER.code());
        assertThat(outcome.addResponse().errorMessage()).isEqualTo("The voter id for ReplicaKey(id=2, directoryId="
                + "Optional[" + DIR_4 + "]) is already part of the set of voters [ReplicaKey(id=1, directoryId="
                + "Optional[" + DIR_1 + "]), ReplicaKey(id=2, directoryId=Optional[" + DIR_2 + "]), ReplicaKey(id=3, "
                + "directoryId=Optional[" + DIR_3 + "])].");
    }

    @Test
    void removeShouldLeaveTheOtherVoters() {
        // When
        VoterChanges.Outcome outcome = VoterChanges.remove(remove(2, DIR_2), LEADER);

        // Then
        assertThat(outcome.refused()).isFalse();
        assertThat(outcome.newVoters()).extracting(VoterChanges.Voter::id).containsExactly(1, 3);
        assertThat(outcome.changed().id()).isEqualTo(2);
    }

    @Test
    void removeShouldNotFindAVoterKeyWithAnotherDirectoryAnUnknownIdOrTheLastVoter() {
        // Given
        VoterChanges.LeaderState alone = new VoterChanges.LeaderState("cluster", true, false, (short) 1,
                List.of(VOTERS.get(0)), "CONTROLLER");

        // When
        VoterChanges.Outcome otherDirectory = VoterChanges.remove(remove(2, DIR_3), LEADER);
        VoterChanges.Outcome unknown = VoterChanges.remove(remove(9, DIR_4), LEADER);
        VoterChanges.Outcome last = VoterChanges.remove(remove(1, DIR_1), alone);

        // Then
        assertThat(otherDirectory.removeResponse().errorCode()).isEqualTo(Errors.VOTER_NOT_FOUND.code());
        assertThat(otherDirectory.removeResponse().errorMessage()).startsWith("Cannot remove voter ReplicaKey(id=2, "
                + "directoryId=Optional[" + DIR_3 + "]) from the set of voters [ReplicaKey(id=1");
        assertThat(unknown.removeResponse().errorCode()).isEqualTo(Errors.VOTER_NOT_FOUND.code());
        assertThat(last.removeResponse().errorCode()).isEqualTo(Errors.VOTER_NOT_FOUND.code());
    }

    @Test
    void removeShouldRefuseAVoterWithoutADirectoryId() {
        // When
        VoterChanges.Outcome outcome = VoterChanges.remove(remove(2, Uuid.ZERO), LEADER);

        // Then
        assertThat(outcome.removeResponse().errorCode()).isEqualTo(Errors.INVALID_REQUEST.code());
        assertThat(outcome.removeResponse().errorMessage())
                .isEqualTo("Remove voter request didn't include a valid voter");
    }

    private static AddRaftVoterRequestData add(int id, Uuid directoryId, String listener) {
        AddRaftVoterRequestData request = new AddRaftVoterRequestData().setClusterId("cluster").setTimeoutMs(30_000)
                .setVoterId(id).setVoterDirectoryId(directoryId);
        request.listeners().add(new AddRaftVoterRequestData.Listener().setName(listener).setHost("h" + id)
                .setPort(9090 + id));
        return request;
    }

    private static RemoveRaftVoterRequestData remove(int id, Uuid directoryId) {
        return new RemoveRaftVoterRequestData().setClusterId("cluster").setVoterId(id).setVoterDirectoryId(directoryId);
    }
}
