package io.cairn.metadata.controller;

/**
 * The controller mutation quotas (KIP-599, the {@code controller_mutation_rate} client quota) the active controller
 * applies to CreateTopics, CreatePartitions and DeleteTopics: each topic's partitions created or deleted are counted
 * for the request's user and client id, as Kafka's {@code ControllerMutationQuotaManager} counts them. The broker
 * supplies the implementation (its client quotas follow the metadata image); {@link #NONE} counts nothing.
 * Implementations are thread-safe; the controller calls them on its event loop.
 */
public interface ControllerMutationQuotas {

    /** No quotas: every mutation accepted, never throttled. */
    ControllerMutationQuotas NONE = (user, clientId, strict) -> MutationQuota.UNBOUNDED;

    /**
     * The quota of one request.
     *
     * @param user     the principal's name
     * @param clientId the client id of the request header ("" when none)
     * @param strict   Kafka's strict quota (the request version knows THROTTLING_QUOTA_EXCEEDED: a mutation is refused
     *                 while the quota is exhausted), else its permissive one (accepted, then throttled)
     */
    MutationQuota newQuota(String user, String clientId, boolean strict);

    /** The quota of one request, asked once per topic. Not thread-safe: one request's decision uses it. */
    interface MutationQuota {

        /** Accepts everything, never throttles (Kafka's {@code UnboundedControllerMutationQuota}). */
        MutationQuota UNBOUNDED = new MutationQuota() {
            @Override
            public boolean record(int partitions) {
                return true;
            }

            @Override
            public int throttleTimeMs() {
                return 0;
            }
        };

        /**
         * Counts {@code partitions} mutated; false when the mutation is refused (a strict quota already exhausted:
         * the topic gets THROTTLING_QUOTA_EXCEEDED and nothing is counted).
         */
        boolean record(int partitions);

        /** The throttle time the response carries, in ms: 0 unless a mutation was refused or went over the quota. */
        int throttleTimeMs();

        /**
         * Ends the request: the throttle time its response carries ({@link #throttleTimeMs()}), which an
         * implementation may also record for the client (Kafka records a throttled response's time in the client's
         * {@code throttle-time} sensor). Called once per request, when its response is made.
         */
        default int complete() {
            return throttleTimeMs();
        }
    }
}
