package io.cairn.broker.quota;

import io.cairn.broker.config.BrokerConfig;
import io.cairn.log.Time;
import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.MetadataListener;
import io.cairn.metadata.image.MetadataUpdate;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.CreatePartitionsResponseData;
import io.cairn.wire.message.CreateTopicsResponseData;
import io.cairn.wire.message.DeleteTopicsResponseData;
import io.cairn.wire.message.FetchRequestData;
import io.cairn.wire.message.FetchResponseData;
import io.cairn.wire.message.ProduceResponseData;
import io.cairn.wire.protocol.ApiMessage;
import io.cairn.wire.protocol.SerializationCache;
import io.cairn.wire.protocol.SizeAccumulator;
import java.util.function.Consumer;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The broker's client quotas ({@code producer_byte_rate}, {@code consumer_byte_rate}, {@code request_percentage},
 * {@code controller_mutation_rate}),
 * kept in step with the metadata image, applied to each answered request as Kafka's {@code KafkaApis} applies them:
 * <ul>
 *   <li>every request but a follower fetch and WriteTxnMarkers: the time its handler took on its thread counts, in
 *   percent of one thread, against {@code request_percentage} (Kafka's {@code ClientRequestQuotaManager}, its throttle
 *   time bounded by one window); the response carries the throttle time in its {@code throttle_time_ms};</li>
 *   <li>Produce: the request's size is counted for the client (user principal and client id); over the quota the
 *   response (or, for acks=0, the connection alone) gets the throttle time (the longer of the two quotas');</li>
 *   <li>Fetch from a consumer: the response's size is counted; over the quota it is taken back and the client gets
 *   an empty response with the throttle time instead (no error, the session id only for an incremental fetch), as
 *   Kafka's throttled {@code FetchContext} answers; and its {@code max_bytes} is capped at what the quota allows in
 *   one window ({@link #fetchMaxBytes}), so that a response is never too large to ever be sent;</li>
 *   <li>CreateTopics, CreatePartitions and DeleteTopics: the active controller counts their partitions against the
 *   {@code controller_mutation_rate} quota ({@link ControllerMutationQuotaManager}, which this class keeps in step
 *   with the image) and sets the response's throttle time; the connection is throttled for the longer of that and
 *   the request-time throttle, as Kafka's broker throttles a forwarded request's response;</li>
 *   <li>follower fetches and every other API: never throttled by client quotas.</li>
 * </ul>
 * The caller sends the response at once and then stops reading from the connection for the throttle time (KIP-219).
 *
 * <p>Thread-safe: the managers are; subscribed as a metadata listener (called on the apply thread).
 */
public final class ClientQuotas implements MetadataListener, RequestQuotas {

    private static final Logger LOGGER = LogManager.getLogger(ClientQuotas.class);
    /** Kafka's {@code NanosToPercentagePerSecond}: request-handler time is counted in percent of a thread. */
    static final double NANOS_TO_PERCENTAGE_PER_SECOND = 100.0 / 1_000_000_000L;

    private final ClientQuotaManager produce;
    private final ClientQuotaManager fetch;
    private final ClientQuotaManager requestTime;
    private final ControllerMutationQuotaManager controllerMutation;
    private final Time time;
    /** The IP connection creation rates of the image; guarded by this (handed over in order). */
    private IpConnectionRates ipRates = IpConnectionRates.NONE;
    /** Where the IP rates go (the socket server's connection quotas); guarded by this. */
    private Consumer<IpConnectionRates> ipRatesListener = rates -> { };

    /**
     * @param samples           {@code quota.window.num}
     * @param windowSizeSeconds {@code quota.window.size.seconds}
     */
    public ClientQuotas(int samples, int windowSizeSeconds, Time time) {
        this(samples, windowSizeSeconds, 11, 1, time);
    }

    /**
     * @param samples                     {@code quota.window.num}
     * @param windowSizeSeconds           {@code quota.window.size.seconds}
     * @param controllerSamples           {@code controller.quota.window.num}
     * @param controllerWindowSizeSeconds {@code controller.quota.window.size.seconds}
     */
    public ClientQuotas(int samples, int windowSizeSeconds, int controllerSamples, int controllerWindowSizeSeconds,
                        Time time) {
        this.controllerMutation = new ControllerMutationQuotaManager(controllerSamples, controllerWindowSizeSeconds,
                time);
        long windowMs = windowSizeSeconds * 1000L;
        this.produce = new ClientQuotaManager("producer_byte_rate", samples, windowMs, Long.MAX_VALUE);
        this.fetch = new ClientQuotaManager("consumer_byte_rate", samples, windowMs, Long.MAX_VALUE);
        // Kafka's ClientRequestQuotaManager bounds a request-time throttle by one window.
        this.requestTime = new ClientQuotaManager("request_percentage", samples, windowMs, windowMs);
        this.time = time;
    }

    /**
     * New quotas with the broker's {@code quota.window.*} and {@code controller.quota.window.*} settings, subscribed
     * to {@code node}'s image and loaded from its current one; the node's controller counts topic mutations against
     * {@link #controllerMutation()}.
     */
    public static ClientQuotas subscribe(MetadataNode node, BrokerConfig config, Time time) {
        ClientQuotas quotas = new ClientQuotas(config.quotaWindowNum(), config.quotaWindowSizeSeconds(),
                config.controllerQuotaWindowNum(), config.controllerQuotaWindowSizeSeconds(), time);
        quotas.load(node.subscribe(quotas));
        node.useControllerMutationQuotas(quotas.controllerMutation);
        return quotas;
    }

    /** The controller mutation quotas (KIP-599) the active controller applies to topic commands. */
    public ControllerMutationQuotaManager controllerMutation() {
        return controllerMutation;
    }

    /** Takes the quotas of {@code image}. */
    public void load(MetadataImage image) {
        produce.update(image.clientQuotas());
        fetch.update(image.clientQuotas());
        requestTime.update(image.clientQuotas());
        controllerMutation.sensors().update(image.clientQuotas());
        IpConnectionRates rates = IpConnectionRates.from(image.clientQuotas());
        synchronized (this) {
            ipRates = rates;
            ipRatesListener.accept(rates);
        }
    }

    /**
     * Hands the IP quotas ({@code connection_creation_rate} of IP entities) to {@code listener}, now and on every
     * change of the quotas (on the apply thread), as Kafka's quota publisher updates its {@code ConnectionQuotas}.
     */
    public synchronized void useIpConnectionRates(Consumer<IpConnectionRates> listener) {
        ipRatesListener = listener;
        listener.accept(ipRates);
    }

    @Override
    public void onUpdate(MetadataUpdate update) {
        if (update.changes().quotasChanged()) {
            load(update.image());
            LOGGER.info("Client quotas updated: {} entities", update.image().clientQuotas().size());
        }
    }

    @Override
    public Throttled apply(ApiKey apiKey, short version, String user, String clientId, ApiMessage request,
                           ApiMessage response, int requestBytes, long requestThreadNanos) {
        String client = clientId == null ? "" : clientId;
        long now = time.milliseconds();
        boolean follower = apiKey == ApiKey.FETCH && fromFollower((FetchRequestData) request, version);
        int requestThrottleMs = 0;
        if (requestTime.enabled() && !follower && apiKey != ApiKey.WRITE_TXN_MARKERS) {
            requestThrottleMs = requestTime.recordAndGetThrottleTimeMs(user, client,
                    requestThreadNanos * NANOS_TO_PERCENTAGE_PER_SECOND, now);
        }
        if (apiKey == ApiKey.PRODUCE) {
            int throttleMs = Math.max(requestThrottleMs, produce.enabled()
                    ? produce.recordAndGetThrottleTimeMs(user, client, requestBytes, now) : 0);
            if (throttleMs > 0 && response instanceof ProduceResponseData produceResponse) {
                produceResponse.setThrottleTimeMs(throttleMs);
            }
            return new Throttled(response, throttleMs);
        }
        if (apiKey == ApiKey.FETCH && !follower && response instanceof FetchResponseData fetchResponse) {
            int bytes = fetch.enabled() ? size(fetchResponse, version) : 0;
            int throttleMs = Math.max(requestThrottleMs, fetch.enabled()
                    ? fetch.recordAndGetThrottleTimeMs(user, client, bytes, now) : 0);
            if (throttleMs == 0) {
                return new Throttled(response, 0);
            }
            // Kafka's throttled fetch: the bytes taken back and an empty response in place of the data.
            fetch.unrecord(user, client, bytes, now);
            FetchRequestData fetchRequest = (FetchRequestData) request;
            return new Throttled(new FetchResponseData().setThrottleTimeMs(throttleMs).setErrorCode((short) 0)
                    .setSessionId(fetchRequest.sessionEpoch() > 0 ? fetchRequest.sessionId() : 0), throttleMs);
        }
        // Kafka's sendForwardedResponse: the longer of the controller's (mutation quota) and the request's throttle.
        int throttleMs = Math.max(requestThrottleMs, controllerThrottleTimeMs(response));
        if (throttleMs > 0 && response != null) {
            ThrottleTimes.set(response, throttleMs);
        }
        return new Throttled(response, throttleMs);
    }

    @Override
    public int fetchMaxBytes(String user, String clientId) {
        if (!fetch.enabled()) {
            return Integer.MAX_VALUE;
        }
        return (int) Math.min(fetch.maxValueInQuotaWindow(user, clientId == null ? "" : clientId),
                Integer.MAX_VALUE);
    }

    /** The throttle time the active controller set on a topic command's response (its mutation quota), else 0. */
    private static int controllerThrottleTimeMs(ApiMessage response) {
        if (response instanceof CreateTopicsResponseData created) {
            return created.throttleTimeMs();
        }
        if (response instanceof CreatePartitionsResponseData created) {
            return created.throttleTimeMs();
        }
        if (response instanceof DeleteTopicsResponseData deleted) {
            return deleted.throttleTimeMs();
        }
        return 0;
    }

    private static boolean fromFollower(FetchRequestData request, short version) {
        int replicaId = version >= 15 ? request.replicaState().replicaId() : request.replicaId();
        return replicaId >= 0;
    }

    /** The size of a fetch response body at {@code version}, as Kafka's {@code FetchResponse.sizeOf}. */
    private static int size(FetchResponseData response, short version) {
        SizeAccumulator size = new SizeAccumulator();
        response.addSize(size, new SerializationCache(), version);
        return size.totalSize();
    }
}
