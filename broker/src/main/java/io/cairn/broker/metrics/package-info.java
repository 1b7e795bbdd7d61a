/**
 * The broker's meters and their Prometheus endpoint: Micrometer meters named in the jmx_exporter/Strimzi dialect
 * that public Kafka dashboards query ({@code kafka_server_brokertopicmetrics_messagesin_total},
 * {@code kafka_network_requestmetrics_totaltimems{quantile}}, ...), the JVM and process metrics of the Prometheus
 * client, and collectors computed at scrape time (partition state, log sizes, consumer lag).
 */
package io.cairn.broker.metrics;
