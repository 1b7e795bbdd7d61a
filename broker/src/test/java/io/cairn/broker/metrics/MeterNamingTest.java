package io.cairn.broker.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.FetchRequestData;
import io.micrometer.core.instrument.MockClock;
import org.junit.jupiter.api.Test;

/** The Prometheus names of the meters: the jmx_exporter/Strimzi dialect the public Kafka dashboards query. */
class MeterNamingTest {

    private final BrokerMetrics metrics = BrokerMetrics.withClock(new MockClock());

    @Test
    void topicCountersShouldBeTotalsPerTopicAndForAllTopics() {
        // Given
        TopicMeters meters = metrics.topics().forTopic("orders");

        // When
        meters.totalProduceRequest();
        meters.messagesIn(3, 120);

        // Then
        assertThat(metrics.scrape())
                .contains("kafka_server_brokertopicmetrics_messagesin_total{topic=\"orders\"} 3.0")
                .contains("kafka_server_brokertopicmetrics_messagesin_total{topic=\"\"} 3.0")
                .contains("kafka_server_brokertopicmetrics_bytesin_total{topic=\"orders\"} 120.0")
                .contains("kafka_server_brokertopicmetrics_totalproducerequests_total{topic=\"orders\"} 1.0")
                .contains("kafka_server_brokertopicmetrics_failedproducerequests_total{topic=\"orders\"} 0.0")
                .contains("kafka_server_brokertopicmetrics_bytesout_total{topic=\"\"}")
                .contains("kafka_server_brokertopicmetrics_bytesrejected_total{topic=\"\"}")
                .contains("kafka_server_brokertopicmetrics_totalfetchrequests_total{topic=\"\"}")
                .contains("kafka_server_brokertopicmetrics_failedfetchrequests_total{topic=\"\"}");
    }

    @Test
    void requestMetricsShouldBeMillisecondSummariesWithKafkasQuantilesAndRequestLabel() {
        // Given
        ApiRequestMetrics produce = metrics.requests().forApi(ApiKey.PRODUCE);

        // When
        produce.recordRequest((short) 9);
        produce.recordError(Errors.NONE);
        produce.recordTimes(0, 1_000_000, 3_000_000, 7_000_000, 7_500_000, 8_000_000, 0);
        produce.recordSizes(100, 50);

        // Then
        assertThat(metrics.scrape())
                .contains("kafka_network_requestmetrics_requests_total{request=\"Produce\",version=\"9\"} 1.0")
                .contains("kafka_network_requestmetrics_errors_total{error=\"NONE\",request=\"Produce\"} 1.0")
                .contains("kafka_network_requestmetrics_totaltimems{request=\"Produce\",quantile=\"0.99\"}")
                .contains("kafka_network_requestmetrics_totaltimems_count{request=\"Produce\"} 1")
                .contains("kafka_network_requestmetrics_totaltimems_sum{request=\"Produce\"} 8.0")
                .contains("kafka_network_requestmetrics_requestqueuetimems_sum{request=\"Produce\"} 1.0")
                .contains("kafka_network_requestmetrics_localtimems_sum{request=\"Produce\"} 2.0")
                .contains("kafka_network_requestmetrics_remotetimems_sum{request=\"Produce\"} 4.0")
                .contains("kafka_network_requestmetrics_responsequeuetimems_sum{request=\"Produce\"} 0.5")
                .contains("kafka_network_requestmetrics_responsesendtimems_sum{request=\"Produce\"} 0.5")
                .contains("kafka_network_requestmetrics_throttletimems_count{request=\"Produce\"} 1")
                .contains("kafka_network_requestmetrics_requestbytes_sum{request=\"Produce\"} 100.0")
                .contains("kafka_network_requestmetrics_responsebytes_sum{request=\"Produce\"} 50.0");
    }

    @Test
    void fetchShouldSplitIntoFetchConsumerAndFetchFollowerByReplicaId() {
        // Given
        FetchRequestData consumer = new FetchRequestData().setReplicaId(-1);
        FetchRequestData follower = new FetchRequestData().setReplicaId(2);

        // When
        ApiRequestMetrics consumerSplit = metrics.requests().fetchSplit(ApiKey.FETCH, (short) 12, consumer);
        ApiRequestMetrics followerSplit = metrics.requests().fetchSplit(ApiKey.FETCH, (short) 12, follower);

        // Then
        assertThat(consumerSplit.request()).isEqualTo("FetchConsumer");
        assertThat(followerSplit.request()).isEqualTo("FetchFollower");
        assertThat(metrics.requests().fetchSplit(ApiKey.PRODUCE, (short) 9, null)).isNull();
    }

    @Test
    void connectionAndIdleMetersShouldUseKafkasSocketServerNames() {
        // Given
        SocketServerMetrics.ListenerMeters listener = metrics.socketServer().forListener("PLAINTEXT");
        metrics.socketServer().networkProcessorIdle(() -> 0L, () -> 3);
        metrics.socketServer().requestHandlerIdle(() -> 0L, () -> 8);

        // When
        listener.connectionOpened();

        // Then
        assertThat(metrics.scrape())
                .contains("kafka_server_socket_server_metrics_connection_count{listener=\"PLAINTEXT\"} 1.0")
                .contains("kafka_server_socket_server_metrics_connection_creation_total{listener=\"PLAINTEXT\"} 1.0")
                .contains("kafka_server_socket_server_metrics_connection_close_total{listener=\"PLAINTEXT\"} 0.0")
                .contains("kafka_network_socketserver_networkprocessoravgidle_percent 1.0")
                .contains("kafka_server_kafkarequesthandlerpool_requesthandleravgidle_percent 1.0");
    }

    @Test
    void connectionCreationRateMetersShouldUseKafkasSocketServerNames() {
        // Given
        SocketServerMetrics.ListenerMeters listener = metrics.socketServer().forListener("PLAINTEXT");
        listener.connectionAcceptRate(() -> 2.5);
        metrics.socketServer().brokerConnectionAcceptRate(() -> 3.0);

        // When
        listener.connectionAcceptThrottled(400);
        listener.connectionAcceptThrottled(600);
        listener.ipConnectionAcceptThrottled(1000);

        // Then
        assertThat(metrics.scrape())
                .contains("kafka_server_socket_server_metrics_connection_accept_rate{listener=\"PLAINTEXT\"} 2.5")
                .contains("kafka_server_socket_server_metrics_broker_connection_accept_rate 3.0")
                .contains("kafka_server_socket_server_metrics_connection_accept_throttle_time{listener=\"PLAINTEXT\"} "
                        + "500.0")
                .contains("kafka_server_socket_server_metrics_ip_connection_accept_throttle_time"
                        + "{listener=\"PLAINTEXT\"} 1000.0");
    }

    @Test
    void logFlushAndControllerEventTimesShouldBeKafkasMillisecondSummaries() {
        // When
        metrics.logFlush().onSegmentFlushed(4_000_000L);
        metrics.controllerEvents().onEvent(500_000L, 2_000_000L);

        // Then
        assertThat(metrics.scrape())
                .contains("kafka_log_logflushstats_logflushrateandtimems{quantile=\"0.99\"}")
                .contains("kafka_log_logflushstats_logflushrateandtimems_count 1")
                .contains("kafka_log_logflushstats_logflushrateandtimems_sum 4.0")
                .contains("kafka_controller_controllereventmanager_eventqueuetimems{quantile=\"0.5\"}")
                .contains("kafka_controller_controllereventmanager_eventqueuetimems_sum 0.5")
                .contains("kafka_controller_controllereventmanager_eventqueueprocessingtimems_count 1")
                .contains("kafka_controller_controllereventmanager_eventqueueprocessingtimems_sum 2.0");
    }

    @Test
    void metadataCommitLatencyShouldBeKafkasRaftAverageAndMaximum() {
        // When
        metrics.controllerEvents().onCommitted(2_000_000L);
        metrics.controllerEvents().onCommitted(6_000_000L);

        // Then
        assertThat(metrics.scrape())
                .contains("kafka_server_raftmetrics_commit_latency_avg 4.0")
                .contains("kafka_server_raftmetrics_commit_latency_max 6.0");
    }

    @Test
    void disabledMetricsShouldRecordAndPublishNothing() {
        // Given
        BrokerMetrics disabled = BrokerMetrics.disabled();

        // When
        disabled.topics().forTopic("orders").messagesIn(3, 120);
        disabled.requests().forApi(ApiKey.PRODUCE).recordRequest((short) 9);

        // Then
        assertThat(disabled.scrape()).doesNotContain("kafka_");
    }
}
