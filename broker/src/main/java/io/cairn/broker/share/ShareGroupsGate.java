package io.cairn.broker.share;

import io.cairn.metadata.image.Features;
import io.cairn.metadata.image.MetadataImage;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Whether this broker serves share groups (KIP-932), as Kafka's {@code KafkaApis.isShareGroupProtocolEnabled}: when
 * the current metadata image finalizes {@code share.version} 1 or more, or the internal {@code group.share.enable}
 * is true. The share <em>group</em> APIs (ShareGroupHeartbeat, ShareGroupDescribe, ShareFetch, ShareAcknowledge,
 * AlterShareGroupOffsets, DeleteShareGroupOffsets, and DescribeShareGroupOffsets per group) answer UNSUPPORTED_VERSION
 * while it is false; the share
 * coordinator's state RPCs and FindCoordinator's share keys do not look at it. The feature level is read from the
 * image on every call, so {@code kafka-features upgrade --feature share.version=1} (or a downgrade to 0) takes effect
 * as soon as the broker sees the committed record. Immutable, thread-safe.
 */
public final class ShareGroupsGate {

    private final Supplier<MetadataImage> image;
    private final boolean groupShareEnable;

    /**
     * @param image            the broker's current metadata image (e.g. {@code MetadataNode::currentImage})
     * @param groupShareEnable the broker config {@code group.share.enable} (internal, default false)
     */
    public ShareGroupsGate(Supplier<MetadataImage> image, boolean groupShareEnable) {
        this.image = Objects.requireNonNull(image, "image");
        this.groupShareEnable = groupShareEnable;
    }

    /** Whether share groups are enabled now: {@code share.version} >= 1 or {@code group.share.enable=true}. */
    public boolean enabled() {
        return groupShareEnable || Features.shareVersionEnabled(image.get());
    }
}
