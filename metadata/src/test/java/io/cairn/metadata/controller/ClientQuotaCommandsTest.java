package io.cairn.metadata.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.metadata.image.ClientQuotaEntity;
import io.cairn.metadata.image.ImageRecords;
import io.cairn.metadata.image.MetadataDelta;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.record.ClientQuotaRecord;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AlterClientQuotasRequestData;
import io.cairn.wire.message.AlterClientQuotasRequestData.EntityData;
import io.cairn.wire.message.AlterClientQuotasRequestData.EntryData;
import io.cairn.wire.message.AlterClientQuotasRequestData.OpData;
import io.cairn.wire.message.AlterClientQuotasResponseData;
import io.cairn.wire.message.DescribeClientQuotasRequestData;
import io.cairn.wire.message.DescribeClientQuotasRequestData.ComponentData;
import io.cairn.wire.message.DescribeClientQuotasResponseData;
import io.cairn.wire.protocol.ApiMessage;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** AlterClientQuotas through ControllerLogic and DescribeClientQuotas from the image, with Kafka's rules. */
class ClientQuotaCommandsTest {

    private final ControllerLogic logic = new ControllerLogic(ControllerSettings.defaults(1));
    private MetadataImage image = MetadataImage.EMPTY;
    private List<ApiMessage> lastRecords = List.of();

    private static List<EntityData> entity(String... typeAndName) {
        List<EntityData> entity = new ArrayList<>();
        for (int i = 0; i < typeAndName.length; i += 2) {
            entity.add(new EntityData().setEntityType(typeAndName[i]).setEntityName(typeAndName[i + 1]));
        }
        return entity;
    }

    private static OpData set(String key, double value) {
        return new OpData().setKey(key).setValue(value);
    }

    private static OpData remove(String key) {
        return new OpData().setKey(key).setRemove(true);
    }

    private AlterClientQuotasResponseData alter(boolean validateOnly, EntryData... entries) {
        AlterClientQuotasRequestData request = new AlterClientQuotasRequestData()
                .setEntries(new ArrayList<>(Arrays.asList(entries))).setValidateOnly(validateOnly);
        ControllerResult<? extends ApiMessage> result = logic.handle(image, request, b -> true);
        lastRecords = result.records();
        image = ControllerLogic.apply(image, result.records());
        return (AlterClientQuotasResponseData) result.response();
    }

    private static EntryData entry(List<EntityData> entity, OpData... ops) {
        return new EntryData().setEntity(entity).setOps(new ArrayList<>(Arrays.asList(ops)));
    }

    private static String outcome(AlterClientQuotasResponseData response, int index) {
        AlterClientQuotasResponseData.EntryData e = response.entries().get(index);
        return Errors.forCode(e.errorCode()) + ": " + e.errorMessage();
    }

    private DescribeClientQuotasResponseData describe(boolean strict, ComponentData... components) {
        return ClientQuotaCommands.describe(image, new DescribeClientQuotasRequestData()
                .setComponents(new ArrayList<>(Arrays.asList(components))).setStrict(strict));
    }

    private static ComponentData component(String type, byte matchType, String match) {
        return new ComponentData().setEntityType(type).setMatchType(matchType).setMatch(match);
    }

    private static Map<String, String> entities(DescribeClientQuotasResponseData response) {
        Map<String, String> shown = new HashMap<>();
        response.entries().forEach(e -> {
            Map<String, String> entity = new HashMap<>();
            e.entity().forEach(d -> entity.put(d.entityType(), d.entityName()));
            Map<String, Double> values = new HashMap<>();
            e.values().forEach(v -> values.put(v.key(), v.value()));
            shown.put(entity.toString(), values.toString());
        });
        return shown;
    }

    @Test
    void aQuotaSetOnAUserIsOneRecordAndDescribedExactly() {
        // When
        AlterClientQuotasResponseData response = alter(false,
                entry(entity("user", "alice"), set("producer_byte_rate", 1024), set("consumer_byte_rate", 2048)));

        // Then
        assertThat(outcome(response, 0)).isEqualTo("NONE: null");
        assertThat(lastRecords).hasSize(2).allSatisfy(r -> assertThat(r).isInstanceOf(ClientQuotaRecord.class));
        assertThat(image.clientQuotas()).containsEntry(ClientQuotaEntity.of("user", "alice"),
                Map.of("producer_byte_rate", 1024.0, "consumer_byte_rate", 2048.0));
        assertThat(entities(describe(false, component("user", ClientQuotaCommands.MATCH_TYPE_EXACT, "alice"))))
                .containsOnlyKeys("{user=alice}");
    }

    @Test
    void settingTheSameValueAgainOrRemovingAMissingKeyWritesNoRecord() {
        // Given
        alter(false, entry(entity("user", "alice"), set("producer_byte_rate", 1024)));

        // When
        AlterClientQuotasResponseData response = alter(false,
                entry(entity("user", "alice"), set("producer_byte_rate", 1024), remove("consumer_byte_rate")));

        // Then
        assertThat(outcome(response, 0)).isEqualTo("NONE: null");
        assertThat(lastRecords).isEmpty();
    }

    @Test
    void removingTheLastKeyRemovesTheEntity() {
        // Given
        alter(false, entry(entity("client-id", "c1"), set("producer_byte_rate", 1024)));

        // When
        alter(false, entry(entity("client-id", "c1"), remove("producer_byte_rate")));

        // Then
        assertThat(lastRecords).singleElement().satisfies(r -> assertThat(((ClientQuotaRecord) r).remove()).isTrue());
        assertThat(image.clientQuotas()).isEmpty();
    }

    @Test
    void validateOnlyAnswersWithoutRecords() {
        // When
        AlterClientQuotasResponseData response = alter(true,
                entry(entity("user", null), set("producer_byte_rate", 1024)));

        // Then
        assertThat(outcome(response, 0)).isEqualTo("NONE: null");
        assertThat(lastRecords).isEmpty();
        assertThat(image.clientQuotas()).isEmpty();
    }

    @Test
    void badEntitiesAndKeysGetKafkasInvalidRequestMessages() {
        // When
        AlterClientQuotasResponseData response = alter(false,
                entry(entity(), set("producer_byte_rate", 1)),
                entry(entity("group", "g"), set("producer_byte_rate", 1)),
                entry(entity("user", ""), set("producer_byte_rate", 1)),
                entry(entity("ip", "127.0.0.1", "user", "bob"), set("connection_creation_rate", 1)),
                entry(entity("user", "carol"), set("connection_creation_rate", 1)),
                entry(entity("ip", "127.0.0.1"), set("producer_byte_rate", 1)),
                entry(entity("user", "dave"), set("producer_byte_rate", 0)),
                entry(entity("user", "erin"), set("producer_byte_rate", 1.5)),
                entry(entity("ip", "10.0.0.1"), set("connection_creation_rate", 3.0e9)),
                entry(entity("user", "frank"), set("request_percentage", 1.5)),
                entry(entity("user", "gina"), set("producer_byte_rate", 1), set("producer_byte_rate", 2)));

        // Then
        assertThat(lastRecords).hasSize(1);
        assertThat(response.entries()).extracting(e -> Errors.forCode(e.errorCode()) + ": " + e.errorMessage())
                .containsExactly(
                        "INVALID_REQUEST: Invalid empty client quota entity",
                        "INVALID_REQUEST: Unhandled client quota entity type: group",
                        "INVALID_REQUEST: Empty user not supported",
                        "INVALID_REQUEST: Invalid quota entity combination, IP entity shouldnot be combined with "
                                + "User or ClientId",
                        "INVALID_REQUEST: Invalid configuration key connection_creation_rate",
                        "INVALID_REQUEST: Invalid configuration key producer_byte_rate",
                        "INVALID_REQUEST: Quota producer_byte_rate must be greater than 0",
                        "INVALID_REQUEST: producer_byte_rate cannot be a fractional value.",
                        "INVALID_REQUEST: Proposed value for connection_creation_rate is too large for an INT.",
                        "NONE: null",
                        "INVALID_REQUEST: Ignoring duplicate entity ClientQuotaEntity(entries={user=gina})");
    }

    @Test
    void describeMatchesExactDefaultAndSpecifiedComponentsAndStrictLeavesOutWiderEntities() {
        // Given
        alter(false,
                entry(entity("user", "alice"), set("producer_byte_rate", 1)),
                entry(entity("user", null), set("producer_byte_rate", 2)),
                entry(entity("user", "alice", "client-id", "c1"), set("consumer_byte_rate", 3)),
                entry(entity("client-id", null), set("request_percentage", 50)),
                entry(entity("ip", null), set("connection_creation_rate", 10)));

        // When
        Map<String, String> specifiedUsers = entities(describe(false,
                component("user", ClientQuotaCommands.MATCH_TYPE_SPECIFIED, null)));
        Map<String, String> strictUsers = entities(describe(true,
                component("user", ClientQuotaCommands.MATCH_TYPE_SPECIFIED, null)));
        Map<String, String> defaultUser = entities(describe(true,
                component("user", ClientQuotaCommands.MATCH_TYPE_DEFAULT, null)));
        Map<String, String> all = entities(describe(false));

        // Then
        assertThat(specifiedUsers).containsOnlyKeys("{user=alice}", "{user=null}", "{client-id=c1, user=alice}");
        assertThat(strictUsers).containsOnlyKeys("{user=alice}", "{user=null}");
        assertThat(defaultUser).containsExactly(Map.entry("{user=null}", "{producer_byte_rate=2.0}"));
        assertThat(all).hasSize(5).containsEntry("{ip=null}", "{connection_creation_rate=10.0}");
    }

    @Test
    void badFiltersFailTheWholeDescribeWithKafkasErrors() {
        // When
        List<String> outcomes = List.of(
                describe(false, component("", ClientQuotaCommands.MATCH_TYPE_SPECIFIED, null)),
                describe(false, component("user", ClientQuotaCommands.MATCH_TYPE_SPECIFIED, null),
                        component("user", ClientQuotaCommands.MATCH_TYPE_DEFAULT, null)),
                describe(false, component("group", ClientQuotaCommands.MATCH_TYPE_SPECIFIED, null)),
                describe(false, component("user", ClientQuotaCommands.MATCH_TYPE_EXACT, null)),
                describe(false, component("user", ClientQuotaCommands.MATCH_TYPE_DEFAULT, "x")),
                describe(false, component("user", (byte) 7, null)),
                describe(false, component("ip", ClientQuotaCommands.MATCH_TYPE_SPECIFIED, null),
                        component("client-id", ClientQuotaCommands.MATCH_TYPE_SPECIFIED, null)))
                .stream().map(r -> Errors.forCode(r.errorCode()) + ": " + r.errorMessage()
                        + (r.entries() == null ? "" : " entries")).toList();

        // Then
        assertThat(outcomes).containsExactly(
                "INVALID_REQUEST: Invalid empty entity type.",
                "INVALID_REQUEST: Entity type user cannot appear more than once in the filter.",
                "UNSUPPORTED_VERSION: Unsupported entity type group",
                "INVALID_REQUEST: Request specified MATCH_TYPE_EXACT, but set match string to null.",
                "INVALID_REQUEST: Request specified MATCH_TYPE_DEFAULT, but also specified a match string.",
                "INVALID_REQUEST: Unknown match type 7",
                "INVALID_REQUEST: Invalid entity filter component combination. IP filter component should not be "
                        + "used with user or clientId filter component.");
    }

    @Test
    void quotasSurviveASnapshotRoundTrip() {
        // Given
        alter(false, entry(entity("user", "alice", "client-id", null), set("producer_byte_rate", 1024)),
                entry(entity("ip", "10.0.0.1"), set("connection_creation_rate", 5)));

        // When
        MetadataImage rebuilt = new MetadataDelta(MetadataImage.EMPTY).replayAll(ImageRecords.of(image))
                .apply(image.offset());

        // Then
        assertThat(rebuilt.clientQuotas()).isEqualTo(image.clientQuotas()).hasSize(2);
    }
}
