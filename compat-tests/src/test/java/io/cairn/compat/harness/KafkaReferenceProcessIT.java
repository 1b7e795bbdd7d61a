package io.cairn.compat.harness;

import io.cairn.testkit.ApiVersionsProbe;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.KafkaReferenceProcess;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.file.Files;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** Proves the reference Kafka starts, restarts on its data and stops here (no Docker), and reports how fast. */
@Timeout(300)
@ExtendWith(BrokerLogsExtension.class)
class KafkaReferenceProcessIT {

    private static final Logger LOGGER = LogManager.getLogger(KafkaReferenceProcessIT.class);

    @Test
    void referenceKafkaShouldStartRestartOnItsDataAndStopByPid() throws Exception {
        try (KafkaReferenceProcess kafka = KafkaReferenceProcess.create()) {
            // Given
            kafka.start();
            Duration firstStart = kafka.lastStartDuration();
            long firstPid = kafka.pid();
            String metaProperties = Files.readString(kafka.dataDir().resolve("meta.properties"));

            // When
            kafka.restart();

            // Then
            LOGGER.info("Reference Kafka start to first ApiVersions answer: {} ms (formatted storage first), "
                    + "restart: {} ms", firstStart.toMillis(), kafka.lastStartDuration().toMillis());
            assertThat(kafka.pid()).isNotEqualTo(firstPid);
            assertThat(ProcessHandle.of(firstPid).map(ProcessHandle::isAlive).orElse(false)).isFalse();
            assertThat(ApiVersionsProbe.answers(kafka.host(), kafka.port(), Duration.ofSeconds(5))).isTrue();
            assertThat(metaProperties).contains("cluster.id=" + kafka.clusterId()).contains("node.id=1");
            assertThat(Files.readString(kafka.dataDir().resolve("meta.properties"))).isEqualTo(metaProperties);
            assertThat(kafka.logLinesContaining("Kafka Server started")).hasSize(2);
            assertThat(kafka.logLinesContaining("StorageTool format")).hasSize(1);
        }
    }
}
