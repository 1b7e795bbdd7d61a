package io.cairn.testkit.faults;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Random;

/**
 * The faults of one seeded run, in order, drawn from the seed alone: the same seed always gives the same schedule,
 * so a failing run is rerun as it was. Each fault has a kind, a target role (resolved to a node when the fault is
 * injected: the leader or a follower of a data partition, or the active controller), how long it lasts and how long
 * the cluster runs undisturbed after it heals. Immutable.
 */
public record FaultSchedule(long seed, List<Fault> faults) {

    /** What is done to the target node. */
    public enum Kind {
        /** SIGKILL, then a restart on the same data once the fault's time is up. */
        KILL,
        /** SIGSTOP, then SIGCONT: a process paused (GC pause, VM stall) whose sessions time out meanwhile. */
        PAUSE,
        /** SIGTERM (controlled shutdown), then a restart. */
        BOUNCE,
        /**
         * The node cut off from the other nodes, both ways, then healed: its replication and controller (Raft and
         * broker-to-controller) links stalled by the testkit {@code FaultProxy}s in front of every node, while the
         * test's clients still reach it.
         */
        PARTITION,
        /**
         * SIGKILL, then the node's unsynced log tails lost as a power cut loses them (compat-tests' {@code PowerCut}),
         * then a restart. Drawn only when named ({@code --kinds power-leader,...}): the unrestricted draw keeps the
         * four kinds above, so every existing seed keeps its schedule.
         */
        POWER
    }

    /** The kinds the unrestricted draw takes from, as it always has. */
    private static final Kind[] DRAWN_KINDS = {Kind.KILL, Kind.PAUSE, Kind.BOUNCE, Kind.PARTITION};

    /** Which node the fault hits, chosen when it is injected. */
    public enum Target {
        /** The leader of the fault's data partition. */
        LEADER,
        /** A follower of the fault's data partition. */
        FOLLOWER,
        /** The active controller. */
        CONTROLLER
    }

    /** One fault: {@code durationMs} from injection to heal, then {@code quietMs} before the next. */
    public record Fault(Kind kind, Target target, int partition, long durationMs, long quietMs) {

        /** A short name of the fault's kind and target, such as {@code kill-leader}: the unavailability key. */
        public String name() {
            return kind.name().toLowerCase() + "-" + target.name().toLowerCase();
        }

        @Override
        public String toString() {
            return name() + "(p" + partition + ", " + durationMs + " ms, quiet " + quietMs + " ms)";
        }
    }

    public FaultSchedule {
        faults = List.copyOf(faults);
    }

    /**
     * Draws {@code count} faults from {@code seed}: kinds and targets uniformly, the partition among
     * {@code partitions}, each fault lasting 1 to 8 s and followed by 1 to 4 s of quiet.
     */
    public static FaultSchedule draw(long seed, int count, int partitions) {
        Random random = new Random(seed);
        List<Fault> faults = new ArrayList<>(count);
        Kind[] kinds = DRAWN_KINDS;
        Target[] targets = Target.values();
        for (int i = 0; i < count; i++) {
            Kind kind = kinds[random.nextInt(kinds.length)];
            Target target = targets[random.nextInt(targets.length)];
            int partition = random.nextInt(partitions);
            long duration = 1_000 + random.nextInt(7_001);
            long quiet = 1_000 + random.nextInt(3_001);
            faults.add(new Fault(kind, target, partition, duration, quiet));
        }
        return new FaultSchedule(seed, faults);
    }

    /**
     * Draws {@code count} faults from {@code seed} as {@link #draw(long, int, int)} does, but only of the kinds and
     * targets {@code names} lists ({@link Fault#name()}, such as {@code kill-controller}), uniformly among them; an
     * empty {@code names} is the unrestricted draw, so every existing seed keeps its schedule.
     *
     * @throws IllegalArgumentException when a name is not a kind and target
     */
    public static FaultSchedule draw(long seed, int count, int partitions, Collection<String> names) {
        if (names.isEmpty()) {
            return draw(seed, count, partitions);
        }
        List<Fault> allowed = new ArrayList<>();
        for (Kind kind : Kind.values()) {
            for (Target target : Target.values()) {
                Fault fault = new Fault(kind, target, 0, 0, 0);
                if (names.contains(fault.name())) {
                    allowed.add(fault);
                }
            }
        }
        if (allowed.size() != names.size()) {
            throw new IllegalArgumentException("Unknown fault kind in " + names + "; kinds are <kind>-<target> with "
                    + "kind one of kill, pause, bounce, partition, power and target one of leader, follower, "
                    + "controller");
        }
        Random random = new Random(seed);
        List<Fault> faults = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            Fault drawn = allowed.get(random.nextInt(allowed.size()));
            int partition = random.nextInt(partitions);
            long duration = 1_000 + random.nextInt(7_001);
            long quiet = 1_000 + random.nextInt(3_001);
            faults.add(new Fault(drawn.kind(), drawn.target(), partition, duration, quiet));
        }
        return new FaultSchedule(seed, faults);
    }

    @Override
    public String toString() {
        return "seed " + seed + ": " + faults;
    }
}
