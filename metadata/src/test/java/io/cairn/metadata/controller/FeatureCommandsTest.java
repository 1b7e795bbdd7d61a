package io.cairn.metadata.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.metadata.image.ConfigResource;
import io.cairn.metadata.image.Features;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.record.ConfigRecord;
import io.cairn.metadata.record.FeatureLevelRecord;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.UpdateFeaturesRequestData;
import io.cairn.wire.message.UpdateFeaturesResponseData;
import io.cairn.wire.protocol.ApiMessage;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** UpdateFeatures on the controller with Kafka's FeatureControlManager checks and messages. */
class FeatureCommandsTest {

    private final ControllerLogic logic = new ControllerLogic(ControllerSettings.defaults(1));
    private MetadataImage image = ControllerLogic.apply(MetadataImage.EMPTY,
            logic.bootstrapFeatures(MetadataImage.EMPTY));

    private UpdateFeaturesResponseData update(String feature, int level, int type, boolean validateOnly) {
        UpdateFeaturesRequestData request = new UpdateFeaturesRequestData().setValidateOnly(validateOnly);
        request.featureUpdates().add(new UpdateFeaturesRequestData.FeatureUpdateKey().setFeature(feature)
                .setMaxVersionLevel((short) level).setUpgradeType((byte) type));
        ControllerResult<? extends ApiMessage> result = logic.handle(image, request, b -> true);
        image = ControllerLogic.apply(image, result.records());
        return (UpdateFeaturesResponseData) result.response();
    }

    @Test
    void disablingAndReenablingElrFollowsKafkasDowngradeRules() {
        // When: a downgrade without a downgrade type
        UpdateFeaturesResponseData refused = update(Features.ELIGIBLE_LEADER_REPLICAS_VERSION, 0, 1, false);
        // Then
        assertThat(refused.errorCode()).isEqualTo(Errors.INVALID_UPDATE_VERSION.code());
        assertThat(refused.errorMessage()).isEqualTo("The update failed for all features since the following "
                + "feature had an error: Invalid update version 0 for feature "
                + "eligible.leader.replicas.version. Can't downgrade the version of this feature without setting "
                + "the upgrade type to either safe or unsafe downgrade.");
        assertThat(refused.results()).singleElement().satisfies(r -> assertThat(r.errorCode())
                .isEqualTo(Errors.INVALID_UPDATE_VERSION.code()));

        // When: a dry run, then the safe downgrade (kafka-features disable)
        assertThat(update(Features.ELIGIBLE_LEADER_REPLICAS_VERSION, 0, 2, true).errorCode()).isZero();
        assertThat(Features.elrEnabled(image)).isTrue();
        assertThat(update(Features.ELIGIBLE_LEADER_REPLICAS_VERSION, 0, 2, false).errorCode()).isZero();
        // Then
        assertThat(Features.elrEnabled(image)).isFalse();
        assertThat(image.features()).doesNotContainKey(Features.ELIGIBLE_LEADER_REPLICAS_VERSION);

        // When: an "upgrade" typed as a downgrade, then the upgrade
        assertThat(update(Features.ELIGIBLE_LEADER_REPLICAS_VERSION, 1, 2, false).errorMessage())
                .endsWith("Can't downgrade to a newer version.");
        assertThat(update(Features.ELIGIBLE_LEADER_REPLICAS_VERSION, 1, 1, false).errorCode()).isZero();
        // Then
        assertThat(Features.elrEnabled(image)).isTrue();
    }

    @Test
    void transactionVersionIsFinalizedAt2AndCanBeLoweredAndRaisedAgain() {
        // Given: a new cluster, as Kafka 4.1 formats it
        assertThat(Features.transactionVersion(image)).isEqualTo((short) 2);

        // When: kafka-features downgrade to 1, disable, then upgrade to 2
        UpdateFeaturesResponseData lowered = update(Features.TRANSACTION_VERSION, 1, 2, false);
        short atOne = Features.transactionVersion(image);
        UpdateFeaturesResponseData disabled = update(Features.TRANSACTION_VERSION, 0, 2, false);
        short atZero = Features.transactionVersion(image);
        UpdateFeaturesResponseData raised = update(Features.TRANSACTION_VERSION, 2, 1, false);

        // Then
        assertThat(lowered.errorCode()).isZero();
        assertThat(atOne).isEqualTo((short) 1);
        assertThat(disabled.errorCode()).isZero();
        assertThat(atZero).isZero();
        assertThat(raised.errorCode()).isZero();
        assertThat(Features.transactionVersion(image)).isEqualTo((short) 2);
    }

    @Test
    void shareVersionStartsAt0AndKafkaFeaturesUpgradeTurnsShareGroupsOn() {
        // Given: a new cluster, as Kafka 4.1 formats it (SV_1 bootstraps only from metadata.version 4.2-IV0)
        assertThat(Features.shareVersionEnabled(image)).isFalse();
        assertThat(image.features()).doesNotContainKey(Features.SHARE_VERSION);

        // When: kafka-features upgrade --feature share.version=1, then a level Cairn does not support
        UpdateFeaturesResponseData upgraded = update(Features.SHARE_VERSION, 1, 1, false);
        UpdateFeaturesResponseData tooHigh = update(Features.SHARE_VERSION, 2, 1, false);

        // Then
        assertThat(upgraded.errorCode()).isZero();
        assertThat(Features.shareVersionEnabled(image)).isTrue();
        assertThat(tooHigh.errorMessage()).endsWith("Invalid update version 2 for feature share.version. Local "
                + "controller 1 only supports versions 0-1");

        // When: kafka-features disable --feature share.version
        assertThat(update(Features.SHARE_VERSION, 0, 2, false).errorCode()).isZero();
        // Then
        assertThat(Features.shareVersionEnabled(image)).isFalse();
    }

    @Test
    void unknownFeaturesLevelsOutOfRangeAndBadTypesAreRefused() {
        assertThat(update("streams.version", 1, 1, false).errorMessage()).endsWith("Invalid update version 1 for "
                + "feature streams.version. Local controller 1 does not support this feature.");
        assertThat(update(Features.TRANSACTION_VERSION, 3, 1, false).errorMessage()).endsWith("Invalid update "
                + "version 3 for feature transaction.version. Local controller 1 only supports versions 0-2");
        assertThat(update(Features.METADATA_VERSION, 26, 2, false).errorMessage())
                .endsWith("Local controller 1 only supports versions 27");
        assertThat(update(Features.ELIGIBLE_LEADER_REPLICAS_VERSION, 1, 7, false).errorMessage())
                .endsWith("The controller does not support the given upgrade type.");
        assertThat(update(Features.ELIGIBLE_LEADER_REPLICAS_VERSION, -1, 2, false).errorMessage())
                .endsWith("A feature version cannot be less than 0.");
        assertThat(update(Features.METADATA_VERSION, 27, 1, false).errorCode()).isZero();
    }

    @Test
    void kraftVersionIsNotChangedAtRunTime() {
        // When: a static quorum (kraft.version 0) asked to become dynamic, and kept at its level
        UpdateFeaturesResponseData upgrade = update(Features.KRAFT_VERSION, 1, 1, false);
        UpdateFeaturesResponseData same = update(Features.KRAFT_VERSION, 0, 1, false);

        // Then
        assertThat(upgrade.errorCode()).isEqualTo(Errors.INVALID_UPDATE_VERSION.code());
        assertThat(upgrade.errorMessage()).endsWith("Invalid update version 1 for feature kraft.version. Cairn does "
                + "not change kraft.version at run time: it is 0 as the quorum was formatted (static "
                + "controller.quorum.voters)");
        assertThat(same.errorCode()).isZero();
        assertThat(image.featureLevel(Features.KRAFT_VERSION)).isZero();
    }

    @Test
    void aNewClusterWithElrHasTheControllersMinInsyncReplicasAsItsClusterLevelConfig() {
        // Given: a controller whose own min.insync.replicas is 2, bootstrapping a new 4.1 cluster (ELR on)
        ControllerLogic controller = new ControllerLogic(ControllerSettings.defaults(1).withMinInsyncReplicas(2));

        // When
        List<ApiMessage> records = controller.bootstrapFeatures(MetadataImage.EMPTY);

        // Then: the cluster-level config first, as Kafka's controller writes it, so topics report it as a dynamic
        // cluster default
        assertThat(records.get(0)).isEqualTo(new ConfigRecord().setResourceType(ConfigResource.BROKER)
                .setResourceName("").setName("min.insync.replicas").setValue("2"));
        assertThat(records.subList(1, records.size())).allMatch(r -> r instanceof FeatureLevelRecord);
        MetadataImage bootstrapped = ControllerLogic.apply(MetadataImage.EMPTY, records);
        assertThat(bootstrapped.configs(ConfigResource.broker(""))).containsEntry("min.insync.replicas", "2");
        assertThat(Features.elrEnabled(bootstrapped)).isTrue();
    }

    @Test
    void aNewClusterWithoutElrWritesNoClusterLevelMinInsyncReplicas() {
        // Given
        Map<String, Short> levels = new HashMap<>(Features.bootstrapLevels());
        levels.put(Features.ELIGIBLE_LEADER_REPLICAS_VERSION, (short) 0);
        ControllerLogic controller = new ControllerLogic(ControllerSettings.defaults(1), levels);

        // When
        MetadataImage bootstrapped = ControllerLogic.apply(MetadataImage.EMPTY,
                controller.bootstrapFeatures(MetadataImage.EMPTY));

        // Then
        assertThat(bootstrapped.configs(ConfigResource.broker(""))).isEmpty();
    }

    @Test
    void enablingElrSetsTheClusterLevelMinInsyncReplicasAndRemovesEveryBrokerLevelOne() {
        // Given: ELR disabled, no cluster-level value, and brokers 1 and 7 with their own min.insync.replicas
        assertThat(update(Features.ELIGIBLE_LEADER_REPLICAS_VERSION, 0, 2, false).errorCode()).isZero();
        image = ControllerLogic.apply(image, List.of(
                new ConfigRecord().setResourceType(ConfigResource.BROKER).setResourceName("")
                        .setName("min.insync.replicas").setValue(null),
                new ConfigRecord().setResourceType(ConfigResource.BROKER).setResourceName("1")
                        .setName("min.insync.replicas").setValue("3"),
                new ConfigRecord().setResourceType(ConfigResource.BROKER).setResourceName("7")
                        .setName("min.insync.replicas").setValue("2"),
                new ConfigRecord().setResourceType(ConfigResource.BROKER).setResourceName("7")
                        .setName("message.max.bytes").setValue("2000")));
        assertThat(image.configs(ConfigResource.broker(""))).doesNotContainKey("min.insync.replicas");

        // When: a dry run, then kafka-features upgrade
        assertThat(update(Features.ELIGIBLE_LEADER_REPLICAS_VERSION, 1, 1, true).errorCode()).isZero();
        assertThat(image.configs(ConfigResource.broker("1"))).containsKey("min.insync.replicas");
        assertThat(update(Features.ELIGIBLE_LEADER_REPLICAS_VERSION, 1, 1, false).errorCode()).isZero();

        // Then: the controller's own value (1) cluster-wide, no broker-level value left, other keys kept
        assertThat(Features.elrEnabled(image)).isTrue();
        assertThat(image.configs(ConfigResource.broker(""))).containsEntry("min.insync.replicas", "1");
        assertThat(image.configs(ConfigResource.broker("1"))).doesNotContainKey("min.insync.replicas");
        assertThat(image.configs(ConfigResource.broker("7"))).containsOnlyKeys("message.max.bytes");
    }
}
