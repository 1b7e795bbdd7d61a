package io.cairn.broker.handler;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.MetadataListener;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AddRaftVoterRequestData;
import io.cairn.wire.message.AddRaftVoterResponseData;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.RemoveRaftVoterRequestData;
import io.cairn.wire.message.RemoveRaftVoterResponseData;
import io.cairn.wire.protocol.ApiMessage;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * AddRaftVoter and RemoveRaftVoter on the broker: forwarded to the controller as they came, its answer passed on
 * with no throttle time, and a controller that cannot be reached answered with the request's error response.
 */
class RaftVoterHandlersTest {

    private final FakeController controller = new FakeController();

    @Test
    void addShouldForwardTheRequestAndPassOnTheControllersAnswer() throws Exception {
        // Given
        controller.answer = CompletableFuture.completedFuture(new AddRaftVoterResponseData().setThrottleTimeMs(7)
                .setErrorCode(Errors.DUPLICATE_VOTER.code()).setErrorMessage("already a voter"));
        AddRaftVoterRequestData request = new AddRaftVoterRequestData().setClusterId("c").setVoterId(4)
                .setTimeoutMs(30_000);

        // When
        AddRaftVoterResponseData response = new AddRaftVoterHandler(controller)
                .handle(MetadataFixture.context(ApiKey.ADD_RAFT_VOTER, 0), request).toCompletableFuture()
                .get(10, TimeUnit.SECONDS);

        // Then
        assertThat(controller.forwarded).containsExactly(request);
        assertThat(response.errorCode()).isEqualTo(Errors.DUPLICATE_VOTER.code());
        assertThat(response.errorMessage()).isEqualTo("already a voter");
        assertThat(response.throttleTimeMs()).isZero();
    }

    @Test
    void addShouldAnswerTheControllersFailureAsATopLevelError() throws Exception {
        // Given
        controller.answer = CompletableFuture.failedFuture(Errors.NOT_CONTROLLER.exception("no controller"));

        // When
        AddRaftVoterResponseData response = new AddRaftVoterHandler(controller)
                .handle(MetadataFixture.context(ApiKey.ADD_RAFT_VOTER, 0), new AddRaftVoterRequestData())
                .toCompletableFuture().get(10, TimeUnit.SECONDS);

        // Then
        assertThat(response.errorCode()).isEqualTo(Errors.NOT_CONTROLLER.code());
        assertThat(response.errorMessage()).isEqualTo(Errors.NOT_CONTROLLER.message());
    }

    @Test
    void removeShouldForwardTheRequestAndPassOnTheControllersAnswer() throws Exception {
        // Given
        controller.answer = CompletableFuture.completedFuture(new RemoveRaftVoterResponseData()
                .setErrorCode(Errors.VOTER_NOT_FOUND.code()).setErrorMessage("not a voter"));
        RemoveRaftVoterRequestData request = new RemoveRaftVoterRequestData().setClusterId("c").setVoterId(9);

        // When
        RemoveRaftVoterResponseData response = new RemoveRaftVoterHandler(controller)
                .handle(MetadataFixture.context(ApiKey.REMOVE_RAFT_VOTER, 0), request).toCompletableFuture()
                .get(10, TimeUnit.SECONDS);

        // Then
        assertThat(controller.forwarded).containsExactly(request);
        assertThat(response.errorCode()).isEqualTo(Errors.VOTER_NOT_FOUND.code());
        assertThat(response.errorMessage()).isEqualTo("not a voter");
    }

    @Test
    void bothShouldServeVersion0Only() {
        // Then
        assertThat(new AddRaftVoterHandler(controller).minVersion()).isZero();
        assertThat(new AddRaftVoterHandler(controller).maxVersion()).isZero();
        assertThat(new RemoveRaftVoterHandler(controller).minVersion()).isZero();
        assertThat(new RemoveRaftVoterHandler(controller).maxVersion()).isZero();
    }

    /** A metadata node whose controller answers every request with {@link #answer}. */
    private static final class FakeController implements MetadataNode {
        private final List<ApiMessage> forwarded = new ArrayList<>();
        private CompletableFuture<? extends ApiMessage> answer;

        @Override
        public MetadataImage currentImage() {
            return MetadataImage.EMPTY;
        }

        @Override
        public MetadataImage subscribe(MetadataListener listener) {
            return MetadataImage.EMPTY;
        }

        @Override
        public void unsubscribe(MetadataListener listener) {
        }

        @Override
        public CompletableFuture<ApiMessage> submit(ApiMessage request) {
            forwarded.add(request);
            return answer.thenApply(ApiMessage.class::cast);
        }

        @Override
        public String clusterId() {
            return "c";
        }

        @Override
        public int nodeId() {
            return 1;
        }

        @Override
        public boolean isActiveController() {
            return false;
        }

        @Override
        public int activeControllerId() {
            return 2;
        }

        @Override
        public void close() {
        }
    }
}
