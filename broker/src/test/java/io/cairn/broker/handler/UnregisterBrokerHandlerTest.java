package io.cairn.broker.handler;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.testkit.LeakDetection;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.UnregisterBrokerRequestData;
import io.cairn.wire.message.UnregisterBrokerResponseData;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** UnregisterBroker forwarded to a real in-process controller. */
@ExtendWith(LeakDetection.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class UnregisterBrokerHandlerTest {

    @TempDir
    static Path dir;
    private static PartitionsFixture fixture;
    private static UnregisterBrokerHandler handler;

    @BeforeAll
    static void start() throws Exception {
        fixture = PartitionsFixture.start(dir);
        handler = new UnregisterBrokerHandler(fixture.metadata().node());
        fixture.registerSecondBroker();
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }

    private static UnregisterBrokerResponseData unregister(int id) throws Exception {
        return handler.handle(MetadataFixture.context(ApiKey.UNREGISTER_BROKER, 0),
                new UnregisterBrokerRequestData().setBrokerId(id)).toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    @Test
    void anUnknownBrokerIsNotRegisteredAndARegisteredOneIsRemoved() throws Exception {
        // When
        UnregisterBrokerResponseData unknown = unregister(7);
        UnregisterBrokerResponseData second = unregister(2);
        UnregisterBrokerResponseData again = unregister(2);

        // Then
        assertThat(unknown.errorCode()).isEqualTo(Errors.BROKER_ID_NOT_REGISTERED.code());
        assertThat(second.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(fixture.metadata().node().currentImage().broker(2)).isEmpty();
        assertThat(again.errorCode()).isEqualTo(Errors.BROKER_ID_NOT_REGISTERED.code());
    }
}
