package io.cairn.testkit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@Timeout(60)
class JavaToolIT {

    @Test
    void runShouldCaptureExitCodeAndOutput() {
        // Given
        JavaTool tool = JavaTool.builder(FakeBroker.class.getName()).args("0", "fail").build();

        // When
        JavaTool.Result result = tool.run();

        // Then
        assertThat(result.exitCode()).isEqualTo(3);
        assertThat(result.stdout()).contains("fake broker refusing to start");
        assertThat(result.stderr()).isEmpty();
    }

    @Test
    void runShouldKillAToolThatOutlivesItsTimeout() {
        // Given
        int port = FreePorts.freePort();
        JavaTool tool = JavaTool.builder(FakeBroker.class.getName())
                .args(Integer.toString(port), "serve")
                .timeout(Duration.ofSeconds(3))
                .build();

        // When / Then
        assertThatThrownBy(tool::run)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("did not finish within 3 s and was killed")
                .hasMessageContaining("fake broker listening on " + port);
    }
}
