package io.cairn.metadata.image;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The feature flags Cairn implements (KIP-584, KIP-1022), with Kafka 4.1's names and levels, the ranges a Cairn node
 * supports and the levels a new cluster finalizes. Only what Cairn really does is offered:
 * <ul>
 *   <li>{@code metadata.version} 27 (4.1-IV1) only: Cairn's metadata records are its own, with one meaning, and the
 *       client-visible behaviour is Kafka 4.1's; no older level is offered because nothing in Cairn would honour
 *       its restrictions (e.g. no ELR below 4.0-IV2).</li>
 *   <li>{@code eligible.leader.replicas.version} 0-1 (KIP-966), 1 in a new cluster as in Kafka 4.1.</li>
 *   <li>{@code transaction.version} 0-2 (KIP-890), 2 in a new cluster as in Kafka 4.1: 1 writes the flexible
 *       transaction log value, 2 also bumps the producer epoch on every commit and abort and adds partitions from
 *       the produce path.</li>
 *   <li>{@code group.version} 0-1 (KIP-848), 1 in a new cluster as in Kafka 4.1: at 1 the consumer group protocol
 *       (ConsumerGroupHeartbeat, ConsumerGroupDescribe) is served, at 0 those APIs answer UNSUPPORTED_VERSION.</li>
 *   <li>{@code share.version} 0-1 (KIP-932), 0 in a new cluster as in Kafka 4.1 (whose SV_1 bootstraps only from
 *       metadata.version 4.2-IV0): at 1 the share group APIs are served (see the broker's {@code ShareGroupsGate},
 *       which also honours the internal {@code group.share.enable}); {@code kafka-features upgrade --feature
 *       share.version=1} turns them on. SV_1 depends on no other feature.</li>
 *   <li>{@code kraft.version} 0-1 (KIP-853): 1 for a quorum formatted with {@code --standalone},
 *       {@code --initial-controllers} or {@code --no-initial-controllers}, whose voters change with AddRaftVoter and
 *       RemoveRaftVoter; 0 for the static {@code controller.quorum.voters} (the storage tool decides, as Kafka 4.1's
 *       formatter). It is fixed at format time: Cairn does not upgrade a static quorum to a dynamic one, so
 *       UpdateFeatures refuses to change it.</li>
 * </ul>
 * Stateless, thread-safe.
 */
public final class Features {

    public static final String METADATA_VERSION = "metadata.version";
    public static final String ELIGIBLE_LEADER_REPLICAS_VERSION = "eligible.leader.replicas.version";
    public static final String TRANSACTION_VERSION = "transaction.version";
    public static final String GROUP_VERSION = "group.version";
    public static final String SHARE_VERSION = "share.version";
    public static final String KRAFT_VERSION = "kraft.version";

    /** Kafka's {@code MetadataVersion.IBP_4_1_IV1}, the metadata.version whose semantics Cairn implements. */
    public static final short METADATA_VERSION_4_1_IV1 = 27;

    /** A supported range of levels, both ends included. */
    public record Range(short min, short max) {

        public boolean contains(short level) {
            return level >= min && level <= max;
        }
    }

    private static final Map<String, Range> SUPPORTED;
    private static final Map<String, Short> BOOTSTRAP;

    static {
        Map<String, Range> supported = new LinkedHashMap<>();
        supported.put(METADATA_VERSION, new Range(METADATA_VERSION_4_1_IV1, METADATA_VERSION_4_1_IV1));
        supported.put(ELIGIBLE_LEADER_REPLICAS_VERSION, new Range((short) 0, (short) 1));
        supported.put(TRANSACTION_VERSION, new Range((short) 0, (short) 2));
        supported.put(GROUP_VERSION, new Range((short) 0, (short) 1));
        supported.put(SHARE_VERSION, new Range((short) 0, (short) 1));
        supported.put(KRAFT_VERSION, new Range((short) 0, (short) 1));
        SUPPORTED = Collections.unmodifiableMap(supported);
        Map<String, Short> bootstrap = new LinkedHashMap<>();
        bootstrap.put(METADATA_VERSION, METADATA_VERSION_4_1_IV1);
        bootstrap.put(ELIGIBLE_LEADER_REPLICAS_VERSION, (short) 1);
        bootstrap.put(TRANSACTION_VERSION, (short) 2);
        bootstrap.put(GROUP_VERSION, (short) 1);
        bootstrap.put(SHARE_VERSION, (short) 0);
        bootstrap.put(KRAFT_VERSION, (short) 0);
        BOOTSTRAP = Collections.unmodifiableMap(bootstrap);
    }

    private Features() {
    }

    /** Every feature Cairn knows, with the levels it supports, in a fixed order. */
    public static Map<String, Range> known() {
        return SUPPORTED;
    }

    /** The features a broker lists as supported in ApiVersions: those whose highest level is above 0 (Kafka's rule). */
    public static Map<String, Range> advertised() {
        Map<String, Range> advertised = new LinkedHashMap<>();
        SUPPORTED.forEach((name, range) -> {
            if (range.max() > 0) {
                advertised.put(name, range);
            }
        });
        return advertised;
    }

    /** The levels a newly formatted cluster finalizes (Kafka 4.1's defaults, within what Cairn supports). */
    public static Map<String, Short> bootstrapLevels() {
        return BOOTSTRAP;
    }

    /**
     * Why {@code level} cannot be finalized for {@code name} given the other levels, or null when it can: an unknown
     * feature, a level out of the supported range, or a missing dependency (ELR 1, transaction.version 1
     * and 2 need metadata.version 4.0-IV2, level 24).
     */
    public static String invalidLevel(String name, short level, Map<String, Short> levels) {
        Range range = SUPPORTED.get(name);
        if (range == null) {
            return "Unknown feature " + name;
        }
        if (!range.contains(level)) {
            return "Feature " + name + " does not support level " + level + " (supported: " + range.min() + "-"
                    + range.max() + ")";
        }
        if ((name.equals(ELIGIBLE_LEADER_REPLICAS_VERSION) || name.equals(TRANSACTION_VERSION)) && level >= 1
                && levels.getOrDefault(METADATA_VERSION, (short) 0) < 24) {
            return name + " could not be set to " + level + " because it depends on metadata.version level 24";
        }
        return null;
    }

    /** The finalized transaction.version of this image (0 when none is finalized). */
    public static short transactionVersion(MetadataImage image) {
        return image.featureLevel(TRANSACTION_VERSION);
    }

    /** Whether the KIP-848 consumer group protocol is enabled in this image ({@code group.version} 1 or more). */
    public static boolean consumerGroupsEnabled(MetadataImage image) {
        return image.featureLevel(GROUP_VERSION) >= 1;
    }

    /**
     * Whether this image finalizes {@code share.version} 1 or more (KIP-932). The broker's share group gate also
     * honours the internal {@code group.share.enable}; use that, not this, to decide whether to serve a request.
     */
    public static boolean shareVersionEnabled(MetadataImage image) {
        return image.featureLevel(SHARE_VERSION) >= 1;
    }

    /** Whether this image's quorum changes its voters at run time (KIP-853: {@code kraft.version} 1 or more). */
    public static boolean dynamicQuorum(MetadataImage image) {
        return image.featureLevel(KRAFT_VERSION) >= 1;
    }

    /** Whether eligible leader replicas (KIP-966) are enabled in this image. */
    public static boolean elrEnabled(MetadataImage image) {
        return image.featureLevel(ELIGIBLE_LEADER_REPLICAS_VERSION) >= 1;
    }
}
