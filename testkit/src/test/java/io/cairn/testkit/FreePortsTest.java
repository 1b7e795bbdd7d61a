package io.cairn.testkit;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class FreePortsTest {

    @Test
    void freePortsShouldBeDistinctAndBindable() throws IOException {
        // Given
        int count = 5;

        // When
        int[] ports = FreePorts.freePorts(count);

        // Then
        assertThat(Arrays.stream(ports).distinct().count()).isEqualTo(count);
        for (int port : ports) {
            assertThat(port).isBetween(1, 65535);
            try (ServerSocket socket = new ServerSocket()) {
                socket.bind(new InetSocketAddress(InetAddress.getByName(FreePorts.LOOPBACK), port));
                assertThat(socket.getLocalPort()).isEqualTo(port);
            }
        }
    }

    @Test
    void freePortShouldNotReturnAPortThatIsInUse() throws IOException {
        // Given
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName(FreePorts.LOOPBACK))) {

            // When
            int port = FreePorts.freePort();

            // Then
            assertThat(port).isNotEqualTo(taken.getLocalPort());
        }
    }

    @Test
    void freePortsShouldRejectANonPositiveCount() {
        // Given
        int count = 0;

        // When / Then
        assertThatThrownBy(() -> FreePorts.freePorts(count)).isInstanceOf(IllegalArgumentException.class);
    }
}
