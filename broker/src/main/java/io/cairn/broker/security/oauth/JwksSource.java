package io.cairn.broker.security.oauth;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The verification keys of {@code sasl.oauthbearer.jwks.endpoint.url}, cached and refreshed in the background as
 * Kafka's {@code RefreshingHttpsJwks} does: fetched once when the listener starts (the broker does not start when
 * that fails, as Kafka does not), then every {@code sasl.oauthbearer.jwks.endpoint.refresh.ms} on this source's own
 * thread, a failed fetch retried after {@code ...retry.backoff.ms} doubling up to {@code ...retry.backoff.max.ms}
 * and then given up until the next refresh (the cached keys stay). A token naming a key id the cache lacks
 * ({@link #refreshForUnknownKid}) brings the next refresh forward, at most once per {@link #minExpediteIntervalMs}
 * whatever the key ids clients send (a client can make the broker fetch, never more often than that); key ids longer
 * than 1000 characters never do (Kafka's bound). A document is at most {@link #MAX_DOCUMENT_BYTES} and
 * {@link Jwks#MAX_KEYS} keys; HTTP follows no redirects and times out after 10 s. Network threads never wait here:
 * validation runs on request-handler threads and only reads {@link #current()}.
 *
 * <p>Thread-safe: the keys are a volatile immutable snapshot; the refresh state is guarded by this object.
 */
final class JwksSource implements AutoCloseable {

    private static final Logger LOGGER = LogManager.getLogger(JwksSource.class);
    static final int MAX_DOCUMENT_BYTES = 1 << 20;
    static final int MAX_KID_LENGTH = 1000;
    static final long DEFAULT_MIN_EXPEDITE_INTERVAL_MS = 5_000L;
    private static final Duration HTTP_TIMEOUT = Duration.ofSeconds(10);

    /** Reads the JWK Set document once. */
    interface Fetcher {
        String fetch() throws IOException;
    }

    private final String location;
    private final Fetcher fetcher;
    private final long refreshMs;
    private final long retryBackoffMs;
    private final long retryBackoffMaxMs;
    private final long minExpediteIntervalMs;
    private final LongSupplier clockMs;
    private final ScheduledThreadPoolExecutor executor;
    private volatile Jwks current = Jwks.EMPTY;
    /** The expedited refresh under way, or null; guarded by this. */
    private CompletableFuture<Jwks> expedited;
    /** When the last expedited refresh started; guarded by this. */
    private long lastExpeditedMs = Long.MIN_VALUE / 2;

    JwksSource(String location, Fetcher fetcher, long refreshMs, long retryBackoffMs, long retryBackoffMaxMs,
            long minExpediteIntervalMs, LongSupplier clockMs) {
        this.location = location;
        this.fetcher = fetcher;
        this.refreshMs = refreshMs;
        this.retryBackoffMs = retryBackoffMs;
        this.retryBackoffMaxMs = retryBackoffMaxMs;
        this.minExpediteIntervalMs = minExpediteIntervalMs;
        this.clockMs = clockMs;
        this.executor = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread thread = new Thread(runnable, "cairn-oauthbearer-jwks-refresh");
            thread.setDaemon(true);
            return thread;
        });
        executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    /** A source reading {@code uri} (http, https or file). */
    static JwksSource of(URI uri, long refreshMs, long retryBackoffMs, long retryBackoffMaxMs) {
        Fetcher fetcher = "file".equalsIgnoreCase(uri.getScheme()) ? () -> readFile(Path.of(uri)) : httpFetcher(uri);
        return new JwksSource(uri.toString(), fetcher, refreshMs, retryBackoffMs, retryBackoffMaxMs,
                DEFAULT_MIN_EXPEDITE_INTERVAL_MS, System::currentTimeMillis);
    }

    /**
     * Fetches the keys (on the calling thread, at startup) and schedules the periodic refresh.
     *
     * @throws IOException when the first fetch fails or the document is not a usable JWK Set
     */
    void start() throws IOException {
        try {
            current = parse(fetcher.fetch());
        } catch (IOException e) {
            throw new IOException("verification keys could not be loaded from " + location + ": " + e, e);
        }
        LOGGER.info("OAUTHBEARER verification keys loaded from {} ({} keys); refreshed every {} ms", location,
                current.keys().size(), refreshMs);
        executor.scheduleWithFixedDelay(this::scheduledRefresh, refreshMs, refreshMs, TimeUnit.MILLISECONDS);
    }

    /** The keys now. */
    Jwks current() {
        return current;
    }

    /**
     * Brings a refresh forward because a token names {@code kid}, which the cache lacks.
     *
     * @return the refresh that will include the newest keys (one already under way may be shared), or null when
     *     no refresh is made (rate limited, or an overlong key id)
     */
    synchronized CompletableFuture<Jwks> refreshForUnknownKid(String kid) {
        if (kid.length() > MAX_KID_LENGTH) {
            return null;
        }
        if (expedited != null && !expedited.isDone()) {
            return expedited;
        }
        long now = clockMs.getAsLong();
        if (now - lastExpeditedMs < minExpediteIntervalMs) {
            return null;
        }
        lastExpeditedMs = now;
        CompletableFuture<Jwks> refresh = new CompletableFuture<>();
        expedited = refresh;
        try {
            executor.execute(() -> {
                try {
                    refresh.complete(fetchOnce());
                } catch (IOException | RuntimeException e) {
                    LOGGER.warn("OAUTHBEARER verification keys could not be refreshed from {} for key id {}: {}",
                            location, Json.shorten(kid), e.toString());
                    refresh.complete(current);
                }
            });
        } catch (RejectedExecutionException e) {
            refresh.complete(current);
        }
        return refresh;
    }

    private void scheduledRefresh() {
        long backoff = Math.max(1, retryBackoffMs);
        long waited = 0;
        while (true) {
            try {
                fetchOnce();
                return;
            } catch (IOException | RuntimeException e) {
                if (waited + backoff > retryBackoffMaxMs || executor.isShutdown()) {
                    LOGGER.warn("OAUTHBEARER verification keys could not be refreshed from {}; keeping the {} cached "
                            + "keys until the next refresh: {}", location, current.keys().size(), e.toString());
                    return;
                }
                LOGGER.debug("OAUTHBEARER verification keys fetch from {} failed, retrying in {} ms", location,
                        backoff, e);
            }
            try {
                Thread.sleep(backoff);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            waited += backoff;
            backoff = Math.min(backoff * 2, Math.max(1, retryBackoffMaxMs));
        }
    }

    private Jwks fetchOnce() throws IOException {
        Jwks fetched = parse(fetcher.fetch());
        current = fetched;
        LOGGER.debug("OAUTHBEARER verification keys refreshed from {} ({} keys)", location, fetched.keys().size());
        return fetched;
    }

    private Jwks parse(String document) throws IOException {
        try {
            return Jwks.parse(document);
        } catch (IllegalArgumentException e) {
            throw new IOException("the JWK Set from " + location + " is not usable: " + e.getMessage());
        }
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }

    private static String readFile(Path path) throws IOException {
        if (Files.size(path) > MAX_DOCUMENT_BYTES) {
            throw new IOException("the JWK Set file " + path + " is larger than " + MAX_DOCUMENT_BYTES + " bytes");
        }
        return Files.readString(path, StandardCharsets.UTF_8);
    }

    private static Fetcher httpFetcher(URI uri) {
        HttpClient client = HttpClient.newBuilder().connectTimeout(HTTP_TIMEOUT)
                .followRedirects(HttpClient.Redirect.NEVER).build();
        HttpRequest request = HttpRequest.newBuilder(uri).timeout(HTTP_TIMEOUT)
                .header("Accept", "application/json").GET().build();
        return () -> {
            HttpResponse<InputStream> response;
            try {
                response = client.send(request, HttpResponse.BodyHandlers.ofInputStream());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted while fetching " + uri);
            }
            try (InputStream body = response.body()) {
                if (response.statusCode() != 200) {
                    throw new IOException("GET " + uri + " answered HTTP " + response.statusCode());
                }
                byte[] bytes = body.readNBytes(MAX_DOCUMENT_BYTES + 1);
                if (bytes.length > MAX_DOCUMENT_BYTES) {
                    throw new IOException("the JWK Set at " + uri + " is larger than " + MAX_DOCUMENT_BYTES
                            + " bytes");
                }
                return new String(bytes, StandardCharsets.UTF_8);
            }
        };
    }
}
