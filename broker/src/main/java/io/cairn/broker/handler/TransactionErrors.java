package io.cairn.broker.handler;

import io.cairn.wire.error.Errors;

/**
 * Kafka's version rule for the errors of the transactional APIs (AddPartitionsToTxn, AddOffsetsToTxn, EndTxn):
 * PRODUCER_FENCED exists from v2; older clients get INVALID_PRODUCER_EPOCH. Stateless.
 */
final class TransactionErrors {

    private TransactionErrors() {
    }

    static Errors forVersion(Errors error, short version) {
        return error == Errors.PRODUCER_FENCED && version < 2 ? Errors.INVALID_PRODUCER_EPOCH : error;
    }
}
