package io.cairn.isr.fetcher;

/** Opens {@link ReplicaFetcherThread}'s package-private round to tests of other packages (the simulations). */
public final class TestFetchers {

    private TestFetchers() {
    }

    /** One round of {@code thread} on the caller's thread, as its loop runs it: truncation, then one fetch. */
    public static void round(ReplicaFetcherThread thread) {
        thread.maybeTruncate();
        thread.maybeFetch();
    }
}
