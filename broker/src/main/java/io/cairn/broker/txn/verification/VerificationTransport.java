package io.cairn.broker.txn.verification;

import io.cairn.isr.client.SourceBroker;
import io.cairn.wire.message.AddPartitionsToTxnRequestData;
import io.cairn.wire.message.AddPartitionsToTxnResponseData;
import java.io.IOException;

/**
 * How an AddPartitionsToTxn request reaches a transaction coordinator (blocking), called by the verifier's one
 * sender thread. The real one is the inter-broker client ({@link TransactionVerifier#create}); tests answer from
 * memory.
 */
public interface VerificationTransport extends AutoCloseable {

    /**
     * Sends {@code request} to {@code coordinator} at the highest version of 4-5 both sides serve.
     *
     * @throws io.cairn.wire.error.UnsupportedVersionException when the coordinator serves none of them
     */
    AddPartitionsToTxnResponseData send(SourceBroker coordinator, AddPartitionsToTxnRequestData request)
            throws IOException;

    @Override
    void close();
}
