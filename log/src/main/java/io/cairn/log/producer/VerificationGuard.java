package io.cairn.log.producer;

/**
 * The token of one transaction verification (KIP-890, Kafka's {@code VerificationGuard}): the partition creates it
 * when a transactional producer's first batch of a transaction arrives, the broker asks the transaction coordinator
 * whether the partition is in the transaction, and the append succeeds only if the guard is still the partition's
 * (a marker written meanwhile, or an expiry, drops it, so a late verification cannot open a transaction the
 * coordinator already ended). Compared by identity. {@link #SENTINEL} means "no verification needed": the
 * producer's transaction is already ongoing in the partition. Immutable and thread-safe.
 */
public final class VerificationGuard {

    /** No verification: the transaction is ongoing here, or none was asked for. */
    public static final VerificationGuard SENTINEL = new VerificationGuard();

    /** A new guard; only {@link ProducerStateManager} creates them. */
    VerificationGuard() {
    }

    /** True when {@code requested} is this (non-sentinel) guard. */
    public boolean verify(VerificationGuard requested) {
        return requested != SENTINEL && requested == this;
    }

    @Override
    public String toString() {
        return this == SENTINEL ? "VerificationGuard(SENTINEL)" : "VerificationGuard@" + System.identityHashCode(this);
    }
}
