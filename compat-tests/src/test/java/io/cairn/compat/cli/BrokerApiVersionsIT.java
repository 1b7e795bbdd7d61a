package io.cairn.compat.cli;

import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.JavaTool;
import io.cairn.testkit.KafkaDistribution;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Kafka's stock {@code kafka-broker-api-versions} tool ({@code org.apache.kafka.tools.BrokerApiVersionsCommand}),
 * run as a user runs it ({@code --bootstrap-server}; its {@code main} in the test JVM, testkit's
 * {@code InProcessTool}), against Cairn and the reference Kafka.
 *
 * <p>The tool first sends Metadata (all topics) to the bootstrap server to learn the brokers, then ApiVersions to
 * each broker Metadata named, and prints {@code <host>:<port> (id: <id> rack: <rack> isFenced: <bool>) -> (}
 * followed by one line per API key kafka-clients knows: {@code Name(key): min to max [usable: v]} or
 * {@code Name(key): UNSUPPORTED}. Without Metadata it would print nothing on stdout and fail with
 * {@code Request METADATA failed on brokers [...]}, which is why Cairn serves Metadata from its first API on.
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

        // When
        JavaTool.Result result = runTool(broker);

        // Then
        assertThat(result.exitCode()).as("%s", result).isZero();
        assertThat(result.stdout().lines().toList()).as("%s", result)
                .contains(broker.host() + ":" + broker.port() + " (id: 1 rack: null isFenced: false) -> (")
                .contains("\tApiVersions(18): 0 to 4 [usable: 4],")
                .contains("\tSaslHandshake(17): 0 to 1 [usable: 1],", "\tSaslAuthenticate(36): 0 to 2 [usable: 2],")
                .contains("\tDescribeAcls(29): 1 to 3 [usable: 3],", "\tCreateAcls(30): 1 to 3 [usable: 3],",
                        "\tDeleteAcls(31): 1 to 3 [usable: 3],")
                .contains("\tDescribeClientQuotas(48): 0 to 1 [usable: 1],",
                        "\tAlterClientQuotas(49): 0 to 1 [usable: 1],")
                .contains("\tDescribeUserScramCredentials(50): 0 [usable: 0],",
                        "\tAlterUserScramCredentials(51): 0 [usable: 0],")
                .contains("\tCreateDelegationToken(38): 1 to 3 [usable: 3],",
                        "\tRenewDelegationToken(39): 1 to 2 [usable: 2],",
                        "\tExpireDelegationToken(40): 1 to 2 [usable: 2],",
                        "\tDescribeDelegationToken(41): 1 to 3 [usable: 3],")
                .endsWith(")");
    }

    @ParameterizedTest
    @EnumSource(BrokerKind.class)
    void toolShouldShowTheDataApisWithKafkasVersionRanges(BrokerKind kind) {
        // Given
        BrokerProcess broker = kind.shared();

        // When
        JavaTool.Result result = runTool(broker);

        // Then: Kafka 4.1.1's own ranges; Produce is advertised from v0 (librdkafka needs it to send compressed
        // batches) although v0-v2 requests are refused, and InitProducerId v6 is still unstable in 4.1.1.
        assertThat(result.exitCode()).as("%s", result).isZero();
        assertThat(result.stdout().lines().toList()).as("%s", result).contains(
                "\tProduce(0): 0 to 13 [usable: 13],",
                "\tFetch(1): 4 to 18 [usable: 18],",
                "\tListOffsets(2): 1 to 10 [usable: 10],",
                "\tInitProducerId(22): 0 to 5 [usable: 5],",
                "\tOffsetForLeaderEpoch(23): 2 to 4 [usable: 4],");
        assertThat(broker.logLinesContaining("LEAK:")).isEmpty();
    }

    @ParameterizedTest
    @EnumSource(BrokerKind.class)
    void toolShouldShowTheTransactionPartitionApisWithKafkasVersionRanges(BrokerKind kind) {
        // Given
        BrokerProcess broker = kind.shared();

        // When
        JavaTool.Result result = runTool(broker);

        // Then: WriteTxnMarkers is an inter-broker API that Kafka still advertises on the broker listener
        assertThat(result.exitCode()).as("%s", result).isZero();
        assertThat(result.stdout().lines().toList()).as("%s", result).contains(
                "\tWriteTxnMarkers(27): 1 [usable: 1],",
                "\tDescribeProducers(61): 0 [usable: 0],");
    }

    @ParameterizedTest
    @EnumSource(BrokerKind.class)
    void toolShouldShowTheTransactionCoordinatorApisWithKafkasVersionRanges(BrokerKind kind) {
        // Given
        BrokerProcess broker = kind.shared();

        // When
        JavaTool.Result result = runTool(broker);

        // Then: Kafka 4.1.1's ranges, with v5 of AddPartitionsToTxn and EndTxn (transaction.version 2)
        assertThat(result.exitCode()).as("%s", result).isZero();
        assertThat(result.stdout().lines().toList()).as("%s", result).contains(
                "\tAddPartitionsToTxn(24): 0 to 5 [usable: 5],",
                "\tAddOffsetsToTxn(25): 0 to 4 [usable: 4],",
                "\tEndTxn(26): 0 to 5 [usable: 5],",
                "\tTxnOffsetCommit(28): 0 to 5 [usable: 5],",
                "\tDescribeTransactions(65): 0 [usable: 0],",
                "\tListTransactions(66): 0 to 2 [usable: 2],");
    }

    @ParameterizedTest
    @EnumSource(BrokerKind.class)
    void toolShouldShowTheClassicGroupApisWithKafkasVersionRanges(BrokerKind kind) {
        // Given
        BrokerProcess broker = kind.shared();

        // When
        JavaTool.Result result = runTool(broker);

        // Then: Kafka 4.1.1's own ranges for the classic group protocol; OffsetCommit v10 and OffsetFetch v10 are
        // still unstable in 4.1.1 and not advertised.
        assertThat(result.exitCode()).as("%s", result).isZero();
        assertThat(result.stdout().lines().toList()).as("%s", result).contains(
                "\tOffsetCommit(8): 2 to 9 [usable: 9],",
                "\tOffsetFetch(9): 1 to 9 [usable: 9],",
                "\tFindCoordinator(10): 0 to 6 [usable: 6],",
                "\tJoinGroup(11): 0 to 9 [usable: 9],",
                "\tHeartbeat(12): 0 to 4 [usable: 4],",
                "\tLeaveGroup(13): 0 to 5 [usable: 5],",
                "\tSyncGroup(14): 0 to 5 [usable: 5],",
                "\tDescribeGroups(15): 0 to 6 [usable: 6],",
                "\tListGroups(16): 0 to 5 [usable: 5],",
                "\tDeleteGroups(42): 0 to 2 [usable: 2],",
                "\tOffsetDelete(47): 0 [usable: 0],");
        assertThat(broker.logLinesContaining("LEAK:")).isEmpty();
    }

    @ParameterizedTest
    @EnumSource(BrokerKind.class)
    void toolShouldShowTheAdminApisWithKafkasVersionRanges(BrokerKind kind) {
        // Given
        BrokerProcess broker = kind.shared();

        // When
        JavaTool.Result result = runTool(broker);

        // Then: Kafka 4.1.1's own ranges (DescribeLogDirs v0 was removed in 4.0).
        assertThat(result.exitCode()).as("%s", result).isZero();
        assertThat(result.stdout().lines().toList()).as("%s", result).contains(
                "\tDeleteRecords(21): 0 to 2 [usable: 2],",
                "\tDescribeLogDirs(35): 1 to 4 [usable: 4],",
                "\tUnregisterBroker(64): 0 [usable: 0],",
                "\tListConfigResources(74): 0 to 1 [usable: 1],");
    }

    @Test
    void toolShouldShowTheTopicApisCairnServesAndTheConsumerGroupProtocolAtKafkasRanges() {
        // Given
        BrokerProcess cairn = BrokerKind.CAIRN.shared();

        // When
        JavaTool.Result result = runTool(cairn);

        // Then
        assertThat(result.exitCode()).as("%s", result).isZero();
        assertThat(result.stdout().lines().toList()).as("%s", result)
                .contains(cairn.host() + ":" + cairn.port() + " (id: 1 rack: null isFenced: false) -> (")
                .contains("\tMetadata(3): 0 to 13 [usable: 13],", "\tApiVersions(18): 0 to 4 [usable: 4],")
                .contains("\tCreateTopics(19): 2 to 7 [usable: 7],", "\tDeleteTopics(20): 1 to 6 [usable: 6],")
                .contains("\tDescribeConfigs(32): 1 to 4 [usable: 4],", "\tCreatePartitions(37): 0 to 3 [usable: 3],")
                .contains("\tDescribeTopicPartitions(75): 0 [usable: 0],", "\tDescribeCluster(60): 0 to 2 [usable: 2],")
                .contains("\tConsumerGroupHeartbeat(68): 0 to 1 [usable: 1],",
                        "\tConsumerGroupDescribe(69): 0 to 1 [usable: 1],");
        assertThat(cairn.logLinesContaining("LEAK:")).isEmpty();
    }

    private static JavaTool.Result runTool(BrokerProcess broker) {
        return KafkaDistribution.tool(TOOL)
                .args("--bootstrap-server", broker.bootstrapServers())
                .timeout(Duration.ofSeconds(90))
                .build()
                .run();
    }
}
