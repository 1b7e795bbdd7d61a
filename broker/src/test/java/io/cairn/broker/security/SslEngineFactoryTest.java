package io.cairn.broker.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.broker.config.ConfigException;
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
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLSocket;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.internals.BrokerSecurityConfigs;
import org.apache.kafka.common.network.ConnectionMode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SslEngineFactoryTest {

    @TempDir
    static Path dir;
    static TestCertificates certs;
    static EventLoopGroup group;

    /** A renewed broker key store: a new key and certificate with the broker's DN and SANs, signed by the CA. */
    static Path renewed;

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

    private static SslSettings settings(Map<String, String> props) {
        return SslSettings.forListener(props, "SSL");
    }

    private static Map<String, String> pkcs12Server() {
        Map<String, String> props = new HashMap<>();
        props.put("ssl.keystore.type", "PKCS12");
        props.put("ssl.keystore.location", certs.brokerKeystore().toString());
        props.put("ssl.keystore.password", certs.password());
        props.put("ssl.truststore.type", "PKCS12");
        props.put("ssl.truststore.location", certs.truststore().toString());
        props.put("ssl.truststore.password", certs.password());
        return props;
    }

    private static Map<String, String> client(boolean withCertificate) {
        Map<String, String> props = new HashMap<>();
        props.put("ssl.truststore.type", "PEM");
        props.put("ssl.truststore.certificates", certs.caPemText());
        if (withCertificate) {
            props.put("ssl.keystore.type", "PKCS12");
            props.put("ssl.keystore.location", certs.clientKeystore().toString());
            props.put("ssl.keystore.password", certs.password());
        }
        return props;
    }

    /** Serves TLS with {@code server} on a loopback port; completes with the principal of the first handshake. */
    private static CompletableFuture<KafkaPrincipal> serve(SslEngineFactory server, CompletableFuture<Integer> port)
            throws InterruptedException {
        CompletableFuture<KafkaPrincipal> principal = new CompletableFuture<>();
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
                                        principal.complete(server.principal(ssl.engine().getSession()));
                                    } else {
                                        principal.completeExceptionally(done.cause());
                                    }
                                }
                            }

                            @Override
                            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                                principal.completeExceptionally(cause);
                                ctx.close();
                            }
                        });
                    }
                }).bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
        port.complete(((InetSocketAddress) channel.localAddress()).getPort());
        principal.whenComplete((p, e) -> channel.close());
        return principal;
    }

    private static KafkaPrincipal handshake(Map<String, String> serverProps, Map<String, String> clientProps)
            throws Exception {
        SslEngineFactory server = SslEngineFactory.create(settings(serverProps));
        SslEngineFactory client = SslEngineFactory.create(settings(clientProps));
        CompletableFuture<Integer> port = new CompletableFuture<>();
        CompletableFuture<KafkaPrincipal> principal = serve(server, port);
        Socket plain = new Socket("127.0.0.1", port.get());
        plain.setSoTimeout(10_000);
        try (SSLSocket socket = client.connectClient(plain, "localhost", port.get())) {
            // TLS 1.3 reports a refused client certificate only on the first read.
            socket.getOutputStream().write(0);
            return principal.get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void shouldHandshakeWithAPkcs12ServerAndNameAnAnonymousClientWithoutCertificate() throws Exception {
        assertThat(handshake(pkcs12Server(), client(false))).isEqualTo(KafkaPrincipal.ANONYMOUS);
    }

    @Test
    void shouldNameTheClientByItsDistinguishedNameUnderMutualTls() throws Exception {
        Map<String, String> server = pkcs12Server();
        server.put("ssl.client.auth", "required");
        assertThat(handshake(server, client(true)).toString()).isEqualTo("User:" + TestCertificates.CLIENT_DN);

        server.put("ssl.principal.mapping.rules", "RULE:^CN=(.*?),OU=(.*?),.*$/$1@$2/L");
        assertThat(handshake(server, client(true)).toString()).isEqualTo("User:client@cairn");
    }

    @Test
    void shouldRefuseAClientWithoutCertificateWhenClientAuthIsRequired() {
        Map<String, String> server = pkcs12Server();
        server.put("ssl.client.auth", "required");
        assertThatThrownBy(() -> handshake(server, client(false))).satisfiesAnyOf(
                e -> assertThat(e).isInstanceOf(IOException.class),
                e -> assertThat(e).hasRootCauseInstanceOf(javax.net.ssl.SSLException.class));
    }

    @Test
    void shouldLoadJksAndPemKeystoresFileOrInline() throws Exception {
        Map<String, String> jks = new HashMap<>();
        jks.put("ssl.keystore.location", certs.brokerKeystoreJks().toString());
        jks.put("ssl.keystore.password", certs.password());
        jks.put("ssl.key.password", certs.password());
        assertThat(handshake(jks, client(false))).isEqualTo(KafkaPrincipal.ANONYMOUS);

        Map<String, String> pemFile = Map.of("ssl.keystore.type", "PEM",
                "ssl.keystore.location", certs.brokerPem().toString());
        assertThat(handshake(pemFile, client(false))).isEqualTo(KafkaPrincipal.ANONYMOUS);

        // As a properties file holds it: the base64 on one line.
        Map<String, String> pemInline = Map.of("ssl.keystore.type", "PEM",
                "ssl.keystore.key", certs.brokerKeyPem().replace("\n", ""),
                "ssl.keystore.certificate.chain", certs.brokerChainPem());
        assertThat(handshake(pemInline, client(false))).isEqualTo(KafkaPrincipal.ANONYMOUS);
    }

    @Test
    void shouldVerifyTheServerHostNameUnlessIdentificationIsDisabled() throws Exception {
        SslEngineFactory server = SslEngineFactory.create(settings(pkcs12Server()));
        CompletableFuture<Integer> port = new CompletableFuture<>();
        CompletableFuture<KafkaPrincipal> principal = serve(server, port);
        SslEngineFactory client = SslEngineFactory.create(settings(client(false)));
        // 127.0.0.2 is not among the certificate's names (localhost, 127.0.0.1).
        assertThatThrownBy(() -> client.connectClient(new Socket("127.0.0.1", port.get()), "127.0.0.2", port.get()))
                .isInstanceOf(javax.net.ssl.SSLHandshakeException.class);
        principal.cancel(true);

        Map<String, String> noCheck = client(false);
        noCheck.put("ssl.endpoint.identification.algorithm", "");
        CompletableFuture<Integer> port2 = new CompletableFuture<>();
        CompletableFuture<KafkaPrincipal> principal2 = serve(server, port2);
        try (SSLSocket socket = SslEngineFactory.create(settings(noCheck))
                .connectClient(new Socket("127.0.0.1", port2.get()), "127.0.0.2", port2.get())) {
            socket.getOutputStream().write(0);
            assertThat(principal2.get(10, TimeUnit.SECONDS)).isEqualTo(KafkaPrincipal.ANONYMOUS);
        }
    }

    @Test
    void shouldFailWithOneConfigExceptionNamingTheKeyForBadStores() {
        Map<String, String> missing = pkcs12Server();
        missing.put("listener.name.ssl.ssl.keystore.location", dir.resolve("nope.p12").toString());
        assertThatThrownBy(() -> SslEngineFactory.create(settings(missing)))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("configuration listener.name.ssl.ssl.keystore.location:")
                .hasMessageContaining("does not exist");

        Map<String, String> wrongPassword = pkcs12Server();
        wrongPassword.put("ssl.keystore.password", "wrong");
        assertThatThrownBy(() -> SslEngineFactory.create(settings(wrongPassword)))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("configuration ssl.keystore.password:")
                .hasMessageNotContaining("Invalid value wrong");

        Map<String, String> wrongType = pkcs12Server();
        wrongType.put("ssl.keystore.type", "NOPE");
        assertThatThrownBy(() -> SslEngineFactory.create(settings(wrongType)))
                .hasMessageContaining("configuration ssl.keystore.type:");

        Map<String, String> badProtocol = pkcs12Server();
        badProtocol.put("ssl.enabled.protocols", "TLSv9");
        assertThatThrownBy(() -> SslEngineFactory.create(settings(badProtocol)))
                .hasMessageContaining("configuration ssl.enabled.protocols:");

        Map<String, String> badPem = Map.of("ssl.keystore.type", "PEM", "ssl.keystore.key", "garbage",
                "ssl.keystore.certificate.chain", certs.brokerChainPem());
        assertThatThrownBy(() -> SslEngineFactory.create(settings(badPem)))
                .hasMessageContaining("configuration ssl.keystore.key:")
                .hasMessageContaining("expected one PEM private key");

        Map<String, String> badRules = pkcs12Server();
        badRules.put("ssl.principal.mapping.rules", "RULE:broken");
        assertThatThrownBy(() -> SslEngineFactory.create(settings(badRules)))
                .hasMessageContaining("configuration ssl.principal.mapping.rules:");
    }

    /**
     * {@link SslFactory}: a listener's stores replaced while it serves, with Kafka's checks; each refusal compared
     * with what Kafka's own {@code SslFactory} (kafka-clients) says for the same stores.
     */
    @Nested
    class ReloadedStores {

        private static final String RENEWED_ALIAS = "broker-renewed";

        private SslFactory listener(Map<String, String> props, boolean interBroker) {
            return new SslFactory(SslEngineFactory.create(settings(props)), interBroker);
        }

        /** The certificate a new client (trusting the CA, checking the host name) is shown by {@code server}. */
        private X509Certificate served(SslEngineFactory server) throws Exception {
            SSLEngine client = SslEngineFactory.create(settings(client(false))).newClientEngine("localhost", 9093);
            SslEngineValidator.handshake(client, server.newServerEngine());
            return (X509Certificate) client.getSession().getPeerCertificates()[0];
        }

        private X509Certificate certificate(Path store, String alias) throws Exception {
            KeyStore keyStore = KeyStore.getInstance("PKCS12");
            try (InputStream in = Files.newInputStream(store)) {
                keyStore.load(in, certs.password().toCharArray());
            }
            return (X509Certificate) keyStore.getCertificate(alias);
        }

        /** Kafka's refusal of replacing {@code before}'s stores with {@code after}'s, or null when it accepts. */
        private String kafkaRefusal(Map<String, String> before, Map<String, String> after, boolean interBroker) {
            org.apache.kafka.common.security.ssl.SslFactory kafka = new org.apache.kafka.common.security.ssl
                    .SslFactory(ConnectionMode.SERVER, null, interBroker);
            kafka.configure(kafkaValues(before));
            try {
                kafka.validateReconfiguration(kafkaValues(after));
                return null;
            } catch (org.apache.kafka.common.config.ConfigException e) {
                return e.getMessage();
            } finally {
                kafka.close();
            }
        }

        private Map<String, Object> kafkaValues(Map<String, String> props) {
            ConfigDef def = new ConfigDef().withClientSslSupport()
                    .define(BrokerSecurityConfigs.SSL_CLIENT_AUTH_CONFIG, ConfigDef.Type.STRING, "none",
                            ConfigDef.Importance.LOW, "")
                    .define(BrokerSecurityConfigs.SSL_ALLOW_DN_CHANGES_CONFIG, ConfigDef.Type.BOOLEAN, false,
                            ConfigDef.Importance.LOW, "")
                    .define(BrokerSecurityConfigs.SSL_ALLOW_SAN_CHANGES_CONFIG, ConfigDef.Type.BOOLEAN, false,
                            ConfigDef.Importance.LOW, "");
            return new HashMap<>(new AbstractConfig(def, props, false).values());
        }

        @Test
        void newConnectionsShouldGetTheRenewedCertificateAndExistingOnesKeepTheirs() throws Exception {
            // Given
            SslFactory factory = listener(pkcs12Server(), false);
            SslEngineFactory before = factory.current();
            Map<String, String> swapped = pkcs12Server();
            swapped.put("listener.name.ssl.ssl.keystore.location", renewed.toString());

            // When
            boolean replaced = factory.reconfigure(settings(swapped));

            // Then
            assertThat(replaced).isTrue();
            assertThat(served(factory.current())).isEqualTo(certificate(renewed, RENEWED_ALIAS));
            assertThat(served(before)).isEqualTo(certificate(certs.brokerKeystore(), "broker"));
            assertThat(factory.reconfigure(settings(swapped))).isFalse();
        }

        @Test
        void aStoreFileRewrittenInPlaceShouldBeReloadedWithTheSameSettings() throws Exception {
            // Given: a key store file that is then overwritten with the renewed store (a later modification time)
            Path file = dir.resolve("in-place.p12");
            Files.copy(certs.brokerKeystore(), file, StandardCopyOption.REPLACE_EXISTING);
            Map<String, String> props = pkcs12Server();
            props.put("ssl.keystore.location", file.toString());
            SslFactory factory = listener(props, false);
            FileTime loaded = Files.getLastModifiedTime(file);
            Files.copy(renewed, file, StandardCopyOption.REPLACE_EXISTING);
            Files.setLastModifiedTime(file, FileTime.fromMillis(loaded.toMillis() + 2000));

            // When
            boolean replaced = factory.reconfigure(settings(props));

            // Then
            assertThat(replaced).isTrue();
            assertThat(served(factory.current())).isEqualTo(certificate(renewed, RENEWED_ALIAS));
            assertThat(factory.reconfigure(settings(props))).isFalse();
        }

        @Test
        void replacementsShouldBeRefusedWithKafkasMessages() {
            // Given: a listener with the broker's PKCS12 stores, and changes Kafka refuses
            Map<String, String> before = pkcs12Server();
            Map<String, String> otherDn = pkcs12Server();
            otherDn.put("ssl.keystore.location", certs.clientKeystore().toString());
            Map<String, String> allowingDnChanges = new HashMap<>(before);
            allowingDnChanges.put("ssl.allow.dn.changes", "true");
            Map<String, String> pem = new HashMap<>(before);
            pem.remove("ssl.keystore.password");
            pem.put("ssl.keystore.type", "PEM");
            pem.put("ssl.keystore.location", certs.brokerPem().toString());
            Map<String, String> noKeystore = new HashMap<>(before);
            noKeystore.remove("ssl.keystore.location");
            noKeystore.remove("ssl.keystore.password");
            Map<String, String> beforeWithoutTruststore = new HashMap<>(noKeystore);
            beforeWithoutTruststore.keySet().removeIf(k -> k.startsWith("ssl.truststore"));
            beforeWithoutTruststore.putAll(Map.of("ssl.keystore.location", certs.brokerKeystore().toString(),
                    "ssl.keystore.password", certs.password()));

            for (Map<String, String>[] change : List.<Map<String, String>[]>of(
                    pair(before, otherDn), pair(allowingDnChanges, otherDn), pair(before, pem),
                    pair(before, noKeystore), pair(beforeWithoutTruststore, before))) {
                // When
                Optional<String> refused = listener(change[0], false).validateReconfiguration(settings(change[1]));

                // Then
                assertThat(refused).as("%s -> %s", change[0], change[1])
                        .contains(kafkaRefusal(change[0], change[1], false));
            }
            assertThat(listener(before, false).validateReconfiguration(settings(otherDn)).orElseThrow())
                    .startsWith("Validation of dynamic config update of SSLFactory failed: org.apache.kafka.common"
                            + ".config.ConfigException: Keystore DistinguishedName does not match:  existing=");
        }

        @Test
        void theInterBrokerListenersNewStoresShouldCompleteHandshakesWithTheOldOnes() {
            // Given: the inter-broker listener, whose new settings drop the trust store (the JVM's CAs do not know
            // the test CA, so the new side cannot verify the old)
            Map<String, String> before = pkcs12Server();
            Map<String, String> jvmTrust = new HashMap<>(before);
            jvmTrust.keySet().removeIf(k -> k.startsWith("ssl.truststore"));
            Map<String, String> swapped = new HashMap<>(before);
            swapped.put("ssl.keystore.location", renewed.toString());

            // When
            Optional<String> refused = listener(before, true).validateReconfiguration(settings(jvmTrust));

            // Then
            assertThat(refused).contains(kafkaRefusal(before, jvmTrust, true));
            assertThat(refused.orElseThrow()).contains("SSLHandshakeException");
            assertThat(listener(before, false).validateReconfiguration(settings(jvmTrust))).isEmpty();
            assertThat(listener(before, true).validateReconfiguration(settings(swapped))).isEmpty();
            assertThat(kafkaRefusal(before, swapped, true)).isNull();
        }

        @SuppressWarnings("unchecked")
        private static Map<String, String>[] pair(Map<String, String> before, Map<String, String> after) {
            return new Map[] {before, after};
        }
    }

    /**
     * The inter-broker clients' TLS follows the inter-broker listener's reloaded stores (Kafka's replica fetcher and
     * marker sender channel builders are reconfigurables of that listener): after {@link DynamicSslStores} applies a
     * new key store, a new inter-broker connection presents the new certificate to the leader.
     */
    @Nested
    class InterBrokerClients {

        private static final String LISTENER = "SSL";

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

        /** Connects with {@code client} to a TLS server requiring a certificate; the certificate it presented. */
        private static Certificate presented(InterBrokerClientSecurity client, SslEngineFactory server)
                throws Exception {
            CompletableFuture<Certificate> peer = new CompletableFuture<>();
            Channel channel = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            SslHandler ssl = new SslHandler(server.newServerEngine());
                            ch.pipeline().addLast(ssl, new ChannelInboundHandlerAdapter() {
                                @Override
                                public void userEventTriggered(ChannelHandlerContext ctx, Object evt)
                                        throws Exception {
                                    if (evt instanceof SslHandshakeCompletionEvent) {
                                        SslHandshakeCompletionEvent done = (SslHandshakeCompletionEvent) evt;
                                        if (done.isSuccess()) {
                                            peer.complete(ssl.engine().getSession()
                                                    .getPeerCertificates()[0]);
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
        void aListenersOtherSslKeysShouldReachItsNewConnectionsAndBeCheckedFirst() throws Exception {
            // Given
            Map<String, String> props = serverProperties();
            SslSettings settings = SslSettings.forListener(props, LISTENER);
            SslFactory listener = new SslFactory(SslEngineFactory.create(settings), false);
            DynamicSslStores stores = new DynamicSslStores(1, props, Map.of(LISTENER, listener), Map.of());
            Map<String, String> tls12 = Map.of("listener.name.ssl.ssl.enabled.protocols", "TLSv1.2",
                    "listener.name.ssl.ssl.client.auth", "none");

            // When: kafka-configs --entity-name 1 --alter --add-config listener.name.ssl.ssl.enabled.protocols=...
            Optional<String> checked = stores.validate("1", tls12, brokerConfigs(Map.of()));
            stores.apply(brokerConfigs(tls12));

            // Then
            assertThat(checked).isEmpty();
            assertThat(listener.current().newServerEngine().getEnabledProtocols()).containsExactly("TLSv1.2");
            assertThat(listener.current().newServerEngine().getNeedClientAuth()).isFalse();
            assertThat(stores.validate("1", Map.of("listener.name.ssl.ssl.cipher.suites", "TLS_NO_SUCH_SUITE"),
                    brokerConfigs(tls12))).hasValueSatisfying(refusal -> assertThat(refusal).startsWith(
                    "Invalid value org.apache.kafka.common.config.ConfigException: Validation of dynamic config "
                    + "update of SSLFactory failed: org.apache.kafka.common.config.ConfigException: Invalid value "
                    + "TLS_NO_SUCH_SUITE for configuration listener.name.ssl.ssl.cipher.suites: "));
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
}
