package io.cairn.wire.error;

import io.cairn.wire.protocol.MessageDecodeException;
import org.apache.kafka.common.errors.RetriableException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link Errors} against kafka-clients' {@code org.apache.kafka.common.protocol.Errors}, and the throwable mapping. */
class ErrorsTest {

    @ParameterizedTest
    @EnumSource(org.apache.kafka.common.protocol.Errors.class)
    void everyKafkaErrorShouldHaveTheSameCodeNameRetriableFlagAndMessage(
            org.apache.kafka.common.protocol.Errors kafka) {
        // When
        Errors cairn = Errors.forCode(kafka.code());

        // Then
        assertThat(cairn.code()).isEqualTo(kafka.code());
        assertThat(cairn.name()).isEqualTo(kafka.name());
        assertThat(cairn.retriable()).as("retriable").isEqualTo(kafka.exception() instanceof RetriableException);
        assertThat(cairn.message()).isEqualTo(kafka.message());
    }

    @Test
    void cairnShouldHaveNoErrorThatKafkaDoesNotHave() {
        // When
        long kafkaCount = org.apache.kafka.common.protocol.Errors.values().length;

        // Then
        assertThat(Errors.values()).hasSize((int) kafkaCount);
        assertThat(Arrays.stream(Errors.values()).map(Errors::name)).containsExactlyElementsOf(
                Arrays.stream(org.apache.kafka.common.protocol.Errors.values()).map(Enum::name).toList());
    }

    @ParameterizedTest
    @EnumSource(value = Errors.class, mode = EnumSource.Mode.EXCLUDE, names = "NONE")
    void everyExceptionShouldMapBackToItsOwnCode(Errors error) {
        // When
        ApiException exception = error.exception("custom message");

        // Then
        assertThat(exception.getMessage()).isEqualTo("custom message");
        assertThat(Errors.forException(exception)).isEqualTo(error);
        assertThat(Errors.forException(error.exception())).isEqualTo(error);
        assertThat(error.exception().getMessage()).isEqualTo(error.message());
    }

    @Test
    void dedicatedExceptionClassesShouldBeUsedWhereTheyExist() {
        // When / Then
        assertThat(Errors.CORRUPT_MESSAGE.exception("x")).isExactlyInstanceOf(CorruptRecordException.class);
        assertThat(Errors.MESSAGE_TOO_LARGE.exception("x")).isExactlyInstanceOf(RecordTooLargeException.class);
        assertThat(Errors.UNSUPPORTED_VERSION.exception("x")).isExactlyInstanceOf(UnsupportedVersionException.class);
        assertThat(Errors.INVALID_FETCH_SIZE.exception("x")).isExactlyInstanceOf(ErrorCodeException.class);
        assertThat(Errors.NONE.exception()).isNull();
    }

    @Test
    void forExceptionShouldUnwrapCompletionAndExecutionExceptions() {
        // Given
        CompletableFuture<Void> failed = CompletableFuture.failedFuture(new NotLeaderOrFollowerException("moved"));
        Throwable nested = new CompletionException(new ExecutionException(new KafkaStorageException("disk")));

        // When
        Throwable fromJoin = catchJoin(failed);

        // Then
        assertThat(Errors.forException(fromJoin)).isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER);
        assertThat(Errors.forException(nested)).isEqualTo(Errors.KAFKA_STORAGE_ERROR);
        assertThat(Errors.forException(new CompletionException(null))).isEqualTo(Errors.UNKNOWN_SERVER_ERROR);
    }

    @Test
    void forExceptionShouldWalkTheClassHierarchy() {
        // Given
        final class BrokenCrcException extends CorruptRecordException {
            private static final long serialVersionUID = 1L;

            BrokenCrcException() {
                super("crc");
            }
        }

        // When
        Errors error = Errors.forException(new BrokenCrcException());

        // Then
        assertThat(error).isEqualTo(Errors.CORRUPT_MESSAGE);
    }

    @Test
    void forExceptionShouldFallBackToUnknownServerError() {
        // When / Then
        assertThat(Errors.forException(new IllegalStateException("bug"))).isEqualTo(Errors.UNKNOWN_SERVER_ERROR);
        assertThat(Errors.forException(new IOException("io"))).isEqualTo(Errors.UNKNOWN_SERVER_ERROR);
        assertThat(Errors.forException(new ApiException("plain"))).isEqualTo(Errors.UNKNOWN_SERVER_ERROR);
        assertThat(Errors.forException(new MessageDecodeException("short"))).isEqualTo(Errors.INVALID_REQUEST);
        assertThat(Errors.forException(null)).isEqualTo(Errors.NONE);
    }

    @Test
    void unknownCodesShouldMapToUnknownServerError() {
        // When / Then
        assertThat(Errors.forCode((short) 9_999)).isEqualTo(Errors.UNKNOWN_SERVER_ERROR);
        assertThat(Errors.forCode((short) -2)).isEqualTo(Errors.UNKNOWN_SERVER_ERROR);
        assertThat(Errors.forCode((short) 0)).isEqualTo(Errors.NONE);
        assertThat(Errors.forCode((short) 35)).isEqualTo(Errors.UNSUPPORTED_VERSION);
    }

    private static Throwable catchJoin(CompletableFuture<?> future) {
        try {
            future.join();
            throw new AssertionError("expected failure");
        } catch (CompletionException e) {
            return e;
        }
    }
}
