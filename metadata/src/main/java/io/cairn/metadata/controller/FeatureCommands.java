package io.cairn.metadata.controller;

import io.cairn.metadata.image.Features;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.record.FeatureLevelRecord;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.UpdateFeaturesRequestData;
import io.cairn.wire.message.UpdateFeaturesResponseData;
import io.cairn.wire.protocol.ApiMessage;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * UpdateFeatures on the controller ({@code kafka-features upgrade/downgrade/disable}), with the checks and messages
 * of Kafka's {@code FeatureControlManager.updateFeatures}: each update in turn, the first invalid one failing the
 * whole request with INVALID_UPDATE_VERSION ("The update failed for all features since the following feature had an
 * error: Invalid update version L for feature F. reason"): an unknown upgrade type, a negative level, a feature or
 * level this controller does not support ({@link Features#known()}), a lower level without a downgrade type, a
 * higher one with a downgrade type, a missing dependency. Otherwise one {@code FeatureLevelRecord} per update (level
 * 0 removes the feature), none with {@code validateOnly}. Disabling eligible leader replicas leaves the ELRs to be
 * cleared by each partition's next change, as Kafka 4.1. The answer carries the top-level outcome and, for each
 * feature, its code with the code's default message (the codec drops the per-feature results of a v2 response).
 * Expects the upgrade type of v1+ (the broker converts v0's AllowDowngrade). Enabling eligible leader replicas writes
 * the safety configs of {@link ConfigCommands#elrSafetyRecords} first, as Kafka does. Stateless, thread-safe.
 */
final class FeatureCommands {

    private static final Logger LOGGER = LogManager.getLogger(FeatureCommands.class);
    private static final byte UPGRADE = 1;
    private static final byte SAFE_DOWNGRADE = 2;
    private static final byte UNSAFE_DOWNGRADE = 3;

    private FeatureCommands() {
    }

    /**
     * @param staticMinInsyncReplicas the active controller's own {@code min.insync.replicas}: the cluster-level value
     *                                written when an update enables eligible leader replicas and there is none
     */
    static ControllerResult<UpdateFeaturesResponseData> updateFeatures(MetadataImage image,
            UpdateFeaturesRequestData request, int nodeId, int staticMinInsyncReplicas) {
        Map<String, Short> proposed = new HashMap<>(image.features());
        request.featureUpdates().forEach(u -> proposed.put(u.feature(), (short) Math.max(u.maxVersionLevel(), 0)));
        List<ApiMessage> records = new ArrayList<>();
        String error = null;
        for (UpdateFeaturesRequestData.FeatureUpdateKey update : request.featureUpdates()) {
            error = update(image, update, nodeId, proposed, records);
            if (error != null) {
                LOGGER.warn(error);
                break;
            }
        }
        Errors code = error == null ? Errors.NONE : Errors.INVALID_UPDATE_VERSION;
        UpdateFeaturesResponseData response = new UpdateFeaturesResponseData().setThrottleTimeMs(0)
                .setErrorCode(code.code()).setErrorMessage(error == null ? null
                        : "The update failed for all features since the following feature had an error: " + error);
        // As Kafka's QuorumController: each feature gets the code and the code's default message.
        String featureMessage = error == null ? "NONE" : code.message();
        for (UpdateFeaturesRequestData.FeatureUpdateKey update : request.featureUpdates()) {
            response.results().add(new UpdateFeaturesResponseData.UpdatableFeatureResult()
                    .setFeature(update.feature()).setErrorCode(code.code()).setErrorMessage(featureMessage));
        }
        boolean apply = error == null && !request.validateOnly();
        if (apply && proposed.getOrDefault(Features.ELIGIBLE_LEADER_REPLICAS_VERSION, (short) 0) > 0
                && request.featureUpdates().stream().anyMatch(u -> u.feature()
                        .equals(Features.ELIGIBLE_LEADER_REPLICAS_VERSION) && u.maxVersionLevel() > 0)) {
            // Kafka's ConfigurationControlManager.updateFeatures: the ELR safety configs ahead of the feature record.
            List<ApiMessage> safety = ConfigCommands.elrSafetyRecords(image, staticMinInsyncReplicas);
            if (!safety.isEmpty()) {
                LOGGER.info("Enabling eligible leader replicas with the config records {}", safety);
            }
            safety.addAll(records);
            records = safety;
        }
        return new ControllerResult<>(apply ? records : List.of(), response);
    }

    /** The reason the update is refused, or null after adding its record. */
    private static String update(MetadataImage image, UpdateFeaturesRequestData.FeatureUpdateKey update, int nodeId,
                                 Map<String, Short> proposed, List<ApiMessage> records) {
        String name = update.feature();
        short level = (short) Math.max(update.maxVersionLevel(), 0);
        byte type = update.upgradeType();
        if (type != UPGRADE && type != SAFE_DOWNGRADE && type != UNSAFE_DOWNGRADE) {
            return invalid(name, update.maxVersionLevel(), "The controller does not support the given upgrade type.");
        }
        if (update.maxVersionLevel() < 0) {
            return invalid(name, update.maxVersionLevel(), "A feature version cannot be less than 0.");
        }
        Features.Range range = Features.known().get(name);
        if (range == null) {
            return invalid(name, level, "Local controller " + nodeId + " does not support this feature.");
        }
        if (!range.contains(level)) {
            String supported = range.min() == range.max() ? Short.toString(range.min())
                    : range.min() + "-" + range.max();
            return invalid(name, level, "Local controller " + nodeId + " only supports versions " + supported);
        }
        short current = image.featureLevel(name);
        if (name.equals(Features.KRAFT_VERSION) && level != current) {
            // Kafka 4.1 upgrades a static quorum to a dynamic one through its Raft client; Cairn's quorum keeps the
            // kind it was formatted with (its static voters are configuration, not a voter set in the log).
            return invalid(name, level, "Cairn does not change kraft.version at run time: it is " + current
                    + " as the quorum was formatted (" + (current >= 1 ? "dynamic" : "static controller.quorum.voters")
                    + ")");
        }
        if (level < current && type == UPGRADE) {
            return invalid(name, level, "Can't downgrade the version of this feature without setting the upgrade "
                    + "type to either safe or unsafe downgrade.");
        }
        if (level > current && type != UPGRADE) {
            return invalid(name, level, "Can't downgrade to a newer version.");
        }
        String dependency = Features.invalidLevel(name, level, proposed);
        if (dependency != null) {
            return invalid(name, level, dependency);
        }
        records.add(new FeatureLevelRecord().setName(name).setFeatureLevel(level));
        return null;
    }

    private static String invalid(String name, short level, String reason) {
        return "Invalid update version " + level + " for feature " + name + ". " + reason;
    }
}
