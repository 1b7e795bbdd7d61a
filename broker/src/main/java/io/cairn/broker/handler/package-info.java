/**
 * One handler per Kafka API ({@link io.cairn.broker.handler.ApiHandler}), the registry that indexes them by API key
 * and answers ApiVersions from exactly what is registered, and the per-request context.
 */
package io.cairn.broker.handler;
