package io.cairn.testkit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.file.Files;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@Timeout(120)
@ExtendWith(BrokerLogsExtension.class)
class AbstractBrokerProcessIT {

    @Test
    void startShouldReturnOnceTheProcessAnswersApiVersions() {
        try (FakeBrokerProcess broker = new FakeBrokerProcess(false)) {
            // When
            broker.start();

            // Then
            assertThat(broker.isRunning()).isTrue();
            assertThat(ProcessHandle.of(broker.pid())).isPresent();
            assertThat(ApiVersionsProbe.answers(broker.host(), broker.port(), Duration.ofSeconds(5))).isTrue();
            assertThat(broker.bootstrapServers()).isEqualTo("127.0.0.1:" + broker.port());
            assertThat(broker.logLinesContaining("fake broker listening on " + broker.port())).hasSize(1);
            assertThat(broker.lastStartDuration()).isPositive();
        }
    }

    @Test
    void stopShouldEndTheProcessByPid() {
        try (FakeBrokerProcess broker = new FakeBrokerProcess(false)) {
            // Given
            broker.start();
            long pid = broker.pid();

            // When
            broker.stop();

            // Then
            assertThat(broker.isRunning()).isFalse();
            assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)).isFalse();
            assertThat(ApiVersionsProbe.answers(broker.host(), broker.port(), Duration.ofSeconds(1))).isFalse();
        }
    }

    @Test
    void restartAfterKillShouldKeepPortAndDataDirectory() throws Exception {
        try (FakeBrokerProcess broker = new FakeBrokerProcess(false)) {
            // Given
            broker.start();
            long firstPid = broker.pid();
            Files.writeString(broker.dataDir().resolve("marker"), "kept");
            broker.kill();

            // When
            broker.start();

            // Then
            assertThat(broker.pid()).isNotEqualTo(firstPid);
            assertThat(broker.dataDir().resolve("marker")).hasContent("kept");
            assertThat(ApiVersionsProbe.answers(broker.host(), broker.port(), Duration.ofSeconds(5))).isTrue();
            assertThat(broker.logLinesContaining("fake broker listening on " + broker.port())).hasSize(2);
        }
    }

    @Test
    void startShouldFailWithTheLogTailWhenTheProcessExits() {
        try (FakeBrokerProcess broker = new FakeBrokerProcess(true)) {
            // When / Then
            assertThatThrownBy(broker::start)
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("exited with code 3")
                    .hasMessageContaining("fake broker refusing to start");
        }
    }

    @Test
    void closeShouldDeleteTheDataDirectoryAndKeepTheLog() {
        // Given
        FakeBrokerProcess broker = new FakeBrokerProcess(false);
        broker.start();

        // When
        broker.close();

        // Then
        assertThat(broker.isRunning()).isFalse();
        assertThat(broker.dataDir()).doesNotExist();
        assertThat(broker.logFile()).exists();
        assertThat(broker.logTail(100)).anyMatch(line -> line.contains("fake broker listening"));
    }
}
