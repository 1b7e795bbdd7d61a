package io.cairn.compat.cli;

import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.JavaTool;
import io.cairn.testkit.KafkaDistribution;
import io.cairn.testkit.RawKafkaClient;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.ApiVersionsRequestData;
import io.cairn.wire.message.ApiVersionsResponseData;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Kafka's stock {@code kafka-broker-api-versions} tool ({@code org.apache.kafka.tools.BrokerApiVersionsCommand}),
 * run as a user runs it (its own JVM, {@code --bootstrap-server}), against Cairn and the reference Kafka.
 *
 * <p>The tool first sends Metadata (all topics) to the bootstrap server to learn the brokers, then ApiVersions to
 * each broker Metadata named, and prints {@code <host>:<port> (id: <id> rack: <rack> isFenced: <bool>) -> (}
 * followed by one line per API key kafka-clients knows: {@code Name(key): min to max [usable: v]} or
 * {@code Name(key): UNSUPPORTED}. Without Metadata it prints nothing on stdout and fails with
 * {@code Request METADATA failed on brokers [...]}: which of the two a broker gets is decided by whether it
 * advertises Metadata (key 3), and exactly one of the two Cairn tests below runs.
 */
@Timeout(300)
@ExtendWith(BrokerLogsExtension.class)
class BrokerApiVersionsIT {

    private static final String TOOL = "org.apache.kafka.tools.BrokerApiVersionsCommand";
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    @ParameterizedTest
    @EnumSource(BrokerKind.class)
    void toolShouldListTheBrokerWithItsApiVersionsRange(BrokerKind kind) {
        // Given
        BrokerProcess broker = kind.shared();
        assumeTrue(servesMetadata(broker), "the tool needs Metadata (key 3), which " + kind + " does not serve yet");

        // When
        JavaTool.Result result = runTool(broker);

        // Then
        assertThat(result.exitCode()).as("%s", result).isZero();
        assertThat(result.stdout().lines().toList()).as("%s", result)
                .contains(broker.host() + ":" + broker.port() + " (id: 1 rack: null isFenced: false) -> (")
                .contains("\tApiVersions(18): 0 to 4 [usable: 4],")
                .endsWith(")");
    }

    @Test
    void toolShouldShowApisCairnDoesNotServeAsUnsupported() {
        // Given
        BrokerProcess cairn = BrokerKind.CAIRN.shared();
        assumeTrue(servesMetadata(cairn), "the tool needs Metadata (key 3), which Cairn does not serve yet");

        // When
        JavaTool.Result result = runTool(cairn);

        // Then
        assertThat(result.exitCode()).as("%s", result).isZero();
        assertThat(result.stdout().lines().toList()).as("%s", result)
                .contains(cairn.host() + ":" + cairn.port() + " (id: 1 rack: null isFenced: false) -> (")
                .contains("\tProduce(0): UNSUPPORTED,", "\tFetch(1): UNSUPPORTED,")
                .contains("\tMetadata(3): 0 to 13 [usable: 13],", "\tApiVersions(18): 0 to 4 [usable: 4],")
                .contains("\tCreateTopics(19): 2 to 7 [usable: 7],", "\tDeleteTopics(20): 1 to 6 [usable: 6],")
                .contains("\tDescribeConfigs(32): 1 to 4 [usable: 4],", "\tCreatePartitions(37): 0 to 3 [usable: 3],")
                .contains("\tDescribeTopicPartitions(75): 0 [usable: 0],");
        assertThat(cairn.logLinesContaining("LEAK:")).isEmpty();
    }

    @Test
    void toolShouldFailAskingForMetadataWhileCairnDoesNotServeIt() {
        // Given
        BrokerProcess cairn = BrokerKind.CAIRN.shared();
        assumeFalse(servesMetadata(cairn), "Cairn serves Metadata: the tool's full output is checked instead");

        // When
        JavaTool.Result result = runTool(cairn);

        // Then
        assertThat(result.exitCode()).as("%s", result).isEqualTo(1);
        assertThat(result.stdout()).as("%s", result).isEmpty();
        assertThat(result.stderr()).as("%s", result).startsWith("Request METADATA failed on brokers ["
                + cairn.host() + ":" + cairn.port() + " (id: -1 rack: null isFenced: false)]");
    }

    @Test
    void toolShouldShowTheReferenceKafkaServingProduceAndFetch() {
        // Given
        BrokerProcess kafka = BrokerKind.KAFKA.shared();

        // When
        JavaTool.Result result = runTool(kafka);

        // Then
        assertThat(result.exitCode()).as("%s", result).isZero();
        assertThat(result.stdout().lines().toList()).as("%s", result)
                .anyMatch(line -> line.matches("\tProduce\\(0\\): \\d+ to \\d+ \\[usable: \\d+],"))
                .anyMatch(line -> line.matches("\tFetch\\(1\\): \\d+ to \\d+ \\[usable: \\d+],"));
    }

    private static JavaTool.Result runTool(BrokerProcess broker) {
        return KafkaDistribution.tool(TOOL)
                .args("--bootstrap-server", broker.bootstrapServers())
                .timeout(Duration.ofSeconds(90))
                .build()
                .run();
    }

    /** Whether {@code broker} advertises Metadata in its ApiVersions response. */
    private static boolean servesMetadata(BrokerProcess broker) {
        try (RawKafkaClient client = RawKafkaClient.connect(broker)) {
            ApiVersionsResponseData response = client.sendAndReceive(new ApiVersionsRequestData()
                    .setClientSoftwareName("cairn-compat-tests")
                    .setClientSoftwareVersion("1.0"), (short) 3, TIMEOUT);
            return response.apiKeys().stream().anyMatch(api -> api.apiKey() == ApiKey.METADATA.id());
        }
    }
}
