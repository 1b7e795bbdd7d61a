package io.cairn.broker.share;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.metadata.image.Features;
import io.cairn.metadata.image.MetadataDelta;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.record.FeatureLevelRecord;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The share group gate follows share.version in the current image, or group.share.enable (Kafka's rule). */
class ShareGroupsGateTest {

    private static MetadataImage withShareVersion(int level) {
        return new MetadataDelta(MetadataImage.EMPTY).replayAll(List.of(
                new FeatureLevelRecord().setName(Features.METADATA_VERSION).setFeatureLevel((short) 27),
                new FeatureLevelRecord().setName(Features.SHARE_VERSION).setFeatureLevel((short) level)))
                .apply(7L);
    }

    @Test
    void followsShareVersionInTheCurrentImage() {
        // Given: a new 4.1 cluster (share.version not finalized), group.share.enable false
        AtomicReference<MetadataImage> image = new AtomicReference<>(withShareVersion(0));
        ShareGroupsGate gate = new ShareGroupsGate(image::get, false);
        assertThat(gate.enabled()).isFalse();

        // When: kafka-features upgrade --feature share.version=1 is committed
        image.set(withShareVersion(1));
        // Then
        assertThat(gate.enabled()).isTrue();

        // When: disabled again
        image.set(withShareVersion(0));
        // Then
        assertThat(gate.enabled()).isFalse();
    }

    @Test
    void groupShareEnableTurnsShareGroupsOnWhateverTheFeatureSays() {
        assertThat(new ShareGroupsGate(() -> MetadataImage.EMPTY, true).enabled()).isTrue();
        assertThat(new ShareGroupsGate(() -> withShareVersion(0), true).enabled()).isTrue();
        assertThat(new ShareGroupsGate(() -> MetadataImage.EMPTY, false).enabled()).isFalse();
    }
}
