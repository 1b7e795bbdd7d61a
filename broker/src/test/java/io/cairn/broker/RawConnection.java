package io.cairn.broker;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;

/**
 * A blocking Kafka connection over a plain socket for tests that write exact bytes: frames, half frames, garbage.
 * Not thread-safe.
 */
public final class RawConnection implements AutoCloseable {

    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;

    public RawConnection(String host, int port) throws IOException {
        socket = new Socket();
        socket.connect(new InetSocketAddress(host, port), 10_000);
        socket.setSoTimeout(10_000);
        socket.setTcpNoDelay(true);
        in = new DataInputStream(socket.getInputStream());
        out = socket.getOutputStream();
    }

    public int localPort() {
        return socket.getLocalPort();
    }

    public void send(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    /** Writes {@code payload} (header + body) behind its 4-byte size. */
    public void sendFrame(ByteBuffer payload) throws IOException {
        send(frame(payload));
    }

    public static byte[] frame(ByteBuffer payload) {
        ByteBuffer framed = ByteBuffer.allocate(4 + payload.remaining());
        framed.putInt(payload.remaining()).put(payload.duplicate());
        return framed.array();
    }

    /** Reads one response: its payload without the size prefix. */
    public ByteBuffer readFrame() throws IOException {
        int size = in.readInt();
        byte[] payload = new byte[size];
        in.readFully(payload);
        return ByteBuffer.wrap(payload);
    }

    /** Reads one response, waiting at most {@code timeoutMs} for it (then {@code SocketTimeoutException}). */
    public ByteBuffer readFrameWithin(int timeoutMs) throws IOException {
        int before = socket.getSoTimeout();
        socket.setSoTimeout(timeoutMs);
        try {
            return readFrame();
        } finally {
            if (!socket.isClosed()) {
                socket.setSoTimeout(before);
            }
        }
    }

    /** True when the server closed the connection (end of stream or reset) before the socket timeout. */
    public boolean closedByServer() throws IOException {
        try {
            return in.read() == -1;
        } catch (EOFException e) {
            return true;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException e) {
            return "Connection reset".equals(e.getMessage());
        }
    }

    /** True when response bytes have arrived and not been read yet (never waits). */
    public boolean hasUnreadBytes() throws IOException {
        return in.available() > 0;
    }

    public void shutdownOutput() throws IOException {
        socket.shutdownOutput();
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
