package io.cairn.broker.net;

import io.cairn.wire.protocol.ApiMessage;
import io.netty.util.AbstractReferenceCounted;
import io.netty.util.ReferenceCounted;

/**
 * One response on its way to the socket: the position of its request on the connection, the header fields and the
 * body with the versions to write them at. A frame with a null body stands for a request that gets no response
 * (produce with acks=0): it only advances the {@link ResponseOrderer}.
 *
 * <p>Reference counted, so that a response is released exactly once whatever happens to it: the
 * {@link ResponseEncoder} releases it once written (a zero-copy region keeps its own reference on the records), the
 * {@link ResponseOrderer} releases frames still parked when the connection closes, and Netty releases a frame that
 * reaches the socket after the pipeline was torn down. Releasing runs the frame's release action (the handler's
 * {@code releaseResponse}, which closes the file slices of a Fetch response). The fields are immutable; the body is
 * owned by whoever holds the frame and must not be changed after it is written.
 */
final class ResponseFrame extends AbstractReferenceCounted {

    private final long sequence;
    private final int correlationId;
    private final short headerVersion;
    private final short apiVersion;
    private final ApiMessage body;
    private final Runnable release;
    /** The timings to record once the frame is written, or null; set by the dispatcher before it writes. */
    private RequestTimes times;

    /**
     * @param sequence the index of the request on its connection, from 0
     * @param correlationId the request's correlation id
     * @param headerVersion the response header version (0 for ApiVersions, KIP-511)
     * @param apiVersion the version to write the body at
     * @param body the response body, or null for "no response"
     * @param release what releasing the body means (run once, when the count reaches zero), or null for nothing
     */
    ResponseFrame(long sequence, int correlationId, short headerVersion, short apiVersion, ApiMessage body,
                  Runnable release) {
        this.sequence = sequence;
        this.correlationId = correlationId;
        this.headerVersion = headerVersion;
        this.apiVersion = apiVersion;
        this.body = body;
        this.release = release;
    }

    /** A frame whose body holds nothing to release. */
    ResponseFrame(long sequence, int correlationId, short headerVersion, short apiVersion, ApiMessage body) {
        this(sequence, correlationId, headerVersion, apiVersion, body, null);
    }

    static ResponseFrame none(long sequence) {
        return new ResponseFrame(sequence, -1, (short) 0, (short) 0, null);
    }

    /** Attaches the request's timings (recorded once the frame is written); returns this frame. */
    ResponseFrame timed(RequestTimes value) {
        this.times = value;
        return this;
    }

    RequestTimes times() {
        return times;
    }

    long sequence() {
        return sequence;
    }

    int correlationId() {
        return correlationId;
    }

    short headerVersion() {
        return headerVersion;
    }

    short apiVersion() {
        return apiVersion;
    }

    ApiMessage body() {
        return body;
    }

    boolean hasResponse() {
        return body != null;
    }

    @Override
    protected void deallocate() {
        if (release != null) {
            release.run();
        }
    }

    @Override
    public ReferenceCounted touch(Object hint) {
        return this;
    }

    @Override
    public String toString() {
        return "ResponseFrame(sequence=" + sequence + ", correlationId=" + correlationId + ", apiVersion="
            + apiVersion + ", body=" + (body == null ? "none" : body.getClass().getSimpleName()) + ")";
    }
}
