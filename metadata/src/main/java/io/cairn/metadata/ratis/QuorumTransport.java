package io.cairn.metadata.ratis;

import io.cairn.metadata.QuorumTls;
import java.net.Socket;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;
import javax.net.ssl.X509TrustManager;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.GrpcTlsConfig;

/**
 * The Ratis parameters that secure the quorum's gRPC transport with a {@link QuorumTls}: one TLS configuration for
 * the Raft server (the peer service, and the client and admin services it also serves on its one port), for its
 * channels to the other peers (votes, log appends to voters and listeners) and for this node's Raft clients
 * (commands, heartbeats and registrations to the active controller, listener registration). With mutual TLS each
 * server requires a client certificate checked against the trust store and each client presents its own.
 *
 * <p>Ratis' {@code GrpcTlsConfig} takes key and trust managers and the mutual flag only: the gRPC TLS stack
 * (BoringSSL, through Netty) then negotiates TLSv1.2 or TLSv1.3 with its default cipher suites, and its clients
 * always check the server's host name (HTTPS rules). When {@code ssl.endpoint.identification.algorithm} is empty the
 * trust manager is wrapped so that the chain is still checked but the host name is not, as Kafka does then.
 *
 * <p>Stateless, thread-safe.
 */
final class QuorumTransport {

    private QuorumTransport() {
    }

    /** The parameters for a Raft server or client of this node; null (Ratis' PLAINTEXT default) without TLS. */
    static Parameters parameters(QuorumTls tls) {
        if (tls == null) {
            return null;
        }
        X509TrustManager trust = tls.checkHostName() ? tls.trustManager() : new ChainOnlyTrustManager(
                tls.trustManager());
        Parameters parameters = new Parameters();
        GrpcConfigKeys.TLS.setConf(parameters, new GrpcTlsConfig(tls.keyManager(), trust, tls.mutual()));
        return parameters;
    }

    /**
     * Checks a peer's certificate chain against the trust store without the host name check that the engine's
     * endpoint identification algorithm would add (gRPC's client sets HTTPS on every engine).
     */
    static final class ChainOnlyTrustManager extends X509ExtendedTrustManager {

        private final X509TrustManager delegate;

        ChainOnlyTrustManager(X509TrustManager delegate) {
            this.delegate = delegate;
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            delegate.checkClientTrusted(chain, authType);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            delegate.checkServerTrusted(chain, authType);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            delegate.checkClientTrusted(chain, authType);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            delegate.checkServerTrusted(chain, authType);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            delegate.checkClientTrusted(chain, authType);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            delegate.checkServerTrusted(chain, authType);
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return delegate.getAcceptedIssuers();
        }
    }
}
