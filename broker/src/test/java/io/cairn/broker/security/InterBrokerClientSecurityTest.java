package io.cairn.broker.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.broker.config.SslSettings;
import io.cairn.metadata.image.ConfigResource;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.testkit.TestCertificates;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The inter-broker clients' TLS follows the inter-broker listener's reloaded stores (Kafka's replica fetcher and marker
 * sender channel builders are reconfigurables of that listener): after {@link DynamicSslStores} applies a new key
 * store, a new inter-broker connection presents the new certificate to the leader.
 */
@Timeout(60)
class InterBrokerClientSecurityTest {

    private static final String LISTENER = "SSL";

    @TempDir
    static Path dir;
    static TestCertificates certs;
    static Path renewed;
    static EventLoopGroup group;

    @BeforeAll
    static void generate() {
        certs = TestCertificates.create(dir.resolve("certs"));
        renewed = certs.newBrokerKeystore("broker-renewed");
        group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    }

    @AfterAll
    static void stop() {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    /** A broker's server.properties for an SSL inter-broker listener with mutual TLS. */
    private static Map<String, String> serverProperties() {
        Map<String, String> props = new HashMap<>(certs.brokerStoreConfig());
        props.put("listener.name.ssl.ssl.client.auth", "required");
        return props;
    }

    private static MetadataImage brokerConfigs(Map<String, String> broker1) {
        return new MetadataImage(7L, "c", 1, 1L, Map.of(), Map.of(), Map.of(),
                Map.of(ConfigResource.broker("1"), broker1), 0L, 0L, Map.of(), Map.of(), Map.of());
    }

    /** Connects with {@code client} to a TLS server requiring a certificate; the certificate the client presented. */
    private static Certificate presented(InterBrokerClientSecurity client, SslEngineFactory server) throws Exception {
        CompletableFuture<Certificate> peer = new CompletableFuture<>();
        Channel channel = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        SslHandler ssl = new SslHandler(server.newServerEngine());
                        ch.pipeline().addLast(ssl, new ChannelInboundHandlerAdapter() {
                            @Override
                            public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
                                if (evt instanceof SslHandshakeCompletionEvent) {
                                    SslHandshakeCompletionEvent done = (SslHandshakeCompletionEvent) evt;
                                    if (done.isSuccess()) {
                                        peer.complete(ssl.engine().getSession().getPeerCertificates()[0]);
                                    } else {
                                        peer.completeExceptionally(done.cause());
                                    }
                                }
                            }
                        });
                    }
                }).bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
        int port = ((InetSocketAddress) channel.localAddress()).getPort();
        try (Socket plain = new Socket("127.0.0.1", port)) {
            plain.setSoTimeout(10_000);
            Socket secured = client.clientTls().secure(plain, "localhost", port);
            secured.getOutputStream().write(0);
            return peer.get(10, TimeUnit.SECONDS);
        } finally {
            channel.close().sync();
        }
    }

    private static Certificate certificate(Path store, String alias) throws Exception {
        KeyStore keyStore = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            keyStore.load(in, certs.password().toCharArray());
        }
        return keyStore.getCertificate(alias);
    }

    @Test
    void newInterBrokerConnectionsShouldPresentTheInterBrokerListenersReloadedKeyStore() throws Exception {
        // Given: the inter-broker listener and the inter-broker clients, both from server.properties
        Map<String, String> props = serverProperties();
        SslSettings settings = SslSettings.forListener(props, LISTENER);
        SslFactory listener = new SslFactory(SslEngineFactory.create(settings), true);
        InterBrokerClientSecurity clients = InterBrokerClientSecurity.create(settings, null);
        DynamicSslStores stores = new DynamicSslStores(1, props, Map.of(LISTENER, listener), clients.reloadable());
        SslEngineFactory leader = SslEngineFactory.create(settings);
        assertThat(presented(clients, leader)).isEqualTo(certificate(certs.brokerKeystore(), "broker"));

        // When: kafka-configs --entity-name 1 --alter --add-config listener.name.ssl.ssl.keystore.location=...
        stores.apply(brokerConfigs(Map.of("listener.name.ssl.ssl.keystore.location", renewed.toString())));

        // Then
        assertThat(presented(clients, leader)).isEqualTo(certificate(renewed, "broker-renewed"));
    }

    @Test
    void theClientsShouldKeepTheirStoresWhenTheListenerRefusesTheNewOnes() throws Exception {
        // Given
        Map<String, String> props = serverProperties();
        SslSettings settings = SslSettings.forListener(props, LISTENER);
        SslFactory listener = new SslFactory(SslEngineFactory.create(settings), true);
        InterBrokerClientSecurity clients = InterBrokerClientSecurity.create(settings, null);
        DynamicSslStores stores = new DynamicSslStores(1, props, Map.of(LISTENER, listener), clients.reloadable());

        // When: a key store of another distinguished name (the client's), which Kafka's checks refuse
        stores.apply(brokerConfigs(Map.of("listener.name.ssl.ssl.keystore.location",
                certs.clientKeystore().toString())));

        // Then
        assertThat(presented(clients, SslEngineFactory.create(settings)))
                .isEqualTo(certificate(certs.brokerKeystore(), "broker"));
    }
}
