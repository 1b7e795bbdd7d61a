package io.cairn.isr.client;

import io.cairn.wire.error.Errors;
import io.cairn.wire.error.UnsupportedVersionException;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.ApiVersionsRequestData;
import io.cairn.wire.message.ApiVersionsResponseData;
import io.cairn.wire.protocol.ApiMessage;
import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The inter-broker client: one blocking connection to another broker's inter-broker listener (Kafka's
 * {@code NetworkClient} with a blocking send, as the replica fetcher and the transaction marker sender use it) that
 * on each new connection sends ApiVersions first and picks, for every API it was given, the highest version both
 * sides serve within its range (a broker that serves none of the range is UNSUPPORTED_VERSION, and the connection
 * is dropped). Requests are then sent at the negotiated version (or an explicit lower one) over a
 * {@link BlockingChannel}: bounded connect and read, responses bounded before allocation, any failure disconnects
 * and the next request reconnects.
 *
 * <p>Thread-safety: requests are sent by one thread at a time; {@link #close} may be called from any thread and
 * fails a blocked send at once.
 */
public final class BrokerConnection implements AutoCloseable {

    private static final Logger LOGGER = LogManager.getLogger(BrokerConnection.class);
    private static final short API_VERSIONS_VERSION = 3;

    /** An API this client speaks, between {@code min} and {@code max}. */
    public record ApiRange(ApiKey apiKey, short min, short max) {
    }

    private final SourceBroker broker;
    private final String softwareName;
    private final List<ApiRange> apis;
    private final BlockingChannel channel;
    /** Written and read by the sending thread only. */
    private Map<Short, Short> versions = Map.of();

    /**
     * @param broker             the broker and its inter-broker endpoint
     * @param clientId           the client id of the request headers
     * @param softwareName       the client software name of ApiVersions
     * @param socketTimeoutMs    connect and read timeout
     * @param receiveBufferBytes SO_RCVBUF, or -1 for the system's default
     * @param maxResponseBytes   the largest response accepted
     * @param apis               the APIs to negotiate
     */
    public BrokerConnection(SourceBroker broker, String clientId, String softwareName, int socketTimeoutMs,
                            int receiveBufferBytes, int maxResponseBytes, List<ApiRange> apis) {
        this(broker, clientId, softwareName, socketTimeoutMs, receiveBufferBytes, maxResponseBytes, apis,
            ClientTls.PLAINTEXT);
    }

    /** As the other constructor, over {@code tls} (the inter-broker listener's security). */
    public BrokerConnection(SourceBroker broker, String clientId, String softwareName, int socketTimeoutMs,
                            int receiveBufferBytes, int maxResponseBytes, List<ApiRange> apis, ClientTls tls) {
        this.broker = broker;
        this.softwareName = softwareName;
        this.apis = List.copyOf(apis);
        this.channel = new BlockingChannel(broker.host(), broker.port(), clientId, socketTimeoutMs,
            receiveBufferBytes, maxResponseBytes, tls);
    }

    public SourceBroker broker() {
        return broker;
    }

    /** The version of {@code apiKey} negotiated on the current connection (connecting first when needed). */
    public short version(ApiKey apiKey) throws IOException {
        ensureConnected();
        Short version = versions.get(apiKey.id());
        if (version == null) {
            throw new IllegalArgumentException(apiKey + " was not negotiated");
        }
        return version;
    }

    /** Sends {@code request} at the negotiated version of its API and returns the response body. */
    public <T extends ApiMessage> T send(ApiMessage request) throws IOException {
        return send(request, version(ApiKey.forId(request.apiKey())));
    }

    /** Sends {@code request} at {@code version} (at most the negotiated one) and returns the response body. */
    public <T extends ApiMessage> T send(ApiMessage request, short version) throws IOException {
        ensureConnected();
        return channel.send(request, version);
    }

    /**
     * As {@link #send(ApiMessage, short)}, reading the response into the connection's reused frame buffer: the
     * response's byte fields (a fetch response's records) stay valid only until the next call of this method.
     */
    public <T extends ApiMessage> T sendReusingFrame(ApiMessage request, short version) throws IOException {
        ensureConnected();
        return channel.sendReusingFrame(request, version);
    }

    private void ensureConnected() throws IOException {
        if (channel.isConnected()) {
            return;
        }
        channel.connect();
        ApiVersionsResponseData response = channel.send(new ApiVersionsRequestData()
            .setClientSoftwareName(softwareName).setClientSoftwareVersion("1"), API_VERSIONS_VERSION);
        if (response.errorCode() != Errors.NONE.code()) {
            channel.disconnect();
            throw new IOException("ApiVersions to " + broker + " failed: " + Errors.forCode(response.errorCode()));
        }
        Map<Short, Short> chosen = new HashMap<>();
        StringBuilder described = new StringBuilder();
        for (ApiRange api : apis) {
            short version = pick(response, api);
            chosen.put(api.apiKey().id(), version);
            described.append(described.length() == 0 ? "" : ", ").append(api.apiKey().messageName()).append(" v")
                .append(version);
        }
        versions = Map.copyOf(chosen);
        LOGGER.info("Connected to {}: {}", broker, described);
    }

    private short pick(ApiVersionsResponseData response, ApiRange api) {
        for (ApiVersionsResponseData.ApiVersion v : response.apiKeys()) {
            if (v.apiKey() == api.apiKey().id()) {
                short best = (short) Math.min(api.max(), v.maxVersion());
                if (best < api.min() || best < v.minVersion()) {
                    break;
                }
                return best;
            }
        }
        channel.disconnect();
        throw new UnsupportedVersionException(broker + " does not serve " + api.apiKey().messageName() + " v"
            + api.min() + "-" + api.max());
    }

    /** Drops the current connection; the next request reconnects (and negotiates again). */
    public void disconnect() {
        channel.disconnect();
    }

    /** Closes the connection for good; a blocked send fails at once. */
    @Override
    public void close() {
        channel.close();
    }

    @Override
    public String toString() {
        return "BrokerConnection(" + broker + ")";
    }
}
