package io.cairn.isr;

import io.cairn.isr.client.ClientTls;
import io.cairn.isr.fetcher.InitialFetchState;
import io.cairn.isr.fetcher.ReplicaFetcherConfig;
import io.cairn.isr.fetcher.ReplicaFetcherManager;
import io.cairn.isr.client.SourceBroker;
import io.cairn.log.LogConfig;
import io.cairn.log.LogManager;
import io.cairn.log.PartitionLog;
import io.cairn.log.Scheduler;
import io.cairn.log.Time;
import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.image.BrokerEndpoint;
import io.cairn.metadata.image.BrokerRegistration;
import io.cairn.metadata.image.ConfigResource;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.MetadataListener;
import io.cairn.metadata.image.MetadataUpdate;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicImage;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.error.NotLeaderOrFollowerException;
import io.cairn.wire.error.UnknownTopicOrPartitionException;
import io.cairn.wire.protocol.Uuid;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.IntFunction;
import java.util.function.LongSupplier;
import org.apache.logging.log4j.Logger;

/**
 * The partitions this broker hosts (Kafka's {@code ReplicaManager}, metadata side): follows the metadata image,
 * opens or creates the log of every partition whose replicas include this broker, applies leadership, ISR and
 * config changes, and deletes the logs of deleted topics. Handlers look partitions up here.
 *
 * <p>Metadata updates are applied in commit order on one thread of its own, {@code cairn-replica-manager} (the
 * metadata apply thread must not block on disk), and only there: the image at start, partitions created, opened,
 * recovered, moved to another leader epoch or deleted. A request thread only looks partitions up; one that arrives
 * between the commit that made this broker a replica and that thread's work finds no partition and answers as
 * Kafka's {@code getPartitionOrError} does: NOT_LEADER_OR_FOLLOWER when the image knows the partition,
 * UNKNOWN_TOPIC_OR_PARTITION otherwise (both retriable). Code that must act once a partition is hosted (the
 * coordinators loading their partitions) listens for {@link PartitionListener#onLeadershipChanged}, which the
 * applier fires once the partition is in the map.
 *
 * <p>The high watermarks are checkpointed per log directory ({@link HighWatermarkCheckpoint}): read at start and
 * restored into each partition as it is created, written every {@code replica.high.watermark.checkpoint.interval.ms}
 * once {@link #startHighWatermarkCheckpoints} ran, and on {@link #close}.
 *
 * <p>As leader, partitions change their ISR through one {@link AlterPartitionManager} (its own thread,
 * {@code cairn-alter-partition}), created in {@link #start}; once {@link #startIsrExpiration} ran, the ISR expiration
 * task drops followers that lag more than {@code replica.lag.time.max.ms}, every half of it (Kafka's
 * {@code isr-expiration} task). Both periodic tasks run on the broker's background threads ({@link #useScheduler},
 * {@code kafka-scheduler-N}).
 *
 * <p>Replica moves between log directories (AlterReplicaLogDirs, KIP-113) are {@link LogDirMoves}'s: a partition
 * created here resumes a move a restart interrupted, and one without a log takes the future log a swap left.
 *
 * <p>Thread-safety: thread-safe; partitions live in a concurrent map and are created at most once; checkpoint writes
 * are serialised by this object's monitor; removals of partitions run under the moves' lock.
 */
public final class ReplicaManager implements AutoCloseable {

    private static final Logger LOGGER = org.apache.logging.log4j.LogManager.getLogger(ReplicaManager.class);

    private final int brokerId;
    private final List<LogManager> logManagers;
    private final Map<String, String> topicDefaults;
    private final Time time;
    private final Map<TopicPartition, Partition> partitions = new ConcurrentHashMap<>();
    private final List<PartitionListener> listeners = new CopyOnWriteArrayList<>();
    private final PartitionListener fanOut = new PartitionListener() {
        @Override
        public void onHighWatermarkAdvanced(Partition partition) {
            notifyListeners(partition, PartitionListener::onHighWatermarkAdvanced);
        }

        @Override
        public void onLogEndOffsetAdvanced(Partition partition) {
            notifyListeners(partition, PartitionListener::onLogEndOffsetAdvanced);
        }

        @Override
        public void onLogStartOffsetChanged(Partition partition) {
            notifyListeners(partition, PartitionListener::onLogStartOffsetChanged);
        }

        @Override
        public void onIsrChanged(Partition partition) {
            notifyListeners(partition, PartitionListener::onIsrChanged);
        }

        @Override
        public void onLeadershipChanged(Partition partition) {
            notifyListeners(partition, PartitionListener::onLeadershipChanged);
        }
    };
    /** Notified each time the applier has taken on an image (request threads wait on it, bounded). */
    private final Object applied = new Object();
    /** The applier's thread, once its executor made it; a request on it never waits for itself. */
    private volatile Thread applierThread;
    private final ExecutorService applier = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, APPLIER_THREAD);
        t.setDaemon(true);
        applierThread = t;
        return t;
    });
    private final MetadataListener metadataListener =
        update -> applier.execute(() -> apply(update));
    /** High watermarks read from the checkpoints at start, each taken by the partition it belongs to. */
    private final Map<TopicPartition, Long> checkpointedHighWatermarks = new ConcurrentHashMap<>();
    /**
     * The high-watermark checkpoints and the ISR expiration, on the broker's background threads
     * ({@link #useScheduler}) or, until one is handed in, on a thread of this manager's own; set before either starts.
     */
    private volatile ScheduledExecutorService background;
    /** The pool made for this manager alone when no scheduler was handed in; null otherwise. */
    private volatile Scheduler ownScheduler;
    private final long replicaLagTimeMaxMs;
    /** This broker's epoch; null to read it from the metadata image. */
    private final LongSupplier brokerEpoch;
    /** Set once by {@link #start}, before any partition is created; read by {@link #host}. */
    private volatile IsrContext isrContext;
    private volatile AlterPartitionManager alterPartitionManager;
    private volatile MetadataNode node;
    private volatile boolean closed;
    /** The offset of the last metadata image applied to the partitions; -1 until {@link #start}. */
    private volatile long appliedMetadataOffset = -1L;
    private static final String APPLIER_THREAD = "cairn-replica-manager";
    /**
     * How long a leader request waits for the applier when the published image already names this broker the
     * partition's leader: the image is published before the applier takes it on, and answering the pipelined
     * batches of one idempotent producer NOT_LEADER_OR_FOLLOWER and then appending a later one would store them
     * out of order.
     */
    static final long APPLIER_WAIT_MS = 2_000;
    /** The follower fetchers; null until {@link #useReplicaFetchers} (then partitions this broker follows fetch). */
    private volatile ReplicaFetcherManager fetchers;
    private volatile String interBrokerListener;
    /** {@code replica.selector.class}: null when consumers read from leaders only. */
    private volatile RackAwareReplicaSelector replicaSelector;
    /** KIP-73: what this broker sends to throttled followers, and what it fetches for throttled partitions. */
    private final ReplicationQuota leaderQuota;
    private final ReplicationQuota followerQuota;
    /** The replica moves between log directories (AlterReplicaLogDirs). */
    private final LogDirMoves moves;
    /** The leader epoch each followed partition's fetcher was (re)started for; guarded by itself. */
    private final Map<TopicPartition, Integer> fetchedEpochs = new HashMap<>();

    /**
     * @param brokerId      this broker's id
     * @param logManagers   one per log directory (at least one)
     * @param topicDefaults topic-level config names to the broker's defaults ({@code segment.bytes}, ...)
     */
    public ReplicaManager(int brokerId, List<LogManager> logManagers, Map<String, String> topicDefaults) {
        this(brokerId, logManagers, topicDefaults, Time.SYSTEM);
    }

    /** As {@link #ReplicaManager(int, List, Map)}, with the clock of the followers' fetch and caught-up times. */
    public ReplicaManager(int brokerId, List<LogManager> logManagers, Map<String, String> topicDefaults, Time time) {
        this(brokerId, logManagers, topicDefaults, time, IsrContext.DEFAULT_REPLICA_LAG_TIME_MAX_MS, null);
    }

    /**
     * @param replicaLagTimeMaxMs {@code replica.lag.time.max.ms}: how long an in-sync follower may go without
     *                            catching up before it leaves the ISR
     * @param brokerEpoch         this broker's epoch (of its current registration), sent with its AlterPartition
     *                            requests; null to read it from the metadata image
     */
    public ReplicaManager(int brokerId, List<LogManager> logManagers, Map<String, String> topicDefaults, Time time,
                          long replicaLagTimeMaxMs, LongSupplier brokerEpoch) {
        if (logManagers.isEmpty()) {
            throw new IllegalArgumentException("no log directory");
        }
        if (replicaLagTimeMaxMs <= 0) {
            throw new IllegalArgumentException("replica.lag.time.max.ms must be positive");
        }
        this.brokerId = brokerId;
        this.logManagers = List.copyOf(logManagers);
        this.topicDefaults = Map.copyOf(topicDefaults);
        this.time = time;
        this.replicaLagTimeMaxMs = replicaLagTimeMaxMs;
        this.brokerEpoch = brokerEpoch;
        this.leaderQuota = new ReplicationQuota(time);
        this.followerQuota = new ReplicationQuota(time);
        this.moves = new LogDirMoves(this.logManagers, partitions::get, this::partition, this::isInImage,
            this::checkpointHighWatermarks, new ReplicationQuota(time));
    }

    /** The leader side of the replication throttle (bytes sent to out-of-sync throttled followers). */
    public ReplicationQuota leaderQuota() {
        return leaderQuota;
    }

    /** The follower side of the replication throttle (bytes fetched for throttled partitions). */
    public ReplicationQuota followerQuota() {
        return followerQuota;
    }

    /** The throttle of replica moves between log directories. */
    public ReplicationQuota alterLogDirsQuota() {
        return moves.quota();
    }

    /**
     * Subscribes to {@code metadataNode}, opens every hosted partition of the current image, and deletes logs on
     * disk that belong to no hosted partition (topics deleted while this broker was down), on the applier thread
     * before any later update. Returns when the current image is applied. Call it only once the image has caught up
     * with the quorum (the controller answered {@code isCaughtUp}: this node applied its own registration record),
     * so that a stale image never deletes a live log or replaces one of a topic id it does not know yet.
     */
    public void start(MetadataNode metadataNode) {
        for (LogManager manager : logManagers) {
            checkpointedHighWatermarks.putAll(HighWatermarkCheckpoint.read(manager.logDir()));
        }
        LongSupplier epoch = this::currentBrokerEpoch;
        alterPartitionManager = AlterPartitionManager.start(brokerId, epoch, metadataNode::alterPartition);
        isrContext = new IsrContext(replicaLagTimeMaxMs, alterPartitionManager,
            id -> metadataNode.currentImage().broker(id), epoch);
        this.node = metadataNode;
        // Subscribing on the applier queues every later update behind the image this task applies.
        Future<?> started = applier.submit(() -> {
            MetadataImage image = metadataNode.subscribe(metadataListener);
            applyImage(image);
            removeStrayLogs(image);
        });
        try {
            started.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while applying the metadata image", e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("Cannot apply the metadata image", e.getCause());
        }
    }

    /** The log managers, one per {@code log.dirs} entry, in the configured order. */
    public List<LogManager> logManagers() {
        return logManagers;
    }

    /** Adds a listener told of a partition's offset, ISR and leadership changes (the purgatory, coordinators). */
    public void addListener(PartitionListener listener) {
        listeners.add(listener);
    }

    private void notifyListeners(Partition partition, BiConsumer<PartitionListener, Partition> event) {
        for (PartitionListener l : listeners) {
            try {
                event.accept(l, partition);
            } catch (RuntimeException e) {
                LOGGER.error("Partition listener failed for {}", partition.topicPartition(), e);
            }
        }
    }

    /**
     * The hosted partition, if any: one the metadata applier has created. Never creates one, so a request thread
     * never opens, recovers or deletes a log.
     */
    public Optional<Partition> partition(TopicPartition tp) {
        return Optional.ofNullable(partitions.get(tp));
    }

    /** The hosted partition of topic id {@code topicId}, if any. */
    public Optional<Partition> partition(Uuid topicId, int index) {
        MetadataNode current = node;
        if (current == null) {
            return Optional.empty();
        }
        return current.currentImage().topic(topicId).flatMap(t -> partition(new TopicPartition(t.name(), index)));
    }

    /**
     * The partition for a leader request: UNKNOWN_TOPIC_OR_PARTITION when the image has no such partition,
     * NOT_LEADER_OR_FOLLOWER when this broker does not lead it or the applier has not hosted it yet.
     */
    public Partition leaderPartition(TopicPartition tp) {
        Partition p = partition(tp).orElse(null);
        if ((p == null || !p.isLeader()) && awaitApplierWhereTheImageLeads(tp)) {
            p = partition(tp).orElse(null);
        }
        if (p == null) {
            MetadataNode current = node;
            if (current != null && current.currentImage().partition(tp).isPresent()) {
                throw new NotLeaderOrFollowerException("Broker " + brokerId + " does not host " + tp);
            }
            throw new UnknownTopicOrPartitionException("This server does not host this topic-partition.");
        }
        if (!p.isLeader()) {
            throw new NotLeaderOrFollowerException("Broker " + brokerId + " is not the leader of " + tp
                + " (leader " + p.leaderId() + ")");
        }
        return p;
    }

    /**
     * On a request thread, when the published image names this broker the leader of {@code tp} but the applier has
     * not taken that image on yet, waits up to {@link #APPLIER_WAIT_MS} for it. Returns whether it did.
     */
    private boolean awaitApplierWhereTheImageLeads(TopicPartition tp) {
        MetadataNode current = node;
        if (current == null || closed || Thread.currentThread() == applierThread) {
            return false;
        }
        MetadataImage image = current.currentImage();
        PartitionRegistration reg = image.partition(tp).orElse(null);
        if (reg == null || reg.leader() != brokerId) {
            return false;
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(APPLIER_WAIT_MS);
        synchronized (applied) {
            while (appliedMetadataOffset < image.offset() && !closed) {
                long leftMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (leftMs <= 0) {
                    return false;
                }
                try {
                    applied.wait(leftMs);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
        }
        return true;
    }

    private void announceApplied(long offset) {
        synchronized (applied) {
            appliedMetadataOffset = offset;
            applied.notifyAll();
        }
    }

    /** Every hosted partition (a snapshot). */
    public Collection<Partition> allPartitions() {
        return List.copyOf(partitions.values());
    }

    private void apply(MetadataUpdate update) {
        if (closed) {
            return;
        }
        try {
            MetadataImage image = update.image();
            for (TopicImage deleted : update.changes().deletedTopics()) {
                leaderQuota.removeTopic(deleted.name());
                followerQuota.removeTopic(deleted.name());
                for (int index : deleted.partitions().keySet()) {
                    remove(new TopicPartition(deleted.name(), index), deleted.id());
                }
            }
            List<Partition> hosted = new ArrayList<>();
            update.changes().changedPartitions().forEach((tp, reg) -> {
                TopicImage topic = image.topic(tp.topic()).orElse(null);
                if (topic == null) {
                    return;
                }
                if (reg.replicas().contains(brokerId)) {
                    hosted.add(host(image, topic, tp, reg));
                } else if (partitions.containsKey(tp)) {
                    remove(tp, topic.id());
                }
            });
            updateFetchers(hosted, image);
            boolean brokerDefaultsChanged = false;
            for (ConfigResource resource : update.changes().changedConfigs()) {
                updateQuotas(image, resource);
                if (resource.type() == ConfigResource.TOPIC) {
                    reconfigure(image, resource.name());
                } else if (isMine(resource)) {
                    brokerDefaultsChanged = true;
                }
            }
            if (brokerDefaultsChanged) {
                reconfigureAll(image);
            }
        } catch (RuntimeException e) {
            LOGGER.error("Cannot apply metadata update at offset {}", update.image().offset(), e);
        }
        announceApplied(update.image().offset());
    }

    /**
     * The offset of the last metadata image whose leaderships and replicas the partitions have taken on: what the
     * broker reports to the controller as its metadata offset (Kafka's published offset), so that a controlled
     * shutdown ends only after this broker has acted on its moved leaderships. -1 before {@link #start}.
     */
    public long appliedMetadataOffset() {
        return appliedMetadataOffset;
    }

    private void applyImage(MetadataImage image) {
        image.configs().keySet().forEach(resource -> updateQuotas(image, resource));
        List<Partition> hosted = new ArrayList<>();
        for (TopicImage topic : image.topicsById().values()) {
            topic.partitions().forEach((index, reg) -> {
                if (reg.replicas().contains(brokerId)) {
                    hosted.add(host(image, topic, new TopicPartition(topic.name(), index), reg));
                }
            });
        }
        updateFetchers(hosted, image);
        announceApplied(image.offset());
        LOGGER.info("Hosting {} partition(s) of metadata image at offset {}", partitions.size(), image.offset());
    }

    /** Creates (or finds) the partition and applies {@code reg} to it. */
    private Partition host(MetadataImage image, TopicImage topic, TopicPartition tp, PartitionRegistration reg) {
        boolean[] isNew = new boolean[1];
        Partition p = partitions.computeIfAbsent(tp, k -> {
            isNew[0] = true;
            Map<String, String> configs = effectiveConfigs(image, tp.topic());
            PartitionLog log = openLog(tp, topic.id(), logConfig(tp.topic(), configs));
            Partition created = new Partition(tp, topic.id(), brokerId, log, reg,
                LogConfigs.minInsyncReplicas(configs), fanOut, time, isrContext);
            Long checkpointed = checkpointedHighWatermarks.remove(tp);
            if (checkpointed != null) {
                created.restoreHighWatermark(checkpointed);
            }
            return created;
        });
        if (isNew[0]) {
            moves.resume(p);
            // The partition's first leadership event fired inside the map's compute, before lookups could see it.
            fanOut.onLeadershipChanged(p);
        }
        if (!p.topicId().equals(topic.id())) {
            // A topic of the same name was deleted and created again: its old partition goes first.
            remove(tp, p.topicId());
            return host(image, topic, tp, reg);
        }
        p.update(reg);
        return p;
    }

    private PartitionLog openLog(TopicPartition tp, Uuid topicId, LogConfig config) {
        for (LogManager manager : logManagers) {
            Optional<PartitionLog> existing = manager.getLog(tp.topic(), tp.partition());
            if (existing.isPresent()) {
                PartitionLog log = existing.get();
                Optional<Uuid> onDisk = log.topicId();
                if (onDisk.isPresent() && !onDisk.get().equals(topicId)) {
                    LOGGER.info("Deleting the log of {} of an older topic id {} (now {})", tp, onDisk.get(),
                        topicId);
                    manager.deleteLog(tp.topic(), tp.partition());
                    break;
                }
                log.updateConfig(config);
                if (onDisk.isEmpty()) {
                    log.writeTopicId(topicId);
                }
                return log;
            }
        }
        Optional<PartitionLog> moved = moves.completeCutShortSwap(tp, topicId, config);
        if (moved.isPresent()) {
            return moved.get();
        }
        LogManager target = moves.takePreferredLogDir(tp);
        if (target == null) {
            target = logManagers.get(0);
            for (LogManager manager : logManagers) {
                if (manager.allLogs().size() < target.allLogs().size()) {
                    target = manager;
                }
            }
        }
        return target.getOrCreateLog(tp.topic(), tp.partition(), config, topicId);
    }

    /**
     * AlterReplicaLogDirs (Kafka's {@code ReplicaManager.alterReplicaLogDirs}): see {@link LogDirMoves#alter}.
     */
    public Map<TopicPartition, Errors> alterReplicaLogDirs(Map<TopicPartition, String> partitionDirs) {
        return moves.alter(partitionDirs);
    }

    private void remove(TopicPartition tp, Uuid topicId) {
        moves.whileNoMoveStarts(() -> removeLocked(tp, topicId));
    }

    private void removeLocked(TopicPartition tp, Uuid topicId) {
        moves.forget(tp);
        Partition p = partitions.get(tp);
        if (p == null || !p.topicId().equals(topicId)) {
            return;
        }
        stopFetcher(tp);
        partitions.remove(tp, p);
        p.close();
        p.removeFutureLog();
        fanOut.onLeadershipChanged(p);
        // Future logs first: a restart that finds a future log without its log takes it for a swap cut short.
        for (LogManager manager : logManagers) {
            manager.deleteFutureLog(tp.topic(), tp.partition());
        }
        for (LogManager manager : logManagers) {
            if (manager.getLog(tp.topic(), tp.partition()).isPresent()) {
                manager.deleteLog(tp.topic(), tp.partition());
            }
        }
        LOGGER.info("Removed partition {} (topic id {}) and deleted its log", tp, topicId);
    }

    /** Whether the current metadata image has {@code tp}. */
    private boolean isInImage(TopicPartition tp) {
        MetadataNode current = node;
        return current != null && current.currentImage().partition(tp).isPresent();
    }

    /** A topic's throttled replicas, or this broker's (or the cluster default's) throttle rates. */
    private void updateQuotas(MetadataImage image, ConfigResource resource) {
        Map<String, String> configs = image.configs(resource);
        if (resource.type() == ConfigResource.TOPIC) {
            leaderQuota.updateThrottled(resource.name(), configs.get(ReplicationQuota.LEADER_REPLICAS), brokerId);
            followerQuota.updateThrottled(resource.name(), configs.get(ReplicationQuota.FOLLOWER_REPLICAS),
                brokerId);
        } else if (isMine(resource)) {
            Map<String, String> mine = image.configs(ConfigResource.broker(Integer.toString(brokerId)));
            Map<String, String> cluster = image.configs(ConfigResource.broker(""));
            leaderQuota.updateBound(ReplicationQuota.boundOf(mine, cluster, ReplicationQuota.LEADER_RATE));
            followerQuota.updateBound(ReplicationQuota.boundOf(mine, cluster, ReplicationQuota.FOLLOWER_RATE));
            moves.quota().updateBound(ReplicationQuota.boundOf(mine, cluster,
                ReplicationQuota.ALTER_LOG_DIRS_RATE));
        }
    }

    /** Whether {@code resource} is this broker's dynamic configs or the cluster default's. */
    private boolean isMine(ConfigResource resource) {
        return resource.type() == ConfigResource.BROKER
                && (resource.name().isEmpty() || resource.name().equals(Integer.toString(brokerId)));
    }

    /** A dynamic broker config changed the topic defaults: every hosted topic takes its new effective config. */
    private void reconfigureAll(MetadataImage image) {
        Set<String> topics = new HashSet<>();
        partitions.keySet().forEach(tp -> topics.add(tp.topic()));
        topics.forEach(topic -> reconfigure(image, topic));
        LOGGER.info("Applied the dynamic broker configs of metadata offset {} to {} topic(s)", image.offset(),
            topics.size());
    }

    private void reconfigure(MetadataImage image, String topicName) {
        Map<String, String> configs = effectiveConfigs(image, topicName);
        LogConfig config = logConfig(topicName, configs);
        int minIsr = LogConfigs.minInsyncReplicas(configs);
        for (Partition p : partitions.values()) {
            if (p.topic().equals(topicName)) {
                p.log().updateConfig(config);
                p.futureLog().ifPresent(future -> future.updateConfig(config));
                p.setMinInsyncReplicas(minIsr);
            }
        }
    }

    private Map<String, String> effectiveConfigs(MetadataImage image, String topicName) {
        Map<String, String> dynamic = LogConfigs.dynamicDefaults(
            image.configs(ConfigResource.broker(Integer.toString(brokerId))), image.configs(ConfigResource.broker("")));
        Map<String, String> brokerDefaults = LogConfigs.merge(topicDefaults, dynamic);
        return LogConfigs.merge(brokerDefaults, image.configs(ConfigResource.topic(topicName)));
    }

    private LogConfig logConfig(String topicName, Map<String, String> configs) {
        try {
            return LogConfigs.toLogConfig(configs);
        } catch (IllegalArgumentException e) {
            LOGGER.warn("Invalid log config of topic {} ({}); using the defaults", topicName, e.getMessage());
            return LogConfigs.toLogConfig(topicDefaults);
        }
    }

    private void removeStrayLogs(MetadataImage image) {
        for (LogManager manager : logManagers) {
            for (PartitionLog log : manager.allLogs()) {
                TopicPartition tp = new TopicPartition(log.topic(), log.partition());
                Partition hosted = partitions.get(tp);
                if (hosted == null || hosted.log() != log) {
                    LOGGER.info("Deleting stray log {} (not hosted in metadata image at offset {})", log.dir(),
                        image.offset());
                    manager.deleteLog(log.topic(), log.partition());
                }
            }
            for (PartitionLog future : manager.allFutureLogs()) {
                Partition hosted = partitions.get(new TopicPartition(future.topic(), future.partition()));
                if (hosted == null || hosted.futureLog().orElse(null) != future) {
                    LOGGER.info("Deleting stray future log {} (no move of it in metadata image at offset {})",
                        future.dir(), image.offset());
                    manager.deleteFutureLog(future.topic(), future.partition());
                }
            }
        }
    }

    /**
     * Runs the high-watermark checkpoints and the ISR expiration on {@code scheduler}, the broker's
     * {@code background.threads} (Kafka's {@code kafka-scheduler-N}); call before
     * {@link #startHighWatermarkCheckpoints} and {@link #startIsrExpiration}. {@link #close} cancels these tasks only.
     */
    public synchronized void useScheduler(Scheduler scheduler) {
        if (background != null) {
            throw new IllegalStateException("background tasks already scheduled");
        }
        background = scheduler.tasks("replica manager");
    }

    /** Where the background tasks run: the scheduler handed in, else a thread of this manager's own. */
    private synchronized ScheduledExecutorService background() {
        if (background == null) {
            ownScheduler = new Scheduler(1);
            background = ownScheduler.tasks("replica manager");
        }
        return background;
    }

    /**
     * Writes the high watermarks every {@code intervalMs} ({@code replica.high.watermark.checkpoint.interval.ms},
     * Kafka's default 5000), on the background threads.
     */
    public void startHighWatermarkCheckpoints(long intervalMs) {
        background().scheduleWithFixedDelay(this::checkpointHighWatermarks, intervalMs, intervalMs,
            TimeUnit.MILLISECONDS);
    }

    /**
     * Writes every log directory's {@link HighWatermarkCheckpoint} with the high watermark of each partition whose
     * log is in it (Kafka's {@code checkpointHighWatermarks}). A directory that cannot be written is logged and
     * skipped; the next round tries again.
     */
    public synchronized void checkpointHighWatermarks() {
        if (node == null) {
            return;
        }
        for (LogManager manager : logManagers) {
            Map<TopicPartition, Long> highWatermarks = new TreeMap<>(
                Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
            for (Partition p : partitions.values()) {
                if (manager.getLog(p.topic(), p.partitionIndex()).orElse(null) == p.log()) {
                    highWatermarks.put(p.topicPartition(), p.highWatermark());
                }
            }
            try {
                HighWatermarkCheckpoint.write(manager.environment().layer(), manager.logDir(), highWatermarks);
            } catch (UncheckedIOException e) {
                // A disk that cannot take the checkpoint takes no more writes (Kafka's OffsetCheckpointFile marks the
                // directory offline the same way).
                manager.environment().health().fail(manager.logDir(), "cannot write the high-watermark checkpoint of "
                    + manager.logDir(), e.getCause());
            } catch (RuntimeException e) {
                LOGGER.error("Cannot write the high-watermark checkpoint of {}", manager.logDir(), e);
            }
        }
    }

    /**
     * Starts the ISR expiration task: every {@code replica.lag.time.max.ms / 2}, each partition this broker leads
     * drops the followers that have not caught up for {@code replica.lag.time.max.ms} (Kafka's
     * {@code isr-expiration}), on the background threads.
     */
    public void startIsrExpiration() {
        long period = Math.max(1L, replicaLagTimeMaxMs / 2);
        background().scheduleAtFixedRate(this::maybeShrinkIsr, 0L, period, TimeUnit.MILLISECONDS);
    }

    /** One round of the ISR expiration task over every hosted partition; a failing partition is logged and skipped. */
    public void maybeShrinkIsr() {
        for (Partition p : partitions.values()) {
            try {
                p.maybeShrinkIsr();
            } catch (RuntimeException e) {
                LOGGER.error("Cannot shrink the ISR of {}", p.topicPartition(), e);
            }
        }
    }

    // ----- follower fetchers ------------------------------------------------------------------------------------

    /**
     * Makes the partitions this broker follows fetch from their leaders, over the network on
     * {@code interBrokerListenerName}; call before {@link #start}.
     */
    public void useReplicaFetchers(ReplicaFetcherConfig config, String interBrokerListenerName) {
        useReplicaFetchers(config, interBrokerListenerName, ClientTls.PLAINTEXT);
    }

    /**
     * As {@link #useReplicaFetchers(ReplicaFetcherConfig, String)}, the fetchers connecting over {@code tls} (TLS
     * when the inter-broker listener is SSL).
     */
    public void useReplicaFetchers(ReplicaFetcherConfig config, String interBrokerListenerName, ClientTls tls) {
        this.interBrokerListener = interBrokerListenerName;
        this.fetchers = ReplicaFetcherManager.remote(brokerId, config, partitions::get, this::currentBrokerEpoch,
            tls);
        fetchers.useQuota(followerQuota);
    }

    /** As {@link #useReplicaFetchers(ReplicaFetcherConfig, String)}, reaching leaders through {@code endpoints}. */
    void useReplicaFetchers(ReplicaFetcherConfig config, ReplicaFetcherManager.EndpointFactory endpoints,
                            String interBrokerListenerName) {
        this.interBrokerListener = interBrokerListenerName;
        this.fetchers = new ReplicaFetcherManager(brokerId, config, partitions::get, endpoints, time);
        fetchers.useQuota(followerQuota);
    }

    /**
     * Changes {@code num.replica.fetchers} live (a dynamic broker config, Kafka's {@code resizeFetcherThreadPool});
     * nothing when this broker has no fetchers.
     */
    public void resizeFetcherThreadPool(int newSize) {
        ReplicaFetcherManager current = fetchers;
        if (current != null) {
            current.resizeThreadPool(newSize);
        }
    }

    /** Chooses preferred read replicas for consumers with {@code selector} ({@code replica.selector.class}). */
    public void useReplicaSelector(RackAwareReplicaSelector selector) {
        this.replicaSelector = selector;
    }

    /**
     * The replica a consumer should read {@code partition} from instead of this leader (Kafka's
     * {@code findPreferredReadReplica}, KIP-392): empty unless this broker leads, a replica selector is configured
     * and the fetch is a consumer's. The candidates are the leader and the in-sync followers whose log start and end
     * offsets (as their fetches reported them) hold {@code fetchOffset}, each with its broker's rack; a follower counts
     * only when its broker is unfenced and advertises the client's listener (Kafka's replica endpoints).
     */
    public Optional<Integer> findPreferredReadReplica(Partition partition, ClientMetadata client, int replicaId,
                                                      long fetchOffset) {
        RackAwareReplicaSelector selector = replicaSelector;
        MetadataNode current = node;
        if (selector == null || current == null || replicaId >= 0 || !partition.isLeader()) {
            return Optional.empty();
        }
        MetadataImage image = current.currentImage();
        Optional<Integer> chosen = preferredReadReplica(selector, partition, client, fetchOffset, time.milliseconds(),
            image::broker);
        chosen.ifPresent(id -> LOGGER.debug("Replica selector RackAwareReplicaSelector returned preferred replica {} "
            + "of {} for client {} in rack {}", id, partition.topicPartition(), client.clientId(), client.rackId()));
        return chosen;
    }

    /** {@link #findPreferredReadReplica}'s choice for a leading {@code partition}, with brokers as given. */
    static Optional<Integer> preferredReadReplica(RackAwareReplicaSelector selector, Partition partition,
                                                  ClientMetadata client, long fetchOffset, long nowMs,
                                                  IntFunction<Optional<BrokerRegistration>> brokers) {
        int leaderId = partition.leaderId();
        List<Integer> isr = partition.inSyncReplicaIds();
        List<ReplicaView> candidates = new ArrayList<>();
        for (int replica : partition.registration().replicas()) {
            Optional<ReplicaState> state = partition.followerState(replica);
            if (replica != leaderId && isr.contains(replica) && state.isPresent()
                    && state.get().logEndOffset() >= fetchOffset && state.get().logStartOffset() <= fetchOffset
                    && reachable(brokers.apply(replica), client.listenerName())) {
                candidates.add(new ReplicaView(replica, rack(brokers.apply(replica)), state.get().logEndOffset(),
                    nowMs - state.get().lastCaughtUpTimeMs()));
            }
        }
        ReplicaView leader = new ReplicaView(leaderId, rack(brokers.apply(leaderId)), partition.logEndOffset(), 0L);
        candidates.add(leader);
        ReplicaView chosen = selector.select(client.rackId(), candidates, leader);
        return chosen.brokerId() == leaderId ? Optional.empty() : Optional.of(chosen.brokerId());
    }

    private static String rack(Optional<BrokerRegistration> broker) {
        return broker.flatMap(BrokerRegistration::rack).orElse(null);
    }

    /** Kafka's replica endpoints: the broker is registered, unfenced and advertises {@code listenerName}. */
    private static boolean reachable(Optional<BrokerRegistration> broker, String listenerName) {
        return broker.filter(b -> !b.fenced()).flatMap(b -> b.endpoint(listenerName)).isPresent();
    }

    /** The fetchers, or null when this broker does not fetch. */
    public ReplicaFetcherManager replicaFetchers() {
        return fetchers;
    }

    /**
     * This broker's epoch, the one its AlterPartition requests and its fetches (Fetch v15+ replica state) carry:
     * from the supplier given at construction, else from the metadata image; -1 before it registered.
     */
    private long currentBrokerEpoch() {
        if (brokerEpoch != null) {
            return brokerEpoch.getAsLong();
        }
        MetadataNode current = node;
        return current == null ? -1L
            : current.currentImage().broker(brokerId).map(BrokerRegistration::epoch).orElse(-1L);
    }

    /**
     * Points each partition's fetcher at its registration (Kafka's become-follower): a partition this broker
     * follows in a leader epoch its fetcher was not started for has its fetcher stopped first, then restarted at
     * the log end offset (the high watermark when the log has no epoch history: it truncates to it first) from the
     * leader's inter-broker endpoint; one this broker leads, or without leader, stops fetching. Run only on the
     * metadata applier (and at start), never on a fetcher thread. No truncation to the high watermark here, as in
     * Kafka 4: the leader's diverging epoch tells the fetcher where to truncate.
     */
    private void updateFetchers(List<Partition> hosted, MetadataImage image) {
        ReplicaFetcherManager manager = fetchers;
        if (manager == null) {
            return;
        }
        synchronized (fetchedEpochs) {
            // One removal and one addition for the whole change, as Kafka's applyDelta: a broker that takes over a
            // dead leader's partitions moves them all in one step (and one log line per fetcher), not one by one.
            // The removal comes first: once a partition's fetcher has stopped, its log end offset no longer moves
            // and is where the new fetcher starts.
            Set<TopicPartition> toRemove = new HashSet<>();
            Map<Partition, SourceBroker> toAdd = new LinkedHashMap<>();
            for (Partition p : hosted) {
                if (!closed) {
                    updateFetcher(p, image, toRemove, toAdd);
                }
            }
            if (!toRemove.isEmpty()) {
                manager.removeFetcherForPartitions(toRemove);
            }
            if (!toAdd.isEmpty()) {
                Map<TopicPartition, InitialFetchState> initial = new LinkedHashMap<>();
                toAdd.forEach((p, leader) -> initial.put(p.topicPartition(), new InitialFetchState(p.topicId(),
                    leader, p.registration().leaderEpoch(),
                    p.log().latestEpoch() >= 0 ? p.logEndOffset() : p.highWatermark())));
                manager.addFetcherForPartitions(initial);
            }
            manager.shutdownIdleFetcherThreads();
        }
    }

    /**
     * Adds to {@code toRemove} the partition whose fetcher must stop and to {@code toAdd} the one that must fetch
     * from a (new) leader, as {@code p}'s registration asks.
     */
    private void updateFetcher(Partition p, MetadataImage image, Set<TopicPartition> toRemove,
                               Map<Partition, SourceBroker> toAdd) {
        TopicPartition tp = p.topicPartition();
        PartitionRegistration reg = p.registration();
        if (p.isRemoved() || reg.leader() == brokerId) {
            if (fetchedEpochs.remove(tp) != null) {
                toRemove.add(tp);
            }
            return;
        }
        Integer fetched = fetchedEpochs.get(tp);
        if (fetched != null && fetched == reg.leaderEpoch()) {
            return;
        }
        toRemove.add(tp);
        fetchedEpochs.put(tp, reg.leaderEpoch());
        if (reg.leader() < 0) {
            // No leader (an offline partition, or the only replica in controlled shutdown): nothing to fetch from
            // until the controller elects one, as Kafka's follower waits without a fetcher.
            return;
        }
        Optional<BrokerEndpoint> endpoint = image.broker(reg.leader())
            .flatMap(b -> b.endpoint(interBrokerListener));
        if (endpoint.isEmpty()) {
            LOGGER.info("Unable to start fetching {} from leader {}: it has no {} endpoint in the metadata image",
                tp, reg.leader(), interBrokerListener);
            return;
        }
        toAdd.put(p, new SourceBroker(reg.leader(), endpoint.get().host(), endpoint.get().port()));
    }

    /** Stops fetching a partition that leaves this broker, before its log goes. */
    private void stopFetcher(TopicPartition tp) {
        ReplicaFetcherManager manager = fetchers;
        if (manager != null) {
            synchronized (fetchedEpochs) {
                fetchedEpochs.remove(tp);
                manager.removeFetcherForPartitions(Set.of(tp));
            }
        }
    }

    private void closeFetchers() {
        ReplicaFetcherManager manager = fetchers;
        if (manager != null) {
            manager.close();
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        closeFetchers();
        moves.close();
        MetadataNode current = node;
        if (current != null) {
            current.unsubscribe(metadataListener);
        }
        // A checkpoint being written finishes (an interrupt would abort its file channel); later rounds are dropped.
        ScheduledExecutorService tasks = background;
        if (tasks != null) {
            tasks.shutdown();
        }
        AlterPartitionManager alter = alterPartitionManager;
        if (alter != null) {
            alter.close();
        }
        applier.shutdown();
        try {
            applier.awaitTermination(10, TimeUnit.SECONDS);
            if (tasks != null) {
                tasks.awaitTermination(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Scheduler own = ownScheduler;
        if (own != null) {
            own.close();
        }
        checkpointHighWatermarks();
        List<Partition> all = new ArrayList<>(partitions.values());
        partitions.clear();
        for (Partition p : all) {
            p.close();
        }
    }
}
