package io.cairn.compat.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.CairnProcess;
import io.cairn.testkit.FreePorts;
import io.cairn.testkit.TestDirectories;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import javax.imageio.ImageIO;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.awaitility.Awaitility;
import org.awaitility.core.ThrowingRunnable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Cairn's metrics as a real Prometheus sees them: a Cairn process serves stock producers and a consumer group,
 * a Prometheus server scrapes its endpoint every second, and PromQL through Prometheus' HTTP API finds the
 * dashboard series (messages and bytes in, request counts, request-time quantiles, JVM and process) and the
 * consumer lag: 0 once the group has consumed and committed everything, the number of records produced since once
 * more arrive unconsumed.
 *
 * <p>The dashboard ({@code grafana/dashboards/cairn.json}) and the alert rules ({@code grafana/alerts.yml}) are
 * proven on the same kind of run: every panel query answers with data, the lag panel with the lag the test made,
 * the rules evaluate (the health ones silent) and pass {@code promtool check rules}, and {@code promtool check
 * metrics} finds nothing in the scrape but names the Kafka dialects fix ({@link #DIALECT_NAMES}). The panels that
 * need a follower ({@link #FOLLOWER_PANELS}: a single broker follows nothing) are proven on two nodes instead, a
 * topic of replication factor 2 between them, both scraped by one Prometheus.
 *
 * <p>Needs the {@code prometheus} binary (Debian's package, which {@code .ci/run} installs): without it the test
 * is skipped, unless {@value #REQUIRE_PROMETHEUS} is set, when it fails.
 */
@Timeout(180)
@ExtendWith(BrokerLogsExtension.class)
class MetricsPrometheusIT {

    static final String REQUIRE_PROMETHEUS = "CAIRN_REQUIRE_PROMETHEUS";

    private static final String TOPIC = "prometheus-it";
    private static final String GROUP = "prometheus-it-group";
    private static final int FIRST = 120;
    private static final int MORE = 35;
    private static final Duration SCRAPED = Duration.ofSeconds(60);
    private static final String GRAFANA_DIR_PROPERTY = "cairn.grafana.dir";
    /** The dashboard's lag panel, as written in the JSON. */
    private static final String LAG_PANEL =
            "sum by (consumergroup, topic) (kafka_consumergroup_lag{job=\"$job\",instance=~\"$instance\"})";
    /**
     * Names promtool's lint dislikes but dashboards query: Kafka's JMX names and tags ({@code delayedOperation},
     * {@code clientId}, {@code logDirectory}, {@code time-since-last-run-ms}), Kafka 4's {@code group-count},
     * {@code offset-commit-count} and the other {@code -count} meters, Kafka Exporter's {@code _sum}.
     */
    private static final List<String> DIALECT_NAMES = List.of("kafka_server_socket_server_metrics_connection_count",
            "kafka_server_socket_server_metrics_expired_connections_killed_count",
            "kafka_server_delayedoperationpurgatory_numdelayedoperations", "kafka_consumergroup_lag_sum",
            "kafka_server_replicafetchermanager_maxlag", "kafka_server_fetcherlagmetrics_consumerlag",
            "kafka_server_group_coordinator_metrics_group_count",
            "kafka_server_group_coordinator_metrics_offset_commit_count",
            "kafka_server_group_coordinator_metrics_offset_expiration_count",
            "kafka_server_group_coordinator_metrics_offset_deletion_count",
            "kafka_server_group_coordinator_metrics_group_completed_rebalance_count",
            "kafka_server_transaction_coordinator_metrics_transaction_count",
            "kafka_log_logcleanermanager_time_since_last_run_ms", "kafka_log_logcleanermanager_uncleanable_bytes",
            "kafka_log_logcleanermanager_uncleanable_partitions_count");
    /** Panels whose series only a broker that follows a partition has: checked on two nodes. */
    private static final List<String> FOLLOWER_PANELS = List.of("Follower lag per partition");
    /** Rounds of produce after the checks, so that the picture's rates and lag move. */
    private static final int PICTURE_ROUNDS = 4;
    /** The panels of the picture: Grafana's main rows, one panel each. */
    private static final List<String> PICTURE_PANELS = List.of("Messages in per topic", "Bytes in per topic",
            "Requests per API", "Total time p99 per API", "Produce time p99 by phase", "Connections per listener",
            "Consumer lag per group and topic", "Heap used", "CPU");
    /** Alert rules that must not fire on a healthy single broker. */
    private static final List<String> HEALTH_RULES = List.of("up{", "underreplicatedpartitions",
            "underminisrpartitioncount", "offlinepartitionscount", "activecontrollercount", "brokerstate",
            "deadthreadcount", "uncleanable_partitions_count");

    private Path binary;
    private long scrapingSince;
    private CairnProcess cairn;
    private BrokerCluster cluster;
    private PrometheusProcess prometheus;

    @BeforeEach
    void findPrometheus() {
        Optional<Path> found = PrometheusProcess.binary();
        String missing = "prometheus is not on PATH; install it with `apt-get install prometheus` (Debian/Ubuntu) to "
                + "run the metrics test against a real Prometheus";
        if (found.isEmpty() && System.getenv(REQUIRE_PROMETHEUS) != null) {
            fail(missing + " (" + REQUIRE_PROMETHEUS + " is set, so prometheus is required)");
        }
        assumeTrue(found.isPresent(), missing);
        binary = found.get();
    }

    @AfterEach
    void stop() {
        if (prometheus != null) {
            prometheus.close();
        }
        if (cairn != null) {
            cairn.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void prometheusShouldScrapeTrafficRequestTimesJvmAndConsumerLag() throws Exception {
        // Given
        startCairnAndPrometheus();
        createTopic();
        produce(FIRST);
        consumeAndCommit(FIRST);

        // When
        awaitScraped(() -> assertThat(prometheus.value("kafka_consumergroup_lag{consumergroup=\"" + GROUP
                + "\",topic=\"" + TOPIC + "\",partition=\"0\"}")).isZero());

        // Then
        assertThat(prometheus.value("up{job=\"" + PrometheusProcess.JOB + "\"}")).isEqualTo(1.0);
        assertThat(prometheus.value("kafka_server_brokertopicmetrics_messagesin_total{topic=\"" + TOPIC + "\"}"))
                .isEqualTo(FIRST);
        assertThat(prometheus.value("sum(kafka_server_brokertopicmetrics_messagesin_total{topic!=\"\"})"))
                .isEqualTo(prometheus.value("kafka_server_brokertopicmetrics_messagesin_total{topic=\"\"}"));
        assertThat(prometheus.value("kafka_server_brokertopicmetrics_bytesin_total{topic=\"" + TOPIC + "\"}"))
                .isPositive();
        assertThat(prometheus.value("kafka_server_brokertopicmetrics_bytesout_total{topic=\"" + TOPIC + "\"}"))
                .isPositive();
        assertThat(prometheus.value("sum(kafka_network_requestmetrics_requests_total{request=\"Produce\"})"))
                .isPositive();
        assertThat(prometheus.value("sum(kafka_network_requestmetrics_requests_total{request=\"FetchConsumer\"})"))
                .isPositive();
        assertThat(prometheus.query("kafka_network_requestmetrics_totaltimems{request=\"Produce\"}"))
                .as("Produce total-time quantiles").hasSize(6);
        assertThat(prometheus.value("kafka_network_requestmetrics_totaltimems_count{request=\"Produce\"}"))
                .isPositive();
        assertThat(prometheus.query("kafka_network_requestmetrics_localtimems{request=\"FetchConsumer\","
                + "quantile=\"0.99\"}")).hasSize(1);
        assertThat(prometheus.value("kafka_network_requestmetrics_errors_total{request=\"OffsetCommit\","
                + "error=\"NONE\"}")).isPositive();
        assertThat(prometheus.value("kafka_consumergroup_current_offset{consumergroup=\"" + GROUP + "\",topic=\""
                + TOPIC + "\",partition=\"0\"}")).isEqualTo(FIRST);
        assertThat(prometheus.value("kafka_log_log_logendoffset{topic=\"" + TOPIC + "\",partition=\"0\"}"))
                .isEqualTo(FIRST);
        assertThat(prometheus.value("kafka_controller_kafkacontroller_activecontrollercount")).isEqualTo(1.0);
        assertThat(prometheus.value("kafka_server_replicamanager_underreplicatedpartitions")).isZero();
        assertThat(prometheus.value("kafka_server_kafkaserver_brokerstate")).isEqualTo(3.0);
        assertThat(prometheus.value("sum(jvm_memory_used_bytes{area=\"heap\"})")).isPositive();
        assertThat(prometheus.value("process_cpu_seconds_total")).isPositive();
        assertThat(prometheus.query("jvm_threads_current")).hasSize(1);
        assertThat(prometheus.value("kafka_server_replicafetchermanager_maxlag{clientId=\"Replica\"}")).isZero();
        assertThat(prometheus.value("kafka_log_logflushstats_logflushrateandtimems_count")).isPositive();
        assertThat(prometheus.value("kafka_coordinator_group_groupmetadatamanager_numgroups")).isEqualTo(1.0);
        assertThat(prometheus.value("kafka_coordinator_group_groupmetadatamanager_numgroupsempty")).isEqualTo(1.0);
        assertThat(prometheus.value("kafka_coordinator_group_groupmetadatamanager_numoffsets")).isEqualTo(1.0);
        assertThat(prometheus.value("kafka_server_group_coordinator_metrics_group_count{protocol=\"classic\"}"))
                .isEqualTo(1.0);
        assertThat(prometheus.value("kafka_server_group_coordinator_metrics_offset_commit_count")).isEqualTo(1.0);
        assertThat(prometheus.value("kafka_controller_kafkacontroller_globaltopiccount")).isEqualTo(2.0);
        assertThat(prometheus.value("kafka_controller_kafkacontroller_activebrokercount")).isEqualTo(1.0);
        assertThat(prometheus.value("kafka_controller_kafkacontroller_fencedbrokercount")).isZero();
        assertThat(prometheus.value("kafka_controller_controllereventmanager_eventqueueprocessingtimems_count"))
                .isPositive();
        assertThat(prometheus.value("kafka_server_group_coordinator_metrics_group_completed_rebalance_count"))
                .isGreaterThanOrEqualTo(1.0);
        assertThat(prometheus.value("kafka_server_group_coordinator_metrics_offset_expiration_count")).isZero();
        assertThat(prometheus.query("kafka_server_raftmetrics_commit_latency_max")).hasSize(1);
        assertThat(prometheus.value("kafka_log_logcleanermanager_uncleanable_partitions_count")).isZero();
        assertThat(prometheus.value("kafka_log_logcleaner_deadthreadcount")).isZero();
        assertThat(prometheus.query("kafka_log_logcleanermanager_time_since_last_run_ms")).hasSize(1);
        assertThat(prometheus.value("kafka_coordinator_transaction_transactionmarkerchannelmanager_"
                + "unknowndestinationqueuesize")).isZero();
        assertThat(prometheus.value("kafka_server_transaction_coordinator_metrics_transaction_count"
                + "{state=\"Ongoing\"}")).isZero();

        // And: more records, not consumed, are the group's lag
        produce(MORE);
        awaitScraped(() -> assertThat(prometheus.value("kafka_consumergroup_lag{consumergroup=\"" + GROUP
                + "\",topic=\"" + TOPIC + "\",partition=\"0\"}")).isEqualTo(MORE));
        assertThat(prometheus.value("kafka_consumergroup_lag_sum{consumergroup=\"" + GROUP + "\",topic=\"" + TOPIC
                + "\"}")).isEqualTo(MORE);
    }

    @Test
    void everyDashboardPanelQueryShouldAnswerAndTheAlertRulesAndScrapeShouldPassPromtool() throws Exception {
        // Given
        Path grafana = Path.of(System.getProperty(GRAFANA_DIR_PROPERTY, "../grafana"));
        List<String> panelQueries = GrafanaFiles.panelQueries(grafana.resolve("dashboards/cairn.json"));
        List<String> followerQueries = followerPanelQueries(grafana);
        panelQueries.removeAll(followerQueries);
        List<String> ruleQueries = GrafanaFiles.ruleExpressions(grafana.resolve("alerts.yml"));
        startCairnAndPrometheus();
        createTopic();
        produce(FIRST);
        consumeAndCommit(FIRST);
        produce(MORE);
        awaitScraped(() -> assertThat(prometheus.value("kafka_consumergroup_lag{topic=\"" + TOPIC + "\"}"))
                .isEqualTo(MORE));

        // When
        Map<String, List<PrometheusProcess.Sample>> answers = new LinkedHashMap<>();
        awaitScraped(() -> {
            for (String query : panelQueries) {
                answers.put(query, prometheus.query(query));
            }
            assertThat(answers).as("panel queries without data").allSatisfy((query, samples) ->
                    assertThat(samples).as(query).isNotEmpty());
        });

        // Then
        assertThat(panelQueries).hasSizeGreaterThan(30);
        assertThat(answers.get(GrafanaFiles.substitute(LAG_PANEL))).singleElement()
                .extracting(PrometheusProcess.Sample::value).isEqualTo((double) MORE);
        for (String rule : ruleQueries) {
            List<PrometheusProcess.Sample> firing = prometheus.query(rule);
            if (HEALTH_RULES.stream().anyMatch(rule::contains)) {
                assertThat(firing).as("healthy broker, alert %s", rule).isEmpty();
            }
        }
        Path promtool = binary.resolveSibling("promtool");
        PromtoolResult rules = promtool(promtool, null, "check", "rules", grafana.resolve("alerts.yml").toString());
        assertThat(rules.exitCode()).as("%s", rules).isZero();
        PromtoolResult lint = promtool(promtool, scrapeCairn(), "check", "metrics");
        assertThat(lint.exitCode()).as("parse errors: %s", lint).isNotEqualTo(1);
        assertThat(lint.output().lines().filter(line -> !line.isBlank()))
                .as("lint findings other than the names the Kafka dialects fix").allMatch(line -> DIALECT_NAMES.stream()
                        .anyMatch(name -> line.startsWith(name + " ")));

        // And: a few more rounds of traffic, each scraped, then the main panels drawn from Prometheus' answers
        for (int round = 0; round < PICTURE_ROUNDS; round++) {
            double scrapes = prometheus.value("count_over_time(up{job=\"" + PrometheusProcess.JOB + "\"}[10m])");
            produce(MORE);
            awaitScraped(() -> assertThat(prometheus.value("count_over_time(up{job=\"" + PrometheusProcess.JOB
                    + "\"}[10m])")).isGreaterThanOrEqualTo(scrapes + 2));
        }
        Path png = Path.of("target", "dashboard.png");
        drawMainPanels(GrafanaFiles.panels(grafana.resolve("dashboards/cairn.json")), png);
        assertThat(ImageIO.read(png.toFile()).getWidth()).isPositive();
    }

    @Test
    void theFollowerPanelsShouldAnswerOnTwoNodesReplicatingATopic() throws Exception {
        // Given: two Cairn nodes, each with its own metrics port, both scraped
        Path grafana = Path.of(System.getProperty(GRAFANA_DIR_PROPERTY, "../grafana"));
        List<String> followerQueries = followerPanelQueries(grafana);
        int[] metricsPorts = FreePorts.freePorts(2);
        cluster = BrokerCluster.create(BrokerKind.CAIRN, 2, Map.of(),
                node -> Map.of("metrics.port", Integer.toString(metricsPorts[node.nodeId() - 1])));
        cluster.start();
        prometheus = PrometheusProcess.start(binary, List.of(metricsPorts[0], metricsPorts[1]));

        // When: a topic replicated on both gets records, which the follower copies
        createTopic(cluster.bootstrapServers(), (short) 2);
        produce(cluster.bootstrapServers(), FIRST);

        // Then: the follower reports its lag of the partition (caught up: 0), both brokers their max lag
        String lag = "kafka_server_fetcherlagmetrics_consumerlag{topic=\"" + TOPIC + "\",partition=\"0\"}";
        awaitScraped(() -> {
            assertThat(prometheus.query(lag)).singleElement().extracting(PrometheusProcess.Sample::value)
                    .isEqualTo(0.0);
            for (String query : followerQueries) {
                assertThat(prometheus.query(query)).as(query).isNotEmpty();
            }
            // each node is scraped on its own schedule: both must have been scraped since they started
            assertThat(prometheus.query("kafka_server_replicafetchermanager_maxlag{clientId=\"Replica\"}"))
                    .hasSize(2);
            assertThat(prometheus.value("sum(kafka_controller_kafkacontroller_activebrokercount)")).isEqualTo(2.0);
        });
        assertThat(followerQueries).isNotEmpty();
    }

    /** The queries of the {@link #FOLLOWER_PANELS}. */
    private static List<String> followerPanelQueries(Path grafana) throws Exception {
        return GrafanaFiles.panels(grafana.resolve("dashboards/cairn.json")).stream()
                .filter(panel -> FOLLOWER_PANELS.contains(panel.title()))
                .flatMap(panel -> panel.targets().stream().map(GrafanaFiles.Target::expr)).toList();
    }

    /** Draws the {@link #PICTURE_PANELS} from range queries over the time Prometheus has been scraping. */
    private void drawMainPanels(List<GrafanaFiles.Panel> panels, Path png) throws Exception {
        long end = Instant.now().getEpochSecond();
        List<DashboardPicture.Chart> charts = new ArrayList<>();
        for (String title : PICTURE_PANELS) {
            GrafanaFiles.Panel panel = panels.stream().filter(p -> p.title().equals(title)).findFirst()
                    .orElseThrow(() -> new AssertionError("No panel " + title + " in the dashboard"));
            List<DashboardPicture.Line> lines = new ArrayList<>();
            for (GrafanaFiles.Target target : panel.targets()) {
                for (PrometheusProcess.Series series : prometheus.queryRange(target.expr(), scrapingSince, end,
                        (int) Math.max(1, (end - scrapingSince) / 200))) {
                    lines.add(new DashboardPicture.Line(DashboardPicture.legend(target.legendFormat(),
                            series.labels()), series.times(), series.values()));
                }
            }
            charts.add(new DashboardPicture.Chart(panel.title(), panel.unit(), lines));
        }
        DashboardPicture.write("Cairn — grafana/dashboards/cairn.json, drawn from a real Prometheus", charts, png);
    }

    private void startCairnAndPrometheus() throws Exception {
        cairn = CairnProcess.create();
        cairn.start();
        prometheus = PrometheusProcess.start(binary, cairn.metricsPort());
        scrapingSince = Instant.now().getEpochSecond();
    }

    private String scrapeCairn() throws Exception {
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + cairn.metricsPort() + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        return response.body();
    }

    /** Runs promtool with {@code stdin} (or none); its exit code and combined output. */
    private static PromtoolResult promtool(Path promtool, String stdin, String... args) throws Exception {
        Path dir = TestDirectories.createTempDirectory("cairn-promtool-");
        try {
            Path in = Files.writeString(dir.resolve("stdin"), stdin == null ? "" : stdin, StandardCharsets.UTF_8);
            Path out = dir.resolve("out");
            List<String> command = new ArrayList<>(List.of(promtool.toString()));
            command.addAll(List.of(args));
            Process process = new ProcessBuilder(command).redirectInput(in.toFile()).redirectErrorStream(true)
                    .redirectOutput(out.toFile()).start();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                throw new AssertionError("promtool " + command + " did not finish within 60 s");
            }
            return new PromtoolResult(command, process.exitValue(), Files.readString(out));
        } finally {
            TestDirectories.deleteRecursively(dir);
        }
    }

    /** What one promtool run printed. */
    private record PromtoolResult(List<String> command, int exitCode, String output) {
    }

    private void awaitScraped(ThrowingRunnable assertion) {
        Awaitility.await().atMost(SCRAPED).pollInterval(Duration.ofMillis(500)).ignoreExceptions()
                .untilAsserted(assertion);
    }

    private void createTopic() throws Exception {
        createTopic(cairn.bootstrapServers(), (short) 1);
    }

    /** The test topic; {@code flush.messages=1} makes every append a Kafka flush, for the log flush series. */
    private static void createTopic(String bootstrap, short replicationFactor) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, replicationFactor)
                    .configs(Map.of("flush.messages", "1")))).all().get(30, TimeUnit.SECONDS);
        }
    }

    private void produce(int records) throws Exception {
        produce(cairn.bootstrapServers(), records);
    }

    private static void produce(String bootstrap, int records) throws Exception {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            for (int i = 0; i < records; i++) {
                producer.send(new ProducerRecord<>(TOPIC, 0, "key-" + i, "value-" + i));
            }
            producer.flush();
        }
    }

    /** A consumer of the group reads {@code records} records, commits, and leaves. */
    private void consumeAndCommit(int records) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cairn.bootstrapServers());
        props.put(ConsumerConfig.GROUP_ID_CONFIG, GROUP);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
            consumer.subscribe(List.of(TOPIC));
            int[] read = {0};
            Awaitility.await().atMost(Duration.ofSeconds(60)).pollInSameThread().until(() -> {
                read[0] += consumer.poll(Duration.ofMillis(200)).count();
                return read[0] >= records;
            });
            assertThat(read[0]).isEqualTo(records);
            consumer.commitSync();
        }
    }
}
