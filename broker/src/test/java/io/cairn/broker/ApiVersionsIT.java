package io.cairn.broker;

import io.cairn.testkit.LeakDetection;
import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.broker.KafkaWire.Decoded;
import io.cairn.wire.protocol.ByteBufAccessor;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** ApiVersions over a real socket against an in-process broker, decoded by kafka-clients and by Cairn's codec. */
@ExtendWith(LeakDetection.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ApiVersionsIT {

    @TempDir
    static Path dataDir;

    private static LogCapture logs;
    private static InProcessBroker broker;

    @BeforeAll
    static void startBroker() throws Exception {
        logs = LogCapture.start();
        broker = InProcessBroker.start(dataDir, Map.of());
    }

    @AfterAll
    static void stopBroker() {
        broker.close();
        logs.close();
    }

    @ParameterizedTest(name = "v{0}")
    @ValueSource(shorts = {0, 1, 2, 3, 4})
    void shouldAnswerEveryApiVersionsVersionWithTheRegisteredTable(short version) throws Exception {
        // Given
        try (RawConnection connection = broker.connect()) {
            // When
            connection.sendFrame(KafkaWire.apiVersionsRequest(version, 42));
            Decoded<ApiVersionsResponseData> response = KafkaWire.apiVersionsResponse(connection.readFrame(),
                    version);

            // Then
            assertThat(response.correlationId()).isEqualTo(42);
            assertThat(response.trailingBytes()).isZero();
            ApiVersionsResponseData body = response.body();
            assertThat(body.errorCode()).isEqualTo(Errors.NONE.code());
            // ApiVersions plus the APIs CairnServer registers (Produce, Fetch, ListOffsets, Metadata, the group
            // APIs 8-16, SaslHandshake and SaslAuthenticate (advertised on every listener, as Kafka's),
            // CreateTopics, DeleteTopics, InitProducerId, OffsetForLeaderEpoch, the transaction APIs
            // AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, WriteTxnMarkers and TxnOffsetCommit, DescribeConfigs,
            // AlterConfigs, CreatePartitions, DeleteGroups, ElectLeaders, IncrementalAlterConfigs,
            // AlterPartitionReassignments, ListPartitionReassignments, OffsetDelete, DescribeUserScramCredentials,
            // AlterUserScramCredentials, DescribeQuorum, UpdateFeatures, DescribeCluster, DescribeProducers,
            // DescribeTransactions, ListTransactions, ConsumerGroupHeartbeat, ConsumerGroupDescribe,
            // DescribeTopicPartitions, DeleteRecords, AlterReplicaLogDirs,
            // DescribeLogDirs, UnregisterBroker, ListConfigResources, DescribeClientQuotas, AlterClientQuotas, the
            // delegation-token APIs 38-41 (advertised with or without a secret key, as Kafka's), and
            // DescribeAcls, CreateAcls and DeleteAcls, advertised with or without an authorizer as Kafka's, and
            // AddRaftVoter and RemoveRaftVoter (KIP-853), which a static quorum answers with UNSUPPORTED_VERSION,
            // the share coordinator's state APIs 83-87, which Kafka 4.1.1 serves at every share.version, and
            // ShareGroupHeartbeat, ShareGroupDescribe, ShareFetch, ShareAcknowledge and the share group offsets
            // APIs DescribeShareGroupOffsets, AlterShareGroupOffsets and DeleteShareGroupOffsets (90-92), advertised
            // whatever share.version says as Kafka's).
            assertThat(body.apiKeys()).extracting(ApiVersionsResponseData.ApiVersion::apiKey).containsExactly(
                    (short) 0, (short) 1, (short) 2, (short) 3, (short) 8, (short) 9, (short) 10, (short) 11,
                    (short) 12, (short) 13, (short) 14, (short) 15, (short) 16, (short) 17, (short) 18, (short) 19,
                    (short) 20, (short) 21, (short) 22, (short) 23, (short) 24, (short) 25, (short) 26, (short) 27,
                    (short) 28, (short) 29, (short) 30, (short) 31, (short) 32, (short) 33, (short) 34, (short) 35,
                    (short) 36, (short) 37, (short) 38, (short) 39, (short) 40, (short) 41, (short) 42, (short) 43,
                    (short) 44, (short) 45, (short) 46, (short) 47,
                    (short) 48, (short) 49, (short) 50, (short) 51, (short) 55, (short) 57, (short) 60, (short) 61, (short) 64, (short) 65,
                    (short) 66, (short) 68, (short) 69, (short) 74, (short) 75, (short) 76, (short) 77, (short) 78, (short) 79,
                    (short) 80, (short) 81, (short) 83, (short) 84, (short) 85, (short) 86, (short) 87, (short) 90,
                    (short) 91, (short) 92);
            ApiVersionsResponseData.ApiVersion apiVersions = body.apiKeys().find(ApiKeys.API_VERSIONS.id);
            assertThat(apiVersions.minVersion()).isEqualTo((short) 0);
            assertThat(apiVersions.maxVersion()).isEqualTo((short) 4);
            assertThat(body.throttleTimeMs()).isZero();
            // Features from v3 (KIP-584): a v3 client is not sent ranges starting at 0 (KAFKA-17011)
            if (version < 3) {
                assertThat(body.supportedFeatures()).isEmpty();
                assertThat(body.finalizedFeatures()).isEmpty();
                assertThat(body.finalizedFeaturesEpoch()).isEqualTo(-1L);
            } else {
                assertThat(body.supportedFeatures()).extracting(f -> f.name() + ":" + f.minVersion() + "-"
                        + f.maxVersion()).containsExactlyInAnyOrderElementsOf(version == 3
                        ? List.of("metadata.version:27-27")
                        : List.of("metadata.version:27-27", "eligible.leader.replicas.version:0-1",
                                "transaction.version:0-2", "group.version:0-1", "share.version:0-1",
                                "kraft.version:0-1"));
                assertThat(body.finalizedFeatures()).extracting(f -> f.name() + ":" + f.maxVersionLevel())
                        .containsExactlyInAnyOrder("metadata.version:27", "eligible.leader.replicas.version:1",
                                "transaction.version:2", "group.version:1");
                assertThat(body.finalizedFeaturesEpoch()).isPositive();
            }
            assertThat(body.zkMigrationReady()).isFalse();
        }
    }

    @Test
    void shouldWriteAResponseThatCairnsOwnCodecDecodesToTheSameValues() throws Exception {
        // Given
        try (RawConnection connection = broker.connect()) {
            // When
            connection.sendFrame(KafkaWire.apiVersionsRequest((short) 3, 7));
            ByteBuf payload = Unpooled.wrappedBuffer(connection.readFrame());

            // Then
            ByteBufAccessor in = new ByteBufAccessor(payload);
            io.cairn.wire.message.ResponseHeaderData header = new io.cairn.wire.message.ResponseHeaderData(in,
                    (short) 0);
            io.cairn.wire.message.ApiVersionsResponseData body =
                    new io.cairn.wire.message.ApiVersionsResponseData(in, (short) 3);
            assertThat(header.correlationId()).isEqualTo(7);
            assertThat(body.errorCode()).isZero();
            assertThat(body.apiKeys()).filteredOn(key -> key.apiKey() == 18).singleElement().satisfies(key -> {
                assertThat(key.apiKey()).isEqualTo((short) 18);
                assertThat(key.minVersion()).isZero();
                assertThat(key.maxVersion()).isEqualTo((short) 4);
            });
            assertThat(payload.readableBytes()).isZero();
        }
    }

    @ParameterizedTest(name = "v{0}")
    @ValueSource(shorts = {5, 127, Short.MAX_VALUE})
    void shouldAnswerANewerApiVersionsWithUnsupportedVersionInTheV0Layout(short version) throws Exception {
        // Given
        try (RawConnection connection = broker.connect()) {
            // When
            connection.sendFrame(KafkaWire.futureApiVersionsRequest(version, 99));
            Decoded<ApiVersionsResponseData> response = KafkaWire.apiVersionsResponse(connection.readFrame(),
                    (short) 0);

            // Then
            assertThat(response.correlationId()).isEqualTo(99);
            assertThat(response.trailingBytes()).isZero();
            assertThat(response.body().errorCode()).isEqualTo(Errors.UNSUPPORTED_VERSION.code());
            assertThat(response.body().apiKeys()).singleElement().satisfies(key -> {
                assertThat(key.apiKey()).isEqualTo(ApiKeys.API_VERSIONS.id);
                assertThat(key.minVersion()).isZero();
                assertThat(key.maxVersion()).isEqualTo((short) 4);
            });
            connection.sendFrame(KafkaWire.apiVersionsRequest((short) 4, 100));
            assertThat(KafkaWire.apiVersionsResponse(connection.readFrame(), (short) 4).body().errorCode())
                    .isZero();
        }
    }

    @Test
    void shouldAnswerAnInvalidClientSoftwareNameWithInvalidRequestAndKeepTheConnection() throws Exception {
        // Given
        try (RawConnection connection = broker.connect()) {
            // When
            connection.sendFrame(KafkaWire.apiVersionsRequest((short) 3, 5, "bad name!", "1.0"));
            Decoded<ApiVersionsResponseData> response = KafkaWire.apiVersionsResponse(connection.readFrame(),
                    (short) 3);

            // Then
            assertThat(response.correlationId()).isEqualTo(5);
            assertThat(response.body().errorCode()).isEqualTo(Errors.INVALID_REQUEST.code());
            assertThat(response.body().apiKeys()).isEmpty();
            connection.sendFrame(KafkaWire.apiVersionsRequest((short) 3, 6));
            assertThat(KafkaWire.apiVersionsResponse(connection.readFrame(), (short) 3).body().errorCode())
                    .isZero();
        }
    }

    @Test
    void shouldAnswerPipelinedRequestsInOrderWithTheirCorrelationIds() throws Exception {
        // Given
        short[] versions = {0, 4, 1, 5, 3, 2, 4, 0, 9, 3, 1, 4};
        ByteArrayOutputStream batch = new ByteArrayOutputStream();
        for (int i = 0; i < versions.length; i++) {
            ByteBuffer request = versions[i] > 4 ? KafkaWire.futureApiVersionsRequest(versions[i], 1000 + i)
                    : KafkaWire.apiVersionsRequest(versions[i], 1000 + i);
            batch.write(RawConnection.frame(request));
        }
        try (RawConnection connection = broker.connect()) {
            // When
            connection.send(batch.toByteArray());
            List<Integer> correlationIds = new ArrayList<>();
            List<Short> errors = new ArrayList<>();
            for (short version : versions) {
                Decoded<ApiVersionsResponseData> response = KafkaWire.apiVersionsResponse(connection.readFrame(),
                        version > 4 ? 0 : version);
                correlationIds.add(response.correlationId());
                errors.add(response.body().errorCode());
            }

            // Then
            assertThat(correlationIds).containsExactly(1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009,
                    1010, 1011);
            assertThat(errors).containsExactly((short) 0, (short) 0, (short) 0, (short) 35, (short) 0, (short) 0,
                    (short) 0, (short) 0, (short) 35, (short) 0, (short) 0, (short) 0);
        }
    }

    @Test
    void shouldAnswerEveryPipelinedRequestWhenTheRequestMemoryBudgetIsSmall(@TempDir Path otherDataDir)
            throws Exception {
        // Given
        ByteArrayOutputStream batch = new ByteArrayOutputStream();
        for (int i = 0; i < 50; i++) {
            batch.write(RawConnection.frame(KafkaWire.apiVersionsRequest((short) 3, i)));
        }
        try (InProcessBroker small = InProcessBroker.start(otherDataDir, Map.of("queued.max.request.bytes", "64"));
                RawConnection first = new RawConnection("127.0.0.1", small.port());
                RawConnection second = new RawConnection("127.0.0.1", small.port())) {
            // When
            first.send(batch.toByteArray());
            second.send(batch.toByteArray());

            // Then
            for (RawConnection connection : List.of(first, second)) {
                for (int i = 0; i < 50; i++) {
                    assertThat(KafkaWire.apiVersionsResponse(connection.readFrame(), (short) 3).correlationId())
                            .isEqualTo(i);
                }
            }
        }
    }

    @Test
    void shouldStillServeAFreshConnectionAfterManyConnectionsClosedWithFramesInFlight(@TempDir Path otherDataDir)
            throws Exception {
        // Given: each connection sends a request the broker closes it for, then requests that arrive while it closes.
        ByteBuffer unknownApi = KafkaWire.apiVersionsRequest((short) 3, 0);
        unknownApi.putShort(0, (short) 9999);
        ByteArrayOutputStream batch = new ByteArrayOutputStream();
        batch.write(RawConnection.frame(unknownApi));
        for (int i = 1; i <= 3; i++) {
            batch.write(RawConnection.frame(KafkaWire.apiVersionsRequest((short) 3, i)));
        }
        try (InProcessBroker small = InProcessBroker.start(otherDataDir, Map.of("queued.max.request.bytes", "200"))) {
            for (int i = 0; i < 30; i++) {
                try (RawConnection closing = new RawConnection("127.0.0.1", small.port())) {
                    closing.send(batch.toByteArray());
                    assertThat(closing.closedByServer()).isTrue();
                }
            }

            // When
            try (RawConnection fresh = new RawConnection("127.0.0.1", small.port())) {
                fresh.sendFrame(KafkaWire.apiVersionsRequest((short) 3, 99));

                // Then
                assertThat(KafkaWire.apiVersionsResponse(fresh.readFrame(), (short) 3).correlationId()).isEqualTo(99);
            }
        }
    }

    @Test
    void shouldServeIpv4AndIpv6LoopbackOnAWildcardListener() throws Exception {
        // Given
        List<String> hosts = new ArrayList<>(List.of("127.0.0.1"));
        if (ipv6LoopbackAvailable()) {
            hosts.add("::1");
        }
        for (String host : hosts) {
            try (RawConnection connection = new RawConnection(host, broker.port())) {
                // When
                connection.sendFrame(KafkaWire.apiVersionsRequest((short) 4, 1));

                // Then
                assertThat(KafkaWire.apiVersionsResponse(connection.readFrame(), (short) 4).body().errorCode())
                        .as("ApiVersions over %s", host).isZero();
            }
        }
    }

    private static boolean ipv6LoopbackAvailable() throws Exception {
        NetworkInterface loopback = NetworkInterface.getByInetAddress(InetAddress.getLoopbackAddress());
        return loopback != null && loopback.inetAddresses().anyMatch(a -> a instanceof Inet6Address);
    }
}
