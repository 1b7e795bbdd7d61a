package io.cairn.broker.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** num.network.threads resized live: new connections use the new set; a removed thread's connections close. */
@Timeout(30)
class NetworkThreadsTest {

    private final NetworkThreads threads = new NetworkThreads(1, NioIoHandler.newFactory(), "PLAINTEXT");
    private final EventLoopGroup acceptor = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    /** The thread each accepted connection became active on, in accept order. */
    private final List<Thread> servedOn = new CopyOnWriteArrayList<>();
    private final List<Socket> clients = new CopyOnWriteArrayList<>();
    private Channel server;

    @BeforeEach
    void bind() throws InterruptedException {
        server = new ServerBootstrap().group(acceptor, threads).channel(NioServerSocketChannel.class)
                .childHandler(new Recorder()).bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0)).sync()
                .channel();
    }

    /** Records the thread each connection became active on. */
    @ChannelHandler.Sharable
    private final class Recorder extends ChannelInboundHandlerAdapter {
        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            servedOn.add(Thread.currentThread());
            ctx.fireChannelActive();
        }
    }

    @AfterEach
    void close() throws IOException {
        for (Socket client : clients) {
            client.close();
        }
        server.close().awaitUninterruptibly();
        threads.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
        acceptor.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
    }

    private Socket connect() throws IOException {
        int before = servedOn.size();
        Socket client = new Socket(InetAddress.getLoopbackAddress(), ((InetSocketAddress) server.localAddress())
                .getPort());
        clients.add(client);
        await().atMost(Duration.ofSeconds(10)).until(() -> servedOn.size() == before + 1);
        return client;
    }

    @Test
    void growingServesNewConnectionsOnNewThreadsAndShrinkingClosesTheRemovedThreadsConnections() throws Exception {
        // Given: one connection on the one thread, then two more threads
        Socket first = connect();
        threads.resize(3);
        Socket second = connect();
        Socket third = connect();
        Socket fourth = connect();
        assertThat(threads.size()).isEqualTo(3);
        assertThat(servedOn.stream().distinct().count()).isEqualTo(3);
        Thread kept = servedOn.get(0);

        // When
        threads.resize(1);

        // Then: connections on the removed threads are closed; the kept thread's stay open and it serves new ones
        for (int i = 1; i < 4; i++) {
            Socket client = List.of(first, second, third, fourth).get(i);
            if (servedOn.get(i) != kept) {
                client.setSoTimeout(10_000);
                try (InputStream in = client.getInputStream()) {
                    assertThat(in.read()).isEqualTo(-1);
                }
            }
        }
        first.setSoTimeout(200);
        assertThat(readTimesOut(first)).isTrue();
        connect();
        assertThat(servedOn.get(servedOn.size() - 1)).isSameAs(kept);
        assertThat(threads.size()).isEqualTo(1);
    }

    private static boolean readTimesOut(Socket client) throws IOException {
        try {
            client.getInputStream().read();
            return false;
        } catch (java.net.SocketTimeoutException e) {
            return true;
        }
    }
}
