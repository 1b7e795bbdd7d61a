/**
 * Client quotas as Kafka's {@code ClientQuotaManager} enforces them: the producer and consumer byte rates set with
 * AlterClientQuotas, resolved per (user, client-id) from the metadata image, measured over Kafka's sampled window
 * ({@link io.cairn.broker.quota.QuotaRate}) and turned into a throttle time that the response carries and for which
 * the connection stops reading ({@link io.cairn.broker.quota.ClientQuotas}).
 */
package io.cairn.broker.quota;
