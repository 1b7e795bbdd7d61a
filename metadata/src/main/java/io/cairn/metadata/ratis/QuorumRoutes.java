package io.cairn.metadata.ratis;

import io.cairn.metadata.QuorumFront;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.apache.ratis.thirdparty.io.grpc.EquivalentAddressGroup;
import org.apache.ratis.thirdparty.io.grpc.NameResolver;
import org.apache.ratis.thirdparty.io.grpc.NameResolverProvider;
import org.apache.ratis.thirdparty.io.grpc.NameResolverRegistry;
import org.apache.ratis.thirdparty.io.grpc.Status;
import org.apache.ratis.thirdparty.io.grpc.internal.DnsNameResolverProvider;

/**
 * Sends the quorum's outbound gRPC connections through a {@link QuorumFront}. Ratis dials each peer at the
 * {@code host:port} of its Raft configuration with gRPC's default name resolution and no hook of its own; this
 * registers, once per JVM and only when a fronted node starts, a name resolver in Ratis' (shaded) gRPC that takes
 * precedence over DNS and resolves every target to the loopback address the active front routes it through. With no
 * front active (all closed) targets resolve through DNS as before. The registry is the JVM's, so one JVM serves one
 * fronted quorum: every fronted node started in it routes through the most recently started front.
 *
 * <p>Thread-safe.
 */
final class QuorumRoutes {

    private static final Logger LOGGER = LogManager.getLogger(QuorumRoutes.class);
    /** The scheme of the resolver; above DNS's priority (5) so that a bare {@code host:port} target comes here. */
    private static final String SCHEME = "cairn-quorum";
    private static final int PRIORITY = 8;

    private static final List<QuorumFront> FRONTS = new CopyOnWriteArrayList<>();
    private static boolean registered;

    private QuorumRoutes() {
    }

    /** Routes this JVM's quorum connections through {@code front} until {@link #remove}. */
    static synchronized void add(QuorumFront front) {
        if (!registered) {
            NameResolverRegistry.getDefaultRegistry().register(new Provider());
            registered = true;
        }
        FRONTS.add(front);
    }

    static void remove(QuorumFront front) {
        FRONTS.remove(front);
    }

    private static QuorumFront active() {
        int n = FRONTS.size();
        return n == 0 ? null : FRONTS.get(n - 1);
    }

    /** Resolves {@code cairn-quorum:///host:port}, or delegates to DNS when no front is active. */
    private static final class Provider extends NameResolverProvider {

        private final DnsNameResolverProvider dns = new DnsNameResolverProvider();

        @Override
        protected boolean isAvailable() {
            return true;
        }

        @Override
        protected int priority() {
            return PRIORITY;
        }

        @Override
        public String getDefaultScheme() {
            return SCHEME;
        }

        @Override
        public NameResolver newNameResolver(URI targetUri, NameResolver.Args args) {
            if (!SCHEME.equals(targetUri.getScheme())) {
                return null;
            }
            String target = targetUri.getPath().startsWith("/") ? targetUri.getPath().substring(1)
                    : targetUri.getPath();
            QuorumFront front = active();
            if (front == null) {
                return dns.newNameResolver(URI.create("dns:///" + target), args);
            }
            return new Routed(front, target);
        }
    }

    /** One target resolved to its route through the front. */
    private static final class Routed extends NameResolver {

        private final QuorumFront front;
        private final String target;

        Routed(QuorumFront front, String target) {
            this.front = front;
            this.target = target;
        }

        @Override
        public String getServiceAuthority() {
            return target;
        }

        @Override
        public void start(Listener2 listener) {
            int colon = target.lastIndexOf(':');
            try {
                if (colon <= 0) {
                    throw new IOException("no port in " + target);
                }
                String host = target.substring(0, colon);
                if (host.startsWith("[") && host.endsWith("]")) {
                    host = host.substring(1, host.length() - 1);
                }
                InetSocketAddress local = front.route(host, Integer.parseInt(target.substring(colon + 1)));
                listener.onResult(ResolutionResult.newBuilder()
                        .setAddresses(List.of(new EquivalentAddressGroup(local))).build());
            } catch (IOException | RuntimeException e) {
                LOGGER.warn("Cannot route the metadata quorum's connection to {}: {}", target, e.toString());
                listener.onError(Status.UNAVAILABLE.withDescription("no route to " + target + ": " + e));
            }
        }

        @Override
        public void shutdown() {
        }
    }
}
