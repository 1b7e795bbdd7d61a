package io.cairn.metadata.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.metadata.TestRequests;
import io.cairn.metadata.image.MetadataDelta;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicImage;
import io.cairn.metadata.record.ControllerChangeRecord;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AlterPartitionReassignmentsRequestData;
import io.cairn.wire.message.AlterPartitionReassignmentsRequestData.ReassignablePartition;
import io.cairn.wire.message.AlterPartitionReassignmentsRequestData.ReassignableTopic;
import io.cairn.wire.message.AlterPartitionRequestData;
import io.cairn.wire.message.BrokerHeartbeatResponseData;
import io.cairn.wire.message.BrokerRegistrationResponseData;
import io.cairn.wire.message.ElectLeadersRequestData;
import io.cairn.wire.protocol.ApiMessage;
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Deterministic simulation of the controller quorum: three {@link QuorumController}s over a simulated replicated
 * log (leader changes with term fencing, appends that are dropped, lost with their log suffix on a leader change,
 * or committed with a lost acknowledgement; followers applying with lag) and five brokers whose heartbeats and
 * AlterPartition requests cross a lossy transport that can partition them. Checks on every committed entry: at most
 * one leader per partition and leader epoch, the leader always in the ISR, epochs never decrease, and every node
 * reaching the same image at the same offset.
 */
class ControllerSimulationTest {

    private static final int NODES = 3;
    private static final int BROKERS = 5;
    private static final long RUN_MS = 60_000;

    /** One entry of the simulated log. */
    private record Entry(long term, List<ApiMessage> records) {
    }

    /** A pending append of the current leader. */
    private record Pending(int node, long term, List<ApiMessage> records, CompletableFuture<Long> future) {
    }

    private final class Sim {
        final SimScheduler scheduler;
        final List<Entry> log = new ArrayList<>();
        final List<MetadataImage> reference = new ArrayList<>();
        /** The leader whose appends of this term are lost since one was (until it re-synchronises), or -1. */
        int gapFrom = -1;
        int reassignmentsEnded;
        final Deque<Pending> pending = new ArrayDeque<>();
        final Map<Integer, MetadataImage> images = new HashMap<>();
        final Map<Integer, QuorumController> controllers = new HashMap<>();
        final Map<Long, Map<Integer, Integer>> leaderOfEpoch = new HashMap<>();
        final Set<Integer> partitionedNodes = new HashSet<>();
        final Set<Integer> partitionedBrokers = new HashSet<>();
        final Map<Integer, Long> brokerEpochs = new HashMap<>();
        long term;
        int leader = -1;
        int commits;
        int failedAppends;
        int leaderChanges;

        Sim(long seed) {
            scheduler = new SimScheduler(seed);
            for (int node = 1; node <= NODES; node++) {
                int id = node;
                images.put(id, MetadataImage.EMPTY);
                ControllerLogic logic = new ControllerLogic(ControllerSettings.defaults(id)
                        .withBrokerSessionTimeoutMs(1000).withLeaderImbalanceCheckIntervalMs(2000),
                        () -> new Uuid(scheduler.random().nextLong(), scheduler.random().nextLong()));
                controllers.put(id, new QuorumController(logic, "sim-cluster", (t, records) -> append(id, t, records),
                        () -> images.get(id), scheduler.loop()));
            }
        }

        double chance() {
            return scheduler.random().nextDouble();
        }

        /**
         * Appends of the leader; a dropped one never enters the log, and as a log has no gaps neither does any later
         * append of that node in that term until the controller re-synchronises (a batch with its
         * ControllerChangeRecord), so no batch decided on top of a lost one commits.
         */
        CompletableFuture<Long> append(int node, long appendTerm, List<ApiMessage> records) {
            CompletableFuture<Long> future = new CompletableFuture<>();
            boolean resync = records.stream().anyMatch(r -> r instanceof ControllerChangeRecord);
            boolean lost = node != leader || appendTerm != term || partitionedNodes.contains(node)
                    || (gapFrom == node && !resync) || chance() < 0.03;
            if (lost && node == leader && appendTerm == term) {
                gapFrom = node;
            } else if (resync && node == leader) {
                gapFrom = -1;
            }
            if (lost) {
                failedAppends++;
                scheduler.at(1 + scheduler.random().nextInt(20),
                        () -> future.completeExceptionally(new IllegalStateException("not committed")));
                return future;
            }
            Pending p = new Pending(node, appendTerm, List.copyOf(records), future);
            pending.add(p);
            scheduler.at(2 + scheduler.random().nextInt(10), this::commitHead);
            return future;
        }

        void commitHead() {
            Pending head = pending.poll();
            if (head == null) {
                return;
            }
            commit(head, chance() < 0.02);
        }

        void commit(Pending p, boolean loseAck) {
            log.add(new Entry(p.term(), p.records()));
            long offset = log.size() - 1;
            MetadataImage previous = reference.isEmpty() ? MetadataImage.EMPTY : reference.get(reference.size() - 1);
            MetadataImage next = new MetadataDelta(previous).replayAll(p.records()).apply(offset);
            checkInvariants(previous, next);
            reference.add(next);
            commits++;
            for (int node = 1; node <= NODES; node++) {
                int id = node;
                boolean self = id == p.node();
                scheduler.at(self ? 1 : 1 + scheduler.random().nextInt(50), () -> catchUp(id));
            }
            scheduler.at(2, () -> {
                catchUp(p.node());
                if (loseAck) {
                    p.future().completeExceptionally(new IllegalStateException("acknowledgement lost"));
                } else {
                    p.future().complete(offset);
                }
            });
        }

        void catchUp(int node) {
            MetadataImage image = images.get(node);
            while (image.offset() + 1 < log.size()) {
                long nextOffset = image.offset() + 1;
                image = new MetadataDelta(image).replayAll(log.get((int) nextOffset).records()).apply(nextOffset);
                assertThat(image).as("node %d at offset %d", node, nextOffset).isEqualTo(reference.get(
                        (int) nextOffset));
            }
            images.put(node, image);
        }

        void checkInvariants(MetadataImage previous, MetadataImage next) {
            for (TopicImage topic : next.topicsById().values()) {
                Map<Integer, PartitionRegistration> before = previous.topic(topic.id()).map(TopicImage::partitions)
                        .orElse(Map.of());
                topic.partitions().forEach((index, p) -> {
                    assertThat(p.replicas()).as("replicas of %s-%d", topic.name(), index)
                            .containsAll(p.isr()).containsAll(p.addingReplicas()).containsAll(p.removingReplicas())
                            .doesNotHaveDuplicates();
                    // (adding and removing may overlap: a new target that only removes keeps the old adding
                    // replicas, as Kafka's changePartitionReassignment does)
                    if (p.hasLeader()) {
                        assertThat(p.isr()).as("leader in ISR of %s-%d", topic.name(), index).contains(p.leader());
                        assertThat(next.broker(p.leader()).map(b -> !b.fenced()).orElse(false))
                                .as("leader of %s-%d unfenced", topic.name(), index).isTrue();
                    }
                    PartitionRegistration old = before.get(index);
                    if (old != null && old.reassigning() && !p.reassigning()) {
                        reassignmentsEnded++;
                    }
                    if (old != null) {
                        assertThat(p.leaderEpoch()).isGreaterThanOrEqualTo(old.leaderEpoch());
                        assertThat(p.partitionEpoch()).isGreaterThanOrEqualTo(old.partitionEpoch());
                        if (old.leader() != p.leader()) {
                            assertThat(p.leaderEpoch()).isGreaterThan(old.leaderEpoch());
                        }
                    }
                    long key = topic.id().hashCode() * 31L + index;
                    Integer recorded = leaderOfEpoch.computeIfAbsent(key, k -> new HashMap<>())
                            .putIfAbsent(p.leaderEpoch(), p.leader());
                    assertThat(recorded == null || recorded == p.leader())
                            .as("one leader for %s-%d epoch %d", topic.name(), index, p.leaderEpoch()).isTrue();
                });
            }
        }

        void changeLeader() {
            List<Integer> candidates = new ArrayList<>();
            for (int node = 1; node <= NODES; node++) {
                if (!partitionedNodes.contains(node)) {
                    candidates.add(node);
                }
            }
            if (candidates.isEmpty()) {
                return;
            }
            // Entries of the old term: a prefix was replicated to a majority and commits, the rest is lost.
            List<Pending> old = new ArrayList<>(pending);
            pending.clear();
            int replicated = old.isEmpty() ? 0 : scheduler.random().nextInt(old.size() + 1);
            for (int i = 0; i < old.size(); i++) {
                if (i < replicated) {
                    commit(old.get(i), false);
                } else {
                    Pending lost = old.get(i);
                    scheduler.at(1 + scheduler.random().nextInt(30),
                            () -> lost.future().completeExceptionally(new IllegalStateException("truncated")));
                }
            }
            int previousLeader = leader;
            leader = candidates.get(scheduler.random().nextInt(candidates.size()));
            term++;
            gapFrom = -1;
            leaderChanges++;
            long newTerm = term;
            int newLeader = leader;
            if (previousLeader > 0 && previousLeader != newLeader) {
                // The old leader learns late that it was deposed.
                scheduler.at(scheduler.random().nextInt(200), () -> controllers.get(previousLeader).resign());
            }
            scheduler.at(5 + scheduler.random().nextInt(20), () -> {
                catchUp(newLeader);
                controllers.get(newLeader).becomeLeader(newTerm);
            });
        }

        CompletableFuture<ApiMessage> send(int broker, ApiMessage request) {
            CompletableFuture<ApiMessage> result = new CompletableFuture<>();
            if (partitionedBrokers.contains(broker) || chance() < 0.05 || leader < 0) {
                scheduler.at(10, () -> result.completeExceptionally(new IllegalStateException("dropped")));
                return result;
            }
            int target = leader;
            scheduler.at(1 + scheduler.random().nextInt(5), () -> controllers.get(target).submit(request)
                    .whenComplete((response, error) -> scheduler.at(1 + scheduler.random().nextInt(5), () -> {
                        if (error != null) {
                            result.completeExceptionally(error);
                        } else {
                            result.complete(response);
                        }
                    })));
            return result;
        }

        void brokerLoop(int broker) {
            Long epoch = brokerEpochs.get(broker);
            if (epoch == null) {
                Uuid incarnation = new Uuid(scheduler.random().nextLong(), scheduler.random().nextLong());
                send(broker, TestRequests.registration(broker, "rack-" + (broker % 3))
                        .setIncarnationId(incarnation)).thenAccept(r -> {
                    BrokerRegistrationResponseData response = (BrokerRegistrationResponseData) r;
                    if (response.errorCode() == Errors.NONE.code()) {
                        brokerEpochs.put(broker, response.brokerEpoch());
                    }
                });
            } else {
                send(broker, TestRequests.heartbeat(broker, epoch)).thenAccept(r -> {
                    BrokerHeartbeatResponseData response = (BrokerHeartbeatResponseData) r;
                    if (response.errorCode() == Errors.STALE_BROKER_EPOCH.code()
                            || response.errorCode() == Errors.BROKER_ID_NOT_REGISTERED.code()) {
                        brokerEpochs.remove(broker);
                    }
                });
                alterIsr(broker, epoch);
            }
            scheduler.at(150 + scheduler.random().nextInt(100), () -> brokerLoop(broker));
        }

        /** As a leader, shrink the ISR to the reachable replicas or expand it back, from a possibly stale view. */
        void alterIsr(int broker, long epoch) {
            MetadataImage view = images.get(1 + scheduler.random().nextInt(NODES));
            // In a fixed order: the image's maps iterate in an order that differs from one JVM to the next, and
            // each partition draws from the seeded random
            List<TopicImage> topics = view.topicsById().values().stream()
                    .sorted(Comparator.comparing(TopicImage::name)).toList();
            for (TopicImage topic : topics) {
                new TreeMap<>(topic.partitions()).forEach((index, p) -> {
                    if (p.leader() != broker || chance() > 0.3) {
                        return;
                    }
                    List<Integer> isr = new ArrayList<>();
                    for (int replica : p.replicas()) {
                        boolean reachable = replica == broker || (!partitionedBrokers.contains(replica)
                                && view.broker(replica).map(b -> !b.fenced()).orElse(false));
                        if (reachable) {
                            isr.add(replica);
                        }
                    }
                    if (!isr.equals(p.isr())) {
                        send(broker, alter(broker, epoch, topic.id(), index, p, isr));
                    }
                });
            }
        }

        /** An admin moves (or cancels the move of) one partition of a topic the last image has. */
        void reassign() {
            List<TopicImage> topics = reference.isEmpty() ? List.of()
                    : List.copyOf(reference.get(reference.size() - 1).topicsById().values());
            if (topics.isEmpty()) {
                return;
            }
            TopicImage topic = topics.stream().sorted((a, b) -> a.name().compareTo(b.name())).toList()
                    .get(scheduler.random().nextInt(topics.size()));
            List<Integer> target = null;
            if (chance() < 0.8) {
                List<Integer> brokers = new ArrayList<>(List.of(1, 2, 3, 4, 5));
                Collections.shuffle(brokers, scheduler.random());
                target = new ArrayList<>(brokers.subList(0, 1 + scheduler.random().nextInt(3)));
            }
            List<ReassignablePartition> partitions = new ArrayList<>();
            partitions.add(new ReassignablePartition().setPartitionIndex(0).setReplicas(target));
            List<ReassignableTopic> reassigned = new ArrayList<>();
            reassigned.add(new ReassignableTopic().setName(topic.name()).setPartitions(partitions));
            send(0, new AlterPartitionReassignmentsRequestData().setTopics(reassigned));
        }

        void chaos() {
            double roll = chance();
            if (roll < 0.25) {
                changeLeader();
            } else if (roll < 0.40) {
                int node = 1 + scheduler.random().nextInt(NODES);
                if (!partitionedNodes.remove(node) && partitionedNodes.isEmpty()) {
                    partitionedNodes.add(node);
                    if (node == leader) {
                        changeLeader();
                    }
                }
            } else if (roll < 0.60) {
                int broker = 1 + scheduler.random().nextInt(BROKERS);
                if (!partitionedBrokers.remove(broker) && partitionedBrokers.size() < 2) {
                    partitionedBrokers.add(broker);
                }
            } else if (roll < 0.80) {
                int topic = scheduler.random().nextInt(8);
                // an admin client (id 0): never partitioned, only subject to drops
                send(0, TestRequests.createTopic("topic-" + topic, 1 + scheduler.random().nextInt(4),
                        1 + scheduler.random().nextInt(3), Map.of()));
            } else if (roll < 0.88) {
                send(0, new ElectLeadersRequestData().setElectionType((byte) (chance() < 0.8 ? 0 : 1))
                        .setTopicPartitions(null));
            } else {
                reassign();
            }
            scheduler.at(300 + scheduler.random().nextInt(700), this::chaos);
        }

        MetadataImage run() {
            changeLeader();
            for (int broker = 1; broker <= BROKERS; broker++) {
                int id = broker;
                scheduler.at(scheduler.random().nextInt(100), () -> brokerLoop(id));
            }
            scheduler.at(1000, this::chaos);
            scheduler.runUntil(RUN_MS);
            partitionedNodes.clear();
            partitionedBrokers.clear();
            scheduler.runUntil(RUN_MS + 5000);
            for (int node = 1; node <= NODES; node++) {
                catchUp(node);
                assertThat(images.get(node)).isEqualTo(reference.get(reference.size() - 1));
            }
            return reference.get(reference.size() - 1);
        }
    }

    private static AlterPartitionRequestData alter(int broker, long epoch, Uuid topicId, int index,
                                                   PartitionRegistration p, List<Integer> isr) {
        List<AlterPartitionRequestData.BrokerState> states = new ArrayList<>();
        isr.forEach(b -> states.add(new AlterPartitionRequestData.BrokerState().setBrokerId(b).setBrokerEpoch(-1)));
        List<AlterPartitionRequestData.PartitionData> partitions = new ArrayList<>();
        partitions.add(new AlterPartitionRequestData.PartitionData().setPartitionIndex(index)
                .setLeaderEpoch(p.leaderEpoch()).setPartitionEpoch(p.partitionEpoch()).setNewIsrWithEpochs(states));
        List<AlterPartitionRequestData.TopicData> topics = new ArrayList<>();
        topics.add(new AlterPartitionRequestData.TopicData().setTopicId(topicId).setPartitions(partitions));
        return new AlterPartitionRequestData().setBrokerId(broker).setBrokerEpoch(epoch).setTopics(topics);
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 42, 1234, 20261130, 777})
    void theControllerKeepsItsInvariantsUnderLeaderChangesPartitionsAndDrops(long seed) {
        // Given / When
        Sim sim = new Sim(seed);
        MetadataImage last = sim.run();

        System.out.printf("SIMULATION seed %d: %d commits, %d leader changes, %d failed appends, %d leader epochs "
                + "checked, %d reassignments ended%n", seed, sim.commits, sim.leaderChanges, sim.failedAppends,
                sim.leaderOfEpoch.values().stream().mapToInt(Map::size).sum(), sim.reassignmentsEnded);

        // Then the run did exercise the quorum, and every invariant held on every committed entry
        assertThat(sim.leaderChanges).isGreaterThan(3);
        assertThat(sim.commits).isGreaterThan(40);
        assertThat(sim.reassignmentsEnded).isPositive();
        assertThat(last.topicsById()).isNotEmpty();
        assertThat(last.brokers()).hasSize(BROKERS);
        // and the same seed replays the same history
        assertThat(new Sim(seed).run()).isEqualTo(last);
    }
}
