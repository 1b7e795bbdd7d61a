package io.cairn.broker.share.partition;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.broker.fetch.TopicIdPartition;
import io.cairn.wire.protocol.Uuid;
import java.util.List;
import org.junit.jupiter.api.Test;

class ShareFetchServiceTest {

    private static final Uuid TOPIC = new Uuid(7L, 7L);
    private static final TopicIdPartition P0 = new TopicIdPartition(TOPIC, "t", 0);
    private static final TopicIdPartition P1 = new TopicIdPartition(TOPIC, "t", 1);
    private static final TopicIdPartition P2 = new TopicIdPartition(TOPIC, "t", 2);

    @Test
    void eachFetchOfASessionStartsOnePartitionFurtherOnAsKafkasRoundRobinDoes() {
        List<TopicIdPartition> session = List.of(P0, P1, P2);

        assertThat(ShareFetchService.turned(session, 0)).containsExactly(P0, P1, P2);
        assertThat(ShareFetchService.turned(session, 1)).containsExactly(P1, P2, P0);
        assertThat(ShareFetchService.turned(session, 2)).containsExactly(P2, P0, P1);
        assertThat(ShareFetchService.turned(session, 3)).containsExactly(P0, P1, P2);
        assertThat(ShareFetchService.turned(session, Integer.MAX_VALUE)).containsExactly(P1, P2, P0);
    }

    @Test
    void theFinalEpochOneOrNoPartitionAreNotTurned() {
        assertThat(ShareFetchService.turned(List.of(P0, P1), -1)).containsExactly(P0, P1);
        assertThat(ShareFetchService.turned(List.of(P2), 5)).containsExactly(P2);
        assertThat(ShareFetchService.turned(List.of(), 5)).isEmpty();
    }

    @Test
    void theTurnedListIsACopyTheFetchMayChange() {
        List<TopicIdPartition> turned = ShareFetchService.turned(List.of(P0, P1, P2), 1);
        turned.remove(P1);

        assertThat(turned).containsExactly(P2, P0);
    }
}
