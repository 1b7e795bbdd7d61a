package io.cairn.metadata.ratis;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.metadata.DurableFiles;
import io.cairn.metadata.image.MetadataRecords;
import io.cairn.metadata.image.MetadataUpdate;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.metadata.record.PartitionChangeRecord;
import io.cairn.metadata.record.PartitionRecord;
import io.cairn.metadata.record.RegisterBrokerRecord;
import io.cairn.metadata.record.RemoveTopicRecord;
import io.cairn.metadata.record.TopicRecord;
import io.cairn.wire.protocol.ApiMessage;
import io.cairn.wire.protocol.Uuid;
import java.io.IOException;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.proto.RaftProtos.StateMachineLogEntryProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.LifeCycle;
import org.apache.ratis.util.SizeInBytes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The state machine's snapshots against a real Ratis storage directory, without a Raft server: taking one makes it
 * durable before Ratis hears of it, and a lagging node that loads (installs) one tells its subscribers what changed
 * since the image it had, deletions included.
 */
class MetadataSnapshotTest {

    private static final Uuid ORDERS = new Uuid(1L, 1L);
    private static final Uuid PAYMENTS = new Uuid(2L, 2L);

    @TempDir
    Path tmp;

    private static final MetadataStateMachine.Hooks NO_HOOKS = new MetadataStateMachine.Hooks() {
        @Override
        public void leaderReady(long term) {
        }

        @Override
        public void notLeader() {
        }

        @Override
        public void leaderChanged(RaftPeerId leaderId) {
        }

        @Override
        public CompletableFuture<Message> command(Message request) {
            return CompletableFuture.completedFuture(Message.EMPTY);
        }
    };

    private RaftStorage storage(String name) throws IOException {
        RaftStorage storage = RaftStorage.newBuilder().setDirectory(tmp.resolve(name).toFile())
                .setOption(RaftStorage.StartupOption.FORMAT).setStorageFreeSpaceMin(SizeInBytes.valueOf(0)).build();
        storage.initialize();
        return storage;
    }

    private static MetadataStateMachine machine(RaftStorage storage, DurableFiles files) throws IOException {
        MetadataStateMachine machine = new MetadataStateMachine(NO_HOOKS, files);
        machine.initialize(server(), RaftGroupId.randomId(), storage);
        return machine;
    }

    /** A stand-in for the Raft server: the state machine asks it for its id only. */
    private static RaftServer server() {
        RaftPeerId id = RaftPeerId.valueOf("n1");
        return (RaftServer) Proxy.newProxyInstance(RaftServer.class.getClassLoader(), new Class<?>[] {RaftServer.class},
                (proxy, method, args) -> method.getName().equals("getId") ? id : null);
    }

    private static void apply(MetadataStateMachine machine, long index, ApiMessage... records) {
        LogEntryProto entry = LogEntryProto.newBuilder().setTerm(1).setIndex(index)
                .setStateMachineLogEntry(StateMachineLogEntryProto.newBuilder()
                        .setLogData(ByteString.copyFrom(MetadataRecords.encode(List.of(records)))))
                .build();
        machine.applyTransaction(TransactionContext.newBuilder().setStateMachine(machine)
                .setServerRole(RaftPeerRole.FOLLOWER).setLogEntry(entry).build()).join();
    }

    private static ApiMessage[] twoTopics() {
        return new ApiMessage[] {
            new RegisterBrokerRecord().setBrokerId(1).setBrokerEpoch(1).setFenced(false),
            new TopicRecord().setName("orders").setTopicId(ORDERS),
            new PartitionRecord().setTopicId(ORDERS).setPartitionId(0).setReplicas(List.of(1)).setIsr(List.of(1))
                    .setLeader(1),
            new TopicRecord().setName("payments").setTopicId(PAYMENTS),
            new PartitionRecord().setTopicId(PAYMENTS).setPartitionId(0).setReplicas(List.of(1)).setIsr(List.of(1))
                    .setLeader(1),
            new PartitionRecord().setTopicId(PAYMENTS).setPartitionId(1).setReplicas(List.of(1)).setIsr(List.of(1))
                    .setLeader(1)};
    }

    /** Records, in order, what is asked of it. */
    private static final class RecordingFiles implements DurableFiles {
        final List<String> events = new CopyOnWriteArrayList<>();

        private void record(String event) {
            events.add(event);
        }

        @Override
        public void fsync(Path file) throws IOException {
            DurableFiles.super.fsync(file);
            record("fsync " + file.getFileName());
        }

        @Override
        public void fsyncDirectory(Path dir) throws IOException {
            DurableFiles.super.fsyncDirectory(dir);
            try (Stream<Path> files = Files.list(dir)) {
                record("fsyncDirectory " + files.map(p -> p.getFileName().toString()).sorted()
                        .collect(Collectors.toList()));
            }
        }

        @Override
        public void atomicMove(Path source, Path target) throws IOException {
            record("atomicMove " + source.getFileName() + " " + target.getFileName());
            DurableFiles.super.atomicMove(source, target);
        }
    }

    @Test
    void aSnapshotIsFsyncedWithItsDirectoryBeforeItIsReportedTaken() throws Exception {
        // Given
        RecordingFiles files = new RecordingFiles();
        MetadataStateMachine machine = machine(storage("node"), files);
        apply(machine, 1, twoTopics());

        // When: Ratis asks for a snapshot; the index returned tells it the entries up to it may be purged
        long taken = machine.takeSnapshot();

        // Then: file fsynced, renamed, directory fsynced (and the MD5 file likewise), all before the index came back
        assertThat(taken).isEqualTo(1);
        assertThat(files.events).containsExactly(
                "fsync snapshot.1_1.tmp",
                "atomicMove snapshot.1_1.tmp snapshot.1_1",
                "fsyncDirectory [snapshot.1_1]",
                "fsync snapshot.1_1.md5.tmp",
                "atomicMove snapshot.1_1.md5.tmp snapshot.1_1.md5",
                "fsyncDirectory [snapshot.1_1, snapshot.1_1.md5]");
        assertThat(machine.getStateMachineStorage().getLatestSnapshot().getIndex()).isEqualTo(1);
        // and the MD5 file is one Ratis reads back
        MetadataStateMachine restarted = machine(storage("node-restarted"), DurableFiles.DEFAULT);
        copySnapshots(machine, restarted);
        restarted.reinitialize();
        assertThat(restarted.image().topic("payments")).isPresent();
    }

    @Test
    void aLaggingNodeInstallingASnapshotPublishesTheTopicsDeletedMeanwhile() throws Exception {
        // Given: the leader applied a creation, a deletion and an ISR change; the lagging node only the creation
        MetadataStateMachine leader = machine(storage("leader"), DurableFiles.DEFAULT);
        MetadataStateMachine lagging = machine(storage("lagging"), DurableFiles.DEFAULT);
        apply(leader, 1, twoTopics());
        apply(lagging, 1, twoTopics());
        apply(leader, 2, new RemoveTopicRecord().setTopicId(ORDERS));
        apply(leader, 3, new PartitionChangeRecord().setTopicId(PAYMENTS).setPartitionId(1).setIsr(List.of()));
        leader.takeSnapshot();
        List<MetadataUpdate> updates = new CopyOnWriteArrayList<>();
        lagging.subscribe(updates::add);

        // When: Ratis installs the leader's snapshot on the lagging node: it pauses the state machine (its updater
        // reloads only a PAUSED one, else it closes the node's division), installs the files, reinitializes
        assertThat(lagging.getLifeCycleState()).isEqualTo(LifeCycle.State.RUNNING);
        lagging.pause();
        assertThat(lagging.getLifeCycleState()).isEqualTo(LifeCycle.State.PAUSED);
        copySnapshots(leader, lagging);
        lagging.reinitialize();

        // Then: the state machine runs again
        assertThat(lagging.getLifeCycleState()).isEqualTo(LifeCycle.State.RUNNING);
        // and published one update, the difference of the two images
        assertThat(updates).hasSize(1);
        MetadataUpdate update = updates.get(0);
        assertThat(update.previous().offset()).isEqualTo(1);
        assertThat(update.image().offset()).isEqualTo(3);
        assertThat(update.image().topic("orders")).isEmpty();
        assertThat(update.changes().deletedTopics()).singleElement()
                .satisfies(t -> assertThat(t.name()).isEqualTo("orders"));
        assertThat(update.changes().createdTopics()).isEmpty();
        assertThat(update.changes().changedPartitions()).containsOnlyKeys(new TopicPartition("payments", 1));
        assertThat(update.changes().changedPartitions().get(new TopicPartition("payments", 1)))
                .extracting(PartitionRegistration::isr).isEqualTo(List.of());
        assertThat(update.changes().changedBrokers()).isEmpty();
    }

    @Test
    void aSecondInstallThatPausesTheStateMachineWhileTheFirstLoadsFindsItPausedForItsReload() throws Exception {
        // Given: a lagging node installing the leader's snapshot, whose next install begins (Ratis pauses the state
        // machine at its first chunk) while the updater thread still loads the first one (a listener runs)
        MetadataStateMachine leader = machine(storage("leader"), DurableFiles.DEFAULT);
        MetadataStateMachine lagging = machine(storage("lagging"), DurableFiles.DEFAULT);
        apply(leader, 1, twoTopics());
        apply(leader, 2, new RemoveTopicRecord().setTopicId(ORDERS));
        leader.takeSnapshot();
        AtomicBoolean secondInstall = new AtomicBoolean(true);
        lagging.subscribe(update -> {
            if (secondInstall.getAndSet(false)) {
                lagging.pause();
            }
        });
        lagging.pause();
        copySnapshots(leader, lagging);

        // When: the first install's reload
        lagging.reinitialize();

        // Then: it stays paused, as the second install's reload requires (Ratis' updater fails on a state machine
        // that is not PAUSED and closes the node's division)
        assertThat(lagging.getLifeCycleState()).isEqualTo(LifeCycle.State.PAUSED);

        // When: the second install's reload
        lagging.reinitialize();

        // Then
        assertThat(lagging.getLifeCycleState()).isEqualTo(LifeCycle.State.RUNNING);
    }

    private static void copySnapshots(MetadataStateMachine from, MetadataStateMachine to) throws IOException {
        Path source = from.getStateMachineStorage().getLatestSnapshot().getFile().getPath().getParent();
        Path target = to.getStateMachineStorage().getSnapshotFile(1, 1).toPath().getParent();
        try (Stream<Path> files = Files.list(source)) {
            for (Path file : (Iterable<Path>) files::iterator) {
                Files.copy(file, target.resolve(file.getFileName()), StandardCopyOption.REPLACE_EXISTING);
            }
        }
    }
}
