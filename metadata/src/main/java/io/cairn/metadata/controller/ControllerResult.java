package io.cairn.metadata.controller;

import io.cairn.wire.protocol.ApiMessage;
import java.util.List;

/**
 * The outcome of one controller command: the records to commit and the response to return once they are
 * committed. Immutable (the records are not modified after creation), thread-safe.
 *
 * @param records  the records to append, in order; empty when the command changes nothing
 * @param response the response carrying the Kafka error code
 * @param <R>      the response type
 */
public record ControllerResult<R>(List<ApiMessage> records, R response) {

    public ControllerResult {
        records = List.copyOf(records);
    }

    public static <R> ControllerResult<R> of(R response) {
        return new ControllerResult<>(List.of(), response);
    }
}
