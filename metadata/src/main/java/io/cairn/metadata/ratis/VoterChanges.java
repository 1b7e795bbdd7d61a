package io.cairn.metadata.ratis;

import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AddRaftVoterRequestData;
import io.cairn.wire.message.AddRaftVoterResponseData;
import io.cairn.wire.message.RemoveRaftVoterRequestData;
import io.cairn.wire.message.RemoveRaftVoterResponseData;
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The checks of AddRaftVoter and RemoveRaftVoter (KIP-853) on the Raft leader, in the order and with the codes and
 * messages of Kafka's {@code KafkaRaftClient}, {@code AddVoterHandler} and {@code RemoveVoterHandler}: a cluster id
 * that is not this cluster's is INCONSISTENT_CLUSTER_ID, a node that is not the ready leader NOT_LEADER_OR_FOLLOWER,
 * a voter without an id or a directory id INVALID_REQUEST (and for AddRaftVoter one without an endpoint of the
 * default controller listener), a voter change still in progress or a leader that has not committed its term yet
 * REQUEST_TIMED_OUT, {@code kraft.version} 0 (a static quorum) UNSUPPORTED_VERSION, a voter id already in the set
 * DUPLICATE_VOTER, and a voter key (id and directory id) not in the set, or the last voter, VOTER_NOT_FOUND.
 * What passes gives the new voter set. Pure: the caller reads the Raft state and applies the result. Stateless,
 * thread-safe.
 */
final class VoterChanges {

    /** A voter: its node id, metadata directory id, and the host and port of its controller listener. */
    record Voter(int id, Uuid directoryId, String host, int port) {

        /** Kafka's {@code ReplicaKey} as its messages print it. */
        String key() {
            return replicaKey(id, directoryId);
        }
    }

    /** The Raft leader's state the checks read, taken at one moment. */
    record LeaderState(String clusterId, boolean readyLeader, boolean changePending, short kraftVersion,
                       List<Voter> voters, String listenerName) {

        public LeaderState {
            voters = List.copyOf(voters);
        }
    }

    /** The outcome: a refusal (error and message) or the voter set to commit. */
    record Outcome(Errors error, String message, List<Voter> newVoters, Voter changed) {

        static Outcome refused(Errors error, String message) {
            return new Outcome(error, message, List.of(), null);
        }

        boolean refused() {
            return error != Errors.NONE;
        }

        AddRaftVoterResponseData addResponse() {
            return new AddRaftVoterResponseData().setErrorCode(error.code()).setErrorMessage(message);
        }

        RemoveRaftVoterResponseData removeResponse() {
            return new RemoveRaftVoterResponseData().setErrorCode(error.code()).setErrorMessage(message);
        }
    }

    private VoterChanges() {
    }

    static Outcome add(AddRaftVoterRequestData request, LeaderState state) {
        Optional<Outcome> common = common(request.clusterId(), request.voterId(), request.voterDirectoryId(), state,
                "Add voter request didn't include a valid voter");
        if (common.isPresent()) {
            return common.get();
        }
        AddRaftVoterRequestData.Listener endpoint = request.listeners().stream()
                .filter(l -> l.name().equals(state.listenerName())).findFirst().orElse(null);
        if (endpoint == null) {
            return Outcome.refused(Errors.INVALID_REQUEST, "Add voter request didn't include the endpoint ("
                    + endpoints(request) + ") for the default listener " + state.listenerName());
        }
        Optional<Outcome> progress = inProgress(state, "adding");
        if (progress.isPresent()) {
            return progress.get();
        }
        if (state.voters().stream().anyMatch(v -> v.id() == request.voterId())) {
            return Outcome.refused(Errors.DUPLICATE_VOTER, "The voter id for "
                    + replicaKey(request.voterId(), request.voterDirectoryId())
                    + " is already part of the set of voters " + keys(state.voters()) + ".");
        }
        Voter added = new Voter(request.voterId(), request.voterDirectoryId(), endpoint.host(), endpoint.port());
        List<Voter> next = new ArrayList<>(state.voters());
        next.add(added);
        return new Outcome(Errors.NONE, null, List.copyOf(next), added);
    }

    static Outcome remove(RemoveRaftVoterRequestData request, LeaderState state) {
        Optional<Outcome> common = common(request.clusterId(), request.voterId(), request.voterDirectoryId(), state,
                "Remove voter request didn't include a valid voter");
        if (common.isPresent()) {
            return common.get();
        }
        Optional<Outcome> progress = inProgress(state, "removing");
        if (progress.isPresent()) {
            return progress.get();
        }
        Voter removed = state.voters().stream().filter(v -> v.id() == request.voterId()
                && v.directoryId().equals(request.voterDirectoryId())).findFirst().orElse(null);
        if (removed == null || state.voters().size() <= 1) {
            return Outcome.refused(Errors.VOTER_NOT_FOUND, "Cannot remove voter "
                    + replicaKey(request.voterId(), request.voterDirectoryId()) + " from the set of voters "
                    + keys(state.voters()));
        }
        List<Voter> next = state.voters().stream().filter(v -> v.id() != request.voterId()).toList();
        return new Outcome(Errors.NONE, null, next, removed);
    }

    private static Optional<Outcome> common(String clusterId, int voterId, Uuid directoryId, LeaderState state,
                                            String invalidVoter) {
        if (clusterId != null && !clusterId.equals(state.clusterId())) {
            return Optional.of(Outcome.refused(Errors.INCONSISTENT_CLUSTER_ID, "The given id \"" + clusterId
                    + "\" doesn't match the cluster id \"" + state.clusterId() + "\""));
        }
        if (!state.readyLeader()) {
            return Optional.of(Outcome.refused(Errors.NOT_LEADER_OR_FOLLOWER, null));
        }
        if (voterId < 0 || directoryId == null || directoryId.equals(Uuid.ZERO)) {
            return Optional.of(Outcome.refused(Errors.INVALID_REQUEST, invalidVoter));
        }
        return Optional.empty();
    }

    /** Kafka's checks before the voter set is read: no change in flight, and a dynamic quorum. */
    private static Optional<Outcome> inProgress(LeaderState state, String verb) {
        if (state.changePending()) {
            return Optional.of(Outcome.refused(Errors.REQUEST_TIMED_OUT,
                    "Request timed out waiting for leader to handle previous voter change request"));
        }
        if (state.kraftVersion() < 1) {
            return Optional.of(Outcome.refused(Errors.UNSUPPORTED_VERSION, "Cluster doesn't support " + verb
                    + " voter because the kraft.version feature is " + state.kraftVersion()));
        }
        return Optional.empty();
    }

    static String replicaKey(int id, Uuid directoryId) {
        return "ReplicaKey(id=" + id + ", directoryId="
                + (directoryId == null || directoryId.equals(Uuid.ZERO) ? "Optional.empty" : "Optional[" + directoryId
                + "]") + ")";
    }

    private static String keys(List<Voter> voters) {
        return voters.stream().map(Voter::key).toList().toString();
    }

    private static String endpoints(AddRaftVoterRequestData request) {
        return "Endpoints(endpoints=" + request.listeners().stream()
                .map(l -> l.name() + "=" + l.host() + ":" + l.port()).toList() + ")";
    }
}
