package io.cairn.metadata.ratis;

import io.cairn.metadata.DurableFiles;
import io.cairn.metadata.controller.AppliedCommands;
import io.cairn.metadata.image.ImageRecords;
import io.cairn.metadata.image.MetadataChanges;
import io.cairn.metadata.image.MetadataDelta;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.MetadataListener;
import io.cairn.metadata.image.MetadataRecords;
import io.cairn.metadata.image.MetadataUpdate;
import io.cairn.wire.protocol.ApiMessage;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.apache.ratis.io.MD5Hash;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.RaftConfigurationProto;
import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.LifeCycle;
import org.apache.ratis.util.MD5FileUtil;
import org.apache.ratis.util.StringUtils;

/**
 * The Ratis state machine of the metadata log: each log entry is one batch of metadata records, applied to the
 * image in log order; the image is published through a volatile field and handed to subscribers with what changed.
 * Snapshots are the image written as records ({@link ImageRecords}) in Ratis' single-file snapshot layout, fsynced
 * with their directory before Ratis is told of them (it may then purge the log entries they replace); loading one
 * publishes what differs from the image it replaces ({@link MetadataChanges#between}).
 * Read-only queries carry controller commands to the leader (see {@link RatisMetadataNode}). Thread-safe: Ratis
 * applies on one thread; snapshots and subscriptions synchronise with it on {@code this}.
 */
final class MetadataStateMachine extends BaseStateMachine {

    private static final Logger LOGGER = LogManager.getLogger(MetadataStateMachine.class);
    private static final int SNAPSHOT_MAGIC = 0x43414d53;
    /** The test-only system property of {@link #APPLY_DELAY_MS}. */
    static final String APPLY_DELAY_PROPERTY = "cairn.test.metadataApplyDelayMs";
    /**
     * Test only, never for production: {@code -Dcairn.test.metadataApplyDelayMs=N} makes this node apply each
     * metadata log entry N ms late, so that a fault scenario can restart a node whose metadata replay lags behind the
     * quorum. Read once, when the class loads; 0 (the default) is no delay.
     */
    private static final long APPLY_DELAY_MS = Long.getLong(APPLY_DELAY_PROPERTY, 0L);

    /** Callbacks into the node: leadership changes and command handling. */
    interface Hooks {
        void leaderReady(long term);

        void notLeader();

        void leaderChanged(RaftPeerId leaderId);

        /** A committed Raft configuration that is not a joint one, by its voters' node ids. */
        default void configurationCommitted(Set<Integer> voterIds) {
        }

        /** A write to the metadata log failed (a full disk, a failed device): the log takes no more entries. */
        default void logFailed(Throwable cause) {
        }

        /** Ratis closed the state machine: the node's Raft log closes next ({@link RaftLogWorkerWake}). */
        default void closed() {
        }

        CompletableFuture<Message> command(Message request);
    }

    private final SimpleStateMachineStorage storage = new SimpleStateMachineStorage();
    private final List<MetadataListener> listeners = new CopyOnWriteArrayList<>();
    private final Hooks hooks;
    private final DurableFiles files;
    private volatile MetadataImage image = MetadataImage.EMPTY;
    private volatile Function<Long, Long> termSupplier = x -> 0L;
    /** Responses of the recently applied commands; derived from the log only, empty after loading a snapshot. */
    private final AppliedCommands appliedCommands = new AppliedCommands();
    /** Guards the pause and run transitions of a snapshot install ({@link #pause}, {@link #reinitialize}). */
    private final Object lifeCycleLock = new Object();
    /** True while {@link #reinitialize} loads an installed snapshot. */
    private boolean reinitializing;
    /** Set when an install paused the state machine during {@link #reinitialize}: it stays PAUSED after it. */
    private boolean pauseAfterReinitialize;

    MetadataStateMachine(Hooks hooks) {
        this(hooks, DurableFiles.DEFAULT);
    }

    MetadataStateMachine(Hooks hooks, DurableFiles files) {
        this.hooks = hooks;
        this.files = files;
        if (APPLY_DELAY_MS > 0) {
            LOGGER.warn("{}={}: every metadata log entry is applied {} ms late (a test-only setting)",
                    APPLY_DELAY_PROPERTY, APPLY_DELAY_MS, APPLY_DELAY_MS);
        }
    }

    MetadataImage image() {
        return image;
    }

    /** The response of a recently applied command, or null. */
    ApiMessage appliedResponse(UUID requestId) {
        return appliedCommands.response(requestId);
    }

    synchronized MetadataImage subscribe(MetadataListener listener) {
        listeners.add(listener);
        return image;
    }

    void unsubscribe(MetadataListener listener) {
        listeners.remove(listener);
    }

    void setTermSupplier(Function<Long, Long> supplier) {
        this.termSupplier = supplier;
    }

    @Override
    public SimpleStateMachineStorage getStateMachineStorage() {
        return storage;
    }

    @Override
    public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage raftStorage) throws IOException {
        super.initialize(server, groupId, raftStorage);
        storage.init(raftStorage);
        getLifeCycle().startAndTransition(() -> loadSnapshot(storage.getLatestSnapshot(), "Loaded"),
                IOException.class);
    }

    /** Ratis closes the state machine when the division closes, just before its Raft log. */
    @Override
    public void close() throws IOException {
        super.close();
        hooks.closed();
    }

    /**
     * Ratis pauses the state machine before it installs the leader's snapshot on a node whose log is behind the
     * leader's purged log (a lagging follower or listener, or a new voter the leader catches up), and its state
     * machine updater reloads only a paused state machine: without the PAUSED state it fails and closes the node's
     * division. An install that begins while the updater still loads the previous one (the leader purged past that
     * snapshot too, and sends a newer one) pauses a state machine that is about to run again: that pause is kept for
     * the end of the load ({@link #reinitialize}), or the next reload would find it running.
     */
    @Override
    public void pause() {
        synchronized (lifeCycleLock) {
            if (reinitializing) {
                pauseAfterReinitialize = true;
            } else if (getLifeCycle().getCurrentState() == LifeCycle.State.RUNNING) {
                getLifeCycle().transition(LifeCycle.State.PAUSING);
                getLifeCycle().transition(LifeCycle.State.PAUSED);
            }
        }
    }

    /**
     * Loads the snapshot Ratis installed (see {@link #pause()}), publishing what differs from the image it replaces
     * (the topics deleted meanwhile too), and runs again, unless another install paused it meanwhile.
     */
    @Override
    public void reinitialize() throws IOException {
        synchronized (lifeCycleLock) {
            reinitializing = true;
            pauseAfterReinitialize = false;
        }
        boolean loaded = false;
        try {
            loadSnapshot(storage.loadLatestSnapshot(), "Installed the leader's");
            loaded = true;
        } finally {
            synchronized (lifeCycleLock) {
                reinitializing = false;
                boolean pausedAgain = pauseAfterReinitialize;
                pauseAfterReinitialize = false;
                if (loaded && pausedAgain) {
                    LOGGER.info("Another snapshot install began while the last one loaded; waiting for it");
                } else if (loaded && getLifeCycle().getCurrentState() == LifeCycle.State.PAUSED) {
                    getLifeCycle().transition(LifeCycle.State.STARTING);
                    getLifeCycle().transition(LifeCycle.State.RUNNING);
                }
            }
        }
    }

    /** Loads {@code snapshot} (nothing when null) as the image; {@code how} starts the log line that says so. */
    private synchronized void loadSnapshot(SingleFileSnapshotInfo snapshot, String how) throws IOException {
        if (snapshot == null) {
            return;
        }
        File file = snapshot.getFile().getPath().toFile();
        MD5Hash digest = snapshot.getFile().getFileDigest();
        if (digest != null) {
            MD5FileUtil.verifySavedMD5(file, digest);
        }
        try (DataInputStream in = new DataInputStream(Files.newInputStream(file.toPath()))) {
            if (in.readInt() != SNAPSHOT_MAGIC) {
                throw new IOException("Not a metadata snapshot: " + file);
            }
            long offset = in.readLong();
            MetadataImage loaded = new MetadataDelta(MetadataImage.EMPTY)
                    .replayAll(MetadataRecords.decode(in.readAllBytes())).apply(offset);
            MetadataImage previous = image;
            image = loaded;
            updateLastAppliedTermIndex(snapshot.getTermIndex());
            LOGGER.info("{} metadata snapshot {} (offset {}, {} topics, {} brokers)", how, file.getName(), offset,
                    loaded.topicsById().size(), loaded.brokers().size());
            // a lagging node skips the records in between: its subscribers get the difference of the two images
            publish(MetadataChanges.between(previous, loaded), previous, loaded);
        }
    }

    @Override
    public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
        if (APPLY_DELAY_MS > 0) {
            try {
                Thread.sleep(APPLY_DELAY_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        LogEntryProto entry = trx.getLogEntry();
        ByteString data = entry.getStateMachineLogEntry().getLogData();
        CommandCodec.Entry decoded = CommandCodec.decodeEntry(data.toByteArray());
        List<ApiMessage> records = MetadataRecords.decode(decoded.records());
        synchronized (this) {
            if (decoded.requestId() != null) {
                // Recorded before the image is published: a retry that sees the image sees the response too.
                appliedCommands.record(decoded.requestId(), decoded.response());
            }
            MetadataImage previous = image;
            MetadataDelta delta = new MetadataDelta(previous).replayAll(records);
            MetadataImage next = delta.apply(entry.getIndex());
            image = next;
            updateLastAppliedTermIndex(entry.getTerm(), entry.getIndex());
            publish(delta.changes(), previous, next);
        }
        return CompletableFuture.completedFuture(Message.EMPTY);
    }

    private void publish(MetadataChanges changes, MetadataImage previous, MetadataImage next) {
        MetadataUpdate update = new MetadataUpdate(previous, next, changes);
        for (MetadataListener listener : listeners) {
            try {
                listener.onUpdate(update);
            } catch (RuntimeException e) {
                LOGGER.error("Metadata listener {} failed on offset {}", listener, next.offset(), e);
            }
        }
    }

    /**
     * Writes the image as the snapshot at the last applied index and returns that index only once the snapshot is
     * durable: the file written to a temp file, fsynced, renamed into place and its directory fsynced, then its MD5
     * file likewise. Ratis may purge the log entries below the index as soon as this returns.
     */
    @Override
    public synchronized long takeSnapshot() throws IOException {
        TermIndex last = getLastAppliedTermIndex();
        if (last == null || last.getIndex() < 0) {
            return -1;
        }
        MetadataImage current = image;
        Path file = storage.getSnapshotFile(last.getTerm(), last.getIndex()).toPath();
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        try (DataOutputStream out = new DataOutputStream(Files.newOutputStream(tmp))) {
            out.writeInt(SNAPSHOT_MAGIC);
            out.writeLong(current.offset());
            out.write(MetadataRecords.encode(ImageRecords.of(current)));
        }
        files.fsync(tmp);
        MD5Hash digest = MD5FileUtil.computeMd5ForFile(tmp.toFile());
        files.atomicMove(tmp, file);
        // Ratis' own MD5 writer renames without fsync; a torn MD5 file would fail the next load. Its line format:
        String md5Line = StringUtils.bytes2HexString(digest.getDigest()) + " *" + file.getFileName() + "\n";
        files.write(MD5FileUtil.getDigestFileForFile(file.toFile()).toPath(), md5Line.getBytes(StandardCharsets.UTF_8));
        storage.updateLatestSnapshot(new SingleFileSnapshotInfo(new FileInfo(file, digest), last));
        LOGGER.info("Took metadata snapshot at {}", last);
        return last.getIndex();
    }

    @Override
    public CompletableFuture<Message> query(Message request) {
        return hooks.command(request);
    }

    @Override
    public void notifyLeaderReady() {
        hooks.leaderReady(termSupplier.apply(0L));
    }

    @Override
    public void notifyNotLeader(java.util.Collection<TransactionContext> pendingEntries) {
        hooks.notLeader();
    }

    @Override
    public void notifyLeaderChanged(RaftGroupMemberId groupMemberId, RaftPeerId newLeaderId) {
        hooks.leaderChanged(newLeaderId);
    }

    /**
     * Ratis applies a committed configuration entry (or installs one with a snapshot); a joint one (old and new
     * voters) is passed over, its new configuration follows.
     */
    @Override
    public void notifyConfigurationChanged(long term, long index, RaftConfigurationProto configuration) {
        if (configuration.getOldPeersCount() == 0) {
            hooks.configurationCommitted(configuration.getPeersList().stream()
                    .map(peer -> Integer.parseInt(peer.getId().toStringUtf8())).collect(Collectors.toSet()));
        }
    }

    @Override
    public void notifyLogFailed(Throwable cause, LogEntryProto failedEntry) {
        hooks.logFailed(cause);
    }

    @Override
    public void notifyServerShutdown(RoleInfoProto roleInfo, boolean allServer) {
        hooks.notLeader();
    }
}
