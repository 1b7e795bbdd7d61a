package io.cairn.broker;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.HeartbeatRequestData;
import org.apache.kafka.common.message.HeartbeatResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.HeartbeatRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ResponseHeader;

/**
 * Requests encoded and responses decoded by kafka-clients' own classes (test scope), so that the broker's bytes are
 * checked by an independent implementation. Stateless.
 */
public final class KafkaWire {

    public static final String CLIENT_ID = "cairn-test";

    private KafkaWire() {
    }

    /** An ApiVersions request (header + body) at {@code version}, as the Java client writes it. */
    public static ByteBuffer apiVersionsRequest(short version, int correlationId) {
        return apiVersionsRequest(version, correlationId, "cairn-test-client", "1.0.0");
    }

    public static ByteBuffer apiVersionsRequest(short version, int correlationId, String softwareName,
            String softwareVersion) {
        ApiVersionsRequestData data = new ApiVersionsRequestData().setClientSoftwareName(softwareName)
                .setClientSoftwareVersion(softwareVersion);
        ApiVersionsRequest request = new ApiVersionsRequest.Builder(data, version, version).build(version);
        return request.serializeWithHeader(new RequestHeader(ApiKeys.API_VERSIONS, version, CLIENT_ID,
                correlationId));
    }

    /**
     * An ApiVersions request at a version newer than any broker knows: a flexible (v2) header and a v4-shaped body,
     * which is what a future client would send.
     */
    public static ByteBuffer futureApiVersionsRequest(short version, int correlationId) {
        ByteBuffer buf = ByteBuffer.allocate(128);
        buf.putShort(ApiKeys.API_VERSIONS.id).putShort(version).putInt(correlationId);
        byte[] clientId = CLIENT_ID.getBytes(StandardCharsets.UTF_8);
        buf.putShort((short) clientId.length).put(clientId);
        buf.put((byte) 0);
        putCompactString(buf, "future-client");
        putCompactString(buf, "9.9");
        buf.put((byte) 0);
        buf.flip();
        return buf;
    }

    private static void putCompactString(ByteBuffer buf, String value) {
        byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
        buf.put((byte) (bytes.length + 1)).put(bytes);
    }

    /** A Heartbeat request (header + body) at {@code version}, as the Java client writes it. */
    public static ByteBuffer heartbeatRequest(short version, int correlationId) {
        HeartbeatRequestData data = new HeartbeatRequestData().setGroupId("group").setMemberId("member")
                .setGenerationId(1);
        HeartbeatRequest request = new HeartbeatRequest.Builder(data).build(version);
        return request.serializeWithHeader(new RequestHeader(ApiKeys.HEARTBEAT, version, CLIENT_ID, correlationId));
    }

    /** A Heartbeat response: the header at the version kafka-clients uses for {@code version}, then the body. */
    public static Decoded<HeartbeatResponseData> heartbeatResponse(ByteBuffer payload, short version) {
        ResponseHeader header = ResponseHeader.parse(payload, ApiKeys.HEARTBEAT.responseHeaderVersion(version));
        HeartbeatResponseData body = new HeartbeatResponseData(new ByteBufferAccessor(payload), version);
        return new Decoded<>(header.correlationId(), body, payload.remaining());
    }

    /** A response to an ApiVersions request: header v0 (always, KIP-511) and the body at {@code version}. */
    public static Decoded<ApiVersionsResponseData> apiVersionsResponse(ByteBuffer payload, short version) {
        ResponseHeader header = ResponseHeader.parse(payload, (short) 0);
        ApiVersionsResponseData body = new ApiVersionsResponseData(new ByteBufferAccessor(payload), version);
        return new Decoded<>(header.correlationId(), body, payload.remaining());
    }

    /**
     * A decoded response.
     *
     * @param correlationId from the response header
     * @param body the body
     * @param trailingBytes bytes left after the body (0 when the sizes agree)
     */
    public record Decoded<T>(int correlationId, T body, int trailingBytes) {
    }
}
