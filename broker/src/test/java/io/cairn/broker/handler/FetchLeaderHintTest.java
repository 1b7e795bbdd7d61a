package io.cairn.broker.handler;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.broker.fetch.FetchResponses;
import io.cairn.testkit.LeakDetection;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.FetchResponseData;
import io.cairn.wire.message.FetchResponseData.PartitionData;
import io.cairn.wire.protocol.Uuid;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A fetch for a partition another broker leads: NOT_LEADER_OR_FOLLOWER, and from v16 on the current leader and its
 * endpoint (KIP-951), so the client can go there without a Metadata round trip.
 */
@ExtendWith(LeakDetection.class)
@Timeout(120)
class FetchLeaderHintTest {

    @TempDir
    Path dir;

    private FetchFixture fixture;
    private Uuid topicId;

    @BeforeEach
    void setUp() throws Exception {
        fixture = FetchFixture.start(dir);
        fixture.registerSecondBroker();
        topicId = fixture.createTopicOn("elsewhere", List.of(2));
    }

    @AfterEach
    void tearDown() {
        fixture.close();
    }

    @Test
    void fromVersion16TheResponseNamesTheCurrentLeaderAndItsEndpoint() throws Exception {
        // When
        FetchResponseData response = fixture.fetch(16, FetchFixture.request(16, "elsewhere", topicId, 0, 0, 0))
            .get(30, TimeUnit.SECONDS);

        // Then
        PartitionData partition = response.responses().get(0).partitions().get(0);
        assertThat(partition.errorCode()).isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER.code());
        assertThat(partition.currentLeader().leaderId()).isEqualTo(2);
        assertThat(partition.currentLeader().leaderEpoch()).isZero();
        assertThat(response.nodeEndpoints()).singleElement().satisfies(node -> {
            assertThat(node.nodeId()).isEqualTo(2);
            assertThat(node.host()).isEqualTo("broker-two");
            assertThat(node.port()).isEqualTo(9093);
            assertThat(node.rack()).isEqualTo("rack-b");
        });
        FetchResponseData decoded = (FetchResponseData) MetadataFixture.roundTrip(response, ApiKey.FETCH, 16, true);
        FetchResponses.release(decoded);
        assertThat(decoded.nodeEndpoints()).isEqualTo(response.nodeEndpoints());
        assertThat(decoded.responses().get(0).partitions().get(0).currentLeader())
            .isEqualTo(partition.currentLeader());
    }

    @Test
    void beforeVersion16TheErrorComesWithoutLeaderHints() throws Exception {
        // When
        FetchResponseData response = fixture.fetch(15, FetchFixture.request(15, "elsewhere", topicId, 0, 0, 0))
            .get(30, TimeUnit.SECONDS);

        // Then
        PartitionData partition = response.responses().get(0).partitions().get(0);
        assertThat(partition.errorCode()).isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER.code());
        assertThat(partition.currentLeader().leaderId()).isEqualTo(-1);
        assertThat(response.nodeEndpoints()).isEmpty();
    }
}
