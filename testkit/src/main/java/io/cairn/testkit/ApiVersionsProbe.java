package io.cairn.testkit;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Asks whether a broker is up: connects, sends an ApiVersions v0 request and waits for a response frame with the
 * same correlation id.
 *
 * <p>The probe deliberately does not use the generated codec: it must tell "the broker is up" apart from "our
 * codec is wrong", and ApiVersions v0 with request header v1 is the one request every Kafka-protocol broker has
 * answered since 0.10 (KIP-35). Its 16 bytes are spelled out below. The response body is not parsed, only its
 * correlation id. Stateless and thread-safe.
 */
public final class ApiVersionsProbe {

    private static final short API_VERSIONS_KEY = 18;
    private static final short VERSION_0 = 0;
    private static final byte[] CLIENT_ID = "cairn-testkit-probe".getBytes(StandardCharsets.UTF_8);
    private static final int MAX_RESPONSE_BYTES = 1 << 20;
    private static final AtomicInteger CORRELATION_IDS = new AtomicInteger(1);

    private ApiVersionsProbe() {
    }

    /**
     * Whether {@code host:port} answers an ApiVersions v0 request within {@code timeout}. Connection refusals,
     * resets and timeouts all mean "no".
     */
    public static boolean answers(String host, int port, Duration timeout) {
        int timeoutMs = (int) Math.max(1, timeout.toMillis());
        int correlationId = CORRELATION_IDS.getAndIncrement();
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), timeoutMs);
            socket.setSoTimeout(timeoutMs);
            DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            // Request header v1: api key, api version, correlation id, client id (int16 length + UTF-8);
            // ApiVersions v0 has an empty body. The frame is prefixed by its int32 size.
            out.writeInt(2 + 2 + 4 + 2 + CLIENT_ID.length);
            out.writeShort(API_VERSIONS_KEY);
            out.writeShort(VERSION_0);
            out.writeInt(correlationId);
            out.writeShort(CLIENT_ID.length);
            out.write(CLIENT_ID);
            out.flush();
            DataInputStream in = new DataInputStream(socket.getInputStream());
            int size = in.readInt();
            if (size < 4 || size > MAX_RESPONSE_BYTES) {
                return false;
            }
            return in.readInt() == correlationId;
        } catch (IOException e) {
            return false;
        }
    }
}
