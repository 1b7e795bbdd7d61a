package io.cairn.log;

import io.cairn.wire.error.ApiException;
import java.util.List;

/**
 * A batch refused because of some of its records (KIP-467, Kafka's {@code RecordValidationException}): the error
 * for the partition ({@code InvalidRecordException} or {@code InvalidTimestampException}, whose message is the
 * partition's error message) and one entry per offending record. Thrown by the append, never logged there.
 */
public final class RecordValidationException extends ApiException {

    private static final long serialVersionUID = 1L;

    /** One offending record: its index in the batch and why. */
    public record RecordError(int batchIndex, String message) {
        @Override
        public String toString() {
            return "RecordError(batchIndex=" + batchIndex + ", message='" + message + "')";
        }
    }

    private final ApiException error;
    private final transient List<RecordError> recordErrors;

    public RecordValidationException(ApiException error, List<RecordError> recordErrors) {
        super(error.getMessage(), error);
        this.error = error;
        this.recordErrors = List.copyOf(recordErrors);
    }

    /** What the partition's response carries as its error code and message. */
    public ApiException error() {
        return error;
    }

    public List<RecordError> recordErrors() {
        return recordErrors;
    }
}
