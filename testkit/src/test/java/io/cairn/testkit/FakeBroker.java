package io.cairn.testkit;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;

/**
 * A stand-in broker for harness tests, run as its own JVM: listens on {@code 127.0.0.1:<args[0]>} and answers every
 * request frame with a frame that holds only the request's correlation id; exits with code 3 at once when
 * {@code args[1]} is {@code fail}. Single-threaded; one connection at a time.
 */
public final class FakeBroker {

    private FakeBroker() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length > 1 && args[1].equals("fail")) {
            System.out.println("fake broker refusing to start");
            System.exit(3);
        }
        int port = Integer.parseInt(args[0]);
        try (ServerSocket server = new ServerSocket(port, 50, InetAddress.getByName("127.0.0.1"))) {
            System.out.println("fake broker listening on " + port);
            while (true) {
                try (Socket socket = server.accept()) {
                    serve(socket);
                } catch (EOFException e) {
                    // The client went away; wait for the next one.
                }
            }
        }
    }

    private static void serve(Socket socket) throws IOException {
        DataInputStream in = new DataInputStream(socket.getInputStream());
        DataOutputStream out = new DataOutputStream(socket.getOutputStream());
        while (true) {
            int size = in.readInt();
            byte[] frame = new byte[size];
            in.readFully(frame);
            int correlationId = ((frame[4] & 0xff) << 24) | ((frame[5] & 0xff) << 16) | ((frame[6] & 0xff) << 8)
                    | (frame[7] & 0xff);
            out.writeInt(4);
            out.writeInt(correlationId);
            out.flush();
        }
    }
}
