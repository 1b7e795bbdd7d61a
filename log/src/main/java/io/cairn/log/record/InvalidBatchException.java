package io.cairn.log.record;

/** A batch whose bytes break the v2 format (bad length, CRC, magic, record encoding). Thrown, never logged here. */
public final class InvalidBatchException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public InvalidBatchException(String message) {
        super(message);
    }

    public InvalidBatchException(String message, Throwable cause) {
        super(message, cause);
    }
}
