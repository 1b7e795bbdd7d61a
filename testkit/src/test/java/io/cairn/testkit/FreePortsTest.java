package io.cairn.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class FreePortsTest {

    @Test
    void portsAreDistinctBindableAndBelowTheEphemeralRange() throws IOException {
        // Given
        String range = Files.readAllLines(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).get(0);
        int ephemeralLow = Integer.parseInt(range.trim().split("\\s+")[0]);

        // When
        int[] ports = FreePorts.freePorts(20);

        // Then
        assertThat(Arrays.stream(ports).distinct().count()).isEqualTo(20);
        assertThat(Arrays.stream(ports).boxed().toList()).allSatisfy(port -> assertThat(port).isBetween(10_000,
                ephemeralLow - 1));
        for (int port : ports) {
            try (ServerSocket socket = new ServerSocket()) {
                socket.bind(new InetSocketAddress(InetAddress.getByName(FreePorts.LOOPBACK), port));
            }
        }
    }
}
