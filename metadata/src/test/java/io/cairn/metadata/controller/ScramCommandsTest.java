package io.cairn.metadata.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.ScramCredential;
import io.cairn.metadata.image.ScramMechanism;
import io.cairn.metadata.record.RemoveUserScramCredentialRecord;
import io.cairn.metadata.record.UserScramCredentialRecord;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AlterUserScramCredentialsRequestData;
import io.cairn.wire.message.AlterUserScramCredentialsRequestData.ScramCredentialDeletion;
import io.cairn.wire.message.AlterUserScramCredentialsRequestData.ScramCredentialUpsertion;
import io.cairn.wire.message.AlterUserScramCredentialsResponseData;
import io.cairn.wire.message.AlterUserScramCredentialsResponseData.AlterUserScramCredentialsResult;
import io.cairn.wire.message.DescribeUserScramCredentialsRequestData;
import io.cairn.wire.message.DescribeUserScramCredentialsRequestData.UserName;
import io.cairn.wire.message.DescribeUserScramCredentialsResponseData;
import io.cairn.wire.message.DescribeUserScramCredentialsResponseData.DescribeUserScramCredentialsResult;
import io.cairn.wire.protocol.ApiMessage;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** AlterUserScramCredentials and DescribeUserScramCredentials with Kafka's ScramControlManager/ScramImage rules. */
class ScramCommandsTest {

    private static final byte SHA_256 = 1;
    private static final byte SHA_512 = 2;
    private static final byte[] SALT = "salt".getBytes(StandardCharsets.UTF_8);

    private final ControllerLogic logic = new ControllerLogic(ControllerSettings.defaults(1));
    private MetadataImage image = MetadataImage.EMPTY;
    private List<ApiMessage> lastRecords = List.of();

    private static ScramCredentialUpsertion upsert(String user, byte mechanism, int iterations, String password) {
        ScramMechanism scram = ScramMechanism.forType(mechanism);
        byte[] salted = scram == null ? new byte[32] : scram.saltedPassword(password, SALT, Math.max(iterations, 1));
        return new ScramCredentialUpsertion().setName(user).setMechanism(mechanism).setIterations(iterations)
                .setSalt(SALT).setSaltedPassword(salted);
    }

    private static ScramCredentialDeletion delete(String user, byte mechanism) {
        return new ScramCredentialDeletion().setName(user).setMechanism(mechanism);
    }

    private Map<String, AlterUserScramCredentialsResult> alter(List<ScramCredentialDeletion> deletions,
            List<ScramCredentialUpsertion> upsertions) {
        AlterUserScramCredentialsRequestData request = new AlterUserScramCredentialsRequestData()
                .setDeletions(new ArrayList<>(deletions)).setUpsertions(new ArrayList<>(upsertions));
        ControllerResult<? extends ApiMessage> result = logic.handle(image, request, b -> true);
        lastRecords = result.records();
        image = ControllerLogic.apply(image, result.records());
        return ((AlterUserScramCredentialsResponseData) result.response()).results().stream()
                .collect(Collectors.toMap(AlterUserScramCredentialsResult::user, Function.identity()));
    }

    private Map<String, DescribeUserScramCredentialsResult> describe(String... users) {
        DescribeUserScramCredentialsRequestData request = new DescribeUserScramCredentialsRequestData();
        if (users.length == 0) {
            request.setUsers(null);
        } else {
            for (String user : users) {
                request.users().add(new UserName().setName(user));
            }
        }
        DescribeUserScramCredentialsResponseData response = ScramCommands.describe(image, request);
        assertThat(response.errorCode()).isZero();
        return response.results().stream()
                .collect(Collectors.toMap(DescribeUserScramCredentialsResult::user, Function.identity()));
    }

    @Test
    void anUpsertionStoresTheKeysDerivedFromTheSaltedPasswordAndDescribeShowsMechanismAndIterations() {
        // When
        Map<String, AlterUserScramCredentialsResult> results = alter(List.of(),
                List.of(upsert("alice", SHA_256, 8192, "alice-secret"), upsert("bob", SHA_512, 4096, "b")));

        // Then
        assertThat(results.get("alice").errorCode()).isZero();
        assertThat(results.get("bob").errorCode()).isZero();
        ScramCredential alice = image.scram().get("alice").get(SHA_256);
        byte[] salted = ScramMechanism.SCRAM_SHA_256.saltedPassword("alice-secret", SALT, 8192);
        assertThat(alice.storedKey()).isEqualTo(ScramMechanism.SCRAM_SHA_256.storedKey(
                ScramMechanism.SCRAM_SHA_256.clientKey(salted)));
        assertThat(alice.serverKey()).isEqualTo(ScramMechanism.SCRAM_SHA_256.serverKey(salted));
        assertThat(alice.salt()).isEqualTo(SALT);
        assertThat(lastRecords).hasSize(2).allMatch(r -> r instanceof UserScramCredentialRecord);
        Map<String, DescribeUserScramCredentialsResult> described = describe();
        assertThat(described.keySet()).containsExactlyInAnyOrder("alice", "bob");
        assertThat(described.get("alice").credentialInfos()).singleElement().satisfies(info -> {
            assertThat(info.mechanism()).isEqualTo(SHA_256);
            assertThat(info.iterations()).isEqualTo(8192);
        });
    }

    @Test
    void invalidAlterationsGetKafkaErrorCodesAndMessagesPerUser() {
        // Given
        alter(List.of(), List.of(upsert("carol", SHA_256, 4096, "c")));

        // When
        Map<String, AlterUserScramCredentialsResult> results = alter(List.of(delete("dave", SHA_256),
                delete("", SHA_256), delete("carol", SHA_512)), List.of(upsert("erin", (byte) 3, 4096, "e"),
                upsert("frank", SHA_256, 4095, "f"), upsert("grace", SHA_512, 16385, "g"),
                upsert("heidi", SHA_256, 16384, "h"), upsert("heidi", SHA_512, 4096, "h")));

        // Then
        assertThat(results).hasSize(7);
        assertResult(results.get("dave"), Errors.RESOURCE_NOT_FOUND,
                "Attempt to delete a user credential that does not exist");
        assertResult(results.get(""), Errors.UNACCEPTABLE_CREDENTIAL, "Username must not be empty");
        assertResult(results.get("carol"), Errors.RESOURCE_NOT_FOUND,
                "Attempt to delete a user credential that does not exist");
        assertResult(results.get("erin"), Errors.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism");
        assertResult(results.get("frank"), Errors.UNACCEPTABLE_CREDENTIAL, "Too few iterations");
        assertResult(results.get("grace"), Errors.UNACCEPTABLE_CREDENTIAL, "Too many iterations");
        assertResult(results.get("heidi"), Errors.DUPLICATE_RESOURCE,
                "A user credential cannot be altered twice in the same request");
        assertThat(lastRecords).isEmpty();
        assertThat(image.scram()).containsOnlyKeys("carol");
    }

    @Test
    void aDeletionAndAnUpsertionOfOneUserInOneRequestAreADuplicateAndOthersStillApply() {
        // Given
        alter(List.of(), List.of(upsert("ivan", SHA_256, 4096, "i")));

        // When
        Map<String, AlterUserScramCredentialsResult> results = alter(List.of(delete("ivan", SHA_256)),
                List.of(upsert("ivan", SHA_512, 4096, "i"), upsert("judy", SHA_512, 4096, "j")));

        // Then
        assertResult(results.get("ivan"), Errors.DUPLICATE_RESOURCE,
                "A user credential cannot be altered twice in the same request");
        assertThat(results.get("judy").errorCode()).isZero();
        assertThat(image.scram().get("ivan")).containsOnlyKeys(SHA_256);
        assertThat(image.scram()).containsKey("judy");
    }

    @Test
    void deletingTheLastCredentialRemovesTheUserAndDescribeThenSaysItDoesNotExist() {
        // Given
        alter(List.of(), List.of(upsert("kim", SHA_256, 4096, "k")));
        alter(List.of(), List.of(upsert("kim", SHA_512, 4096, "k")));

        // When
        Map<String, AlterUserScramCredentialsResult> first = alter(List.of(delete("kim", SHA_256)), List.of());
        Map<String, DescribeUserScramCredentialsResult> between = describe("kim");
        Map<String, AlterUserScramCredentialsResult> second = alter(List.of(delete("kim", SHA_512)), List.of());

        // Then
        assertThat(first.get("kim").errorCode()).isZero();
        assertThat(second.get("kim").errorCode()).isZero();
        assertThat(lastRecords).singleElement().isInstanceOf(RemoveUserScramCredentialRecord.class);
        assertThat(between.get("kim").credentialInfos()).singleElement()
                .satisfies(info -> assertThat(info.mechanism()).isEqualTo(SHA_512));
        assertThat(image.scram()).doesNotContainKey("kim");
        DescribeUserScramCredentialsResult gone = describe("kim").get("kim");
        assertThat(gone.errorCode()).isEqualTo(Errors.RESOURCE_NOT_FOUND.code());
        assertThat(gone.errorMessage()).isEqualTo("Attempt to describe a user credential that does not exist: kim");
    }

    @Test
    void describingAUserTwiceIsADuplicateResource() {
        // Given
        alter(List.of(), List.of(upsert("lee", SHA_256, 4096, "l")));

        // When
        Map<String, DescribeUserScramCredentialsResult> described = describe("lee", "lee", "nobody");

        // Then
        assertThat(described).hasSize(2);
        assertThat(described.get("lee").errorCode()).isEqualTo(Errors.DUPLICATE_RESOURCE.code());
        assertThat(described.get("lee").errorMessage())
                .isEqualTo("Cannot describe SCRAM credentials for the same user twice in a single request: lee");
        assertThat(described.get("nobody").errorCode()).isEqualTo(Errors.RESOURCE_NOT_FOUND.code());
    }

    private static void assertResult(AlterUserScramCredentialsResult result, Errors error, String message) {
        assertThat(result.errorCode()).as(result.user()).isEqualTo(error.code());
        assertThat(result.errorMessage()).as(result.user()).isEqualTo(message);
    }
}
