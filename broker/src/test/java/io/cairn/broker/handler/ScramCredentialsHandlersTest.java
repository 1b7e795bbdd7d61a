package io.cairn.broker.handler;

import static io.cairn.broker.handler.MetadataFixture.context;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import io.cairn.metadata.image.ScramCredential;
import io.cairn.metadata.image.ScramMechanism;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AlterUserScramCredentialsRequestData;
import io.cairn.wire.message.AlterUserScramCredentialsRequestData.ScramCredentialDeletion;
import io.cairn.wire.message.AlterUserScramCredentialsRequestData.ScramCredentialUpsertion;
import io.cairn.wire.message.AlterUserScramCredentialsResponseData;
import io.cairn.wire.message.AlterUserScramCredentialsResponseData.AlterUserScramCredentialsResult;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.DescribeUserScramCredentialsRequestData;
import io.cairn.wire.message.DescribeUserScramCredentialsRequestData.UserName;
import io.cairn.wire.message.DescribeUserScramCredentialsResponseData;
import io.cairn.wire.message.DescribeUserScramCredentialsResponseData.DescribeUserScramCredentialsResult;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** AlterUserScramCredentials forwarded to a real controller, DescribeUserScramCredentials from the image. */
class ScramCredentialsHandlersTest {

    @TempDir
    static Path dir;
    private static MetadataFixture fixture;

    @BeforeAll
    static void startMetadata() throws Exception {
        fixture = MetadataFixture.start(dir);
    }

    @AfterAll
    static void stopMetadata() {
        fixture.close();
    }

    private static AlterUserScramCredentialsResponseData alter(AlterUserScramCredentialsRequestData request)
            throws Exception {
        AlterUserScramCredentialsResponseData response = new AlterUserScramCredentialsHandler(fixture.node())
                .handle(context(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0), request).toCompletableFuture()
                .get(10, TimeUnit.SECONDS);
        return (AlterUserScramCredentialsResponseData) MetadataFixture.roundTrip(response,
                ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0, true);
    }

    private static DescribeUserScramCredentialsResponseData describe(String... users) throws Exception {
        DescribeUserScramCredentialsRequestData request = new DescribeUserScramCredentialsRequestData();
        for (String user : users) {
            request.users().add(new UserName().setName(user));
        }
        DescribeUserScramCredentialsResponseData response = new DescribeUserScramCredentialsHandler(fixture.node())
                .handle(context(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, 0), request).toCompletableFuture()
                .get(10, TimeUnit.SECONDS);
        return (DescribeUserScramCredentialsResponseData) MetadataFixture.roundTrip(response,
                ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, 0, true);
    }

    private static ScramCredentialUpsertion upsertion(String user, ScramMechanism mechanism, int iterations) {
        byte[] salt = "salt".getBytes(StandardCharsets.UTF_8);
        return new ScramCredentialUpsertion().setName(user).setMechanism(mechanism.type()).setIterations(iterations)
                .setSalt(salt).setSaltedPassword(mechanism.saltedPassword("secret", salt, iterations));
    }

    @Test
    void anAlterationCommittedByTheControllerIsInTheImageAndDescribedFromIt() throws Exception {
        // Given
        AlterUserScramCredentialsRequestData request = new AlterUserScramCredentialsRequestData()
                .setUpsertions(new ArrayList<>(List.of(upsertion("alice", ScramMechanism.SCRAM_SHA_256, 8192),
                        upsertion("bob", ScramMechanism.SCRAM_SHA_512, 99))));

        // When
        AlterUserScramCredentialsResponseData altered = alter(request);

        // Then
        assertThat(altered.results()).extracting(AlterUserScramCredentialsResult::user,
                AlterUserScramCredentialsResult::errorCode).containsExactlyInAnyOrder(
                        tuple("alice", Errors.NONE.code()),
                        tuple("bob", Errors.UNACCEPTABLE_CREDENTIAL.code()));
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(fixture.node().currentImage().scram())
                .containsKey("alice"));
        ScramCredential stored = fixture.node().currentImage().scram().get("alice")
                .get(ScramMechanism.SCRAM_SHA_256.type());
        assertThat(stored.iterations()).isEqualTo(8192);
        DescribeUserScramCredentialsResponseData described = describe("alice", "bob");
        assertThat(described.errorCode()).isZero();
        assertThat(described.results()).hasSize(2);
        DescribeUserScramCredentialsResult alice = described.results().get(0);
        assertThat(alice.user()).isEqualTo("alice");
        assertThat(alice.errorCode()).isZero();
        assertThat(alice.credentialInfos()).singleElement().satisfies(info -> {
            assertThat(info.mechanism()).isEqualTo(ScramMechanism.SCRAM_SHA_256.type());
            assertThat(info.iterations()).isEqualTo(8192);
        });
        assertThat(described.results().get(1).errorCode()).isEqualTo(Errors.RESOURCE_NOT_FOUND.code());
    }

    @Test
    void aWholeRequestFailureGivesEveryUserTheErrorInNameOrderAsKafkasErrorResponse() {
        // Given
        AlterUserScramCredentialsRequestData alterRequest = new AlterUserScramCredentialsRequestData()
                .setDeletions(new ArrayList<>(List.of(new ScramCredentialDeletion().setName("zed")
                        .setMechanism((byte) 1)))).setUpsertions(new ArrayList<>(List.of(
                                upsertion("amy", ScramMechanism.SCRAM_SHA_256, 4096),
                                upsertion("zed", ScramMechanism.SCRAM_SHA_512, 4096))));
        DescribeUserScramCredentialsRequestData describeRequest = new DescribeUserScramCredentialsRequestData();
        describeRequest.users().add(new UserName().setName("amy"));

        // When
        AlterUserScramCredentialsResponseData altered = new AlterUserScramCredentialsHandler(fixture.node())
                .errorResponse(context(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0), alterRequest,
                        Errors.REQUEST_TIMED_OUT);
        DescribeUserScramCredentialsResponseData described = new DescribeUserScramCredentialsHandler(fixture.node())
                .errorResponse(context(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, 0), describeRequest,
                        Errors.CLUSTER_AUTHORIZATION_FAILED);

        // Then
        assertThat(altered.results()).extracting(AlterUserScramCredentialsResult::user).containsExactly("amy", "zed");
        assertThat(altered.results()).allSatisfy(r -> assertThat(r.errorCode())
                .isEqualTo(Errors.REQUEST_TIMED_OUT.code()));
        assertThat(described.errorCode()).isEqualTo(Errors.CLUSTER_AUTHORIZATION_FAILED.code());
        assertThat(described.results()).singleElement().satisfies(r -> assertThat(r.errorCode())
                .isEqualTo(Errors.CLUSTER_AUTHORIZATION_FAILED.code()));
    }
}
