package io.cairn.testkit;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A throw-away certificate authority and the stores TLS tests need, made at test time with the JDK's
 * {@code keytool} (nothing is checked into git): a CA, an EC (P-256) broker key pair for {@value #BROKER_DN} with
 * the subject alternative names {@code localhost} and {@code 127.0.0.1} (so host name verification passes on
 * loopback), and a client key pair {@value #CLIENT_DN}, both signed by the CA. Stores are PKCS12 (the broker's also
 * as JKS) with the password {@link #password()}; the CA certificate and the broker's key and chain are also written
 * as PEM.
 *
 * <p>Building one runs keytool about fifteen times: its class in this JVM where the JDK opens its package to this
 * module (the poms' test JVM options), well under a second; else a JVM each, a few seconds. Share one per test class.
 * Immutable once built but for the key stores {@link #newBrokerKeystore} adds.
 */
public final class TestCertificates {

    /** The distinguished name of the client certificate, as the broker's DEFAULT mapping names its principal. */
    public static final String CLIENT_DN = "CN=client,OU=Cairn,O=Test";
    /** The distinguished name of the broker certificate. */
    public static final String BROKER_DN = "CN=localhost,OU=Cairn,O=Test";
    private static final String PASSWORD = "cairn-test-secret";

    private static final String KEYTOOL_CLASS = "sun.security.tools.keytool.Main";
    private static final Method IN_PROCESS_KEYTOOL = inProcessKeytool();

    private final Path dir;

    private TestCertificates(Path dir) {
        this.dir = dir;
    }

    /** Generates everything into {@code dir} (created if needed). */
    public static TestCertificates create(Path dir) {
        try {
            Files.createDirectories(dir);
            TestCertificates certificates = new TestCertificates(dir);
            certificates.generate();
            return certificates;
        } catch (IOException e) {
            throw new UncheckedIOException("Could not generate test certificates in " + dir, e);
        }
    }

    private void generate() throws IOException {
        keytool("-genkeypair", "-alias", "ca", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=Cairn Test CA",
                "-ext", "bc:c", "-validity", "7", "-keystore", file("ca.p12"), "-storetype", "PKCS12",
                "-storepass", PASSWORD, "-keypass", PASSWORD);
        keytool("-exportcert", "-rfc", "-alias", "ca", "-keystore", file("ca.p12"), "-storepass", PASSWORD,
                "-file", file("ca.pem"));
        keytool("-importcert", "-noprompt", "-alias", "ca", "-file", file("ca.pem"), "-keystore",
                file("truststore.p12"), "-storetype", "PKCS12", "-storepass", PASSWORD);
        signed("broker", BROKER_DN, "SAN=dns:localhost,ip:127.0.0.1");
        signed("client", CLIENT_DN, null);
        keytool("-importkeystore", "-srckeystore", file("broker.p12"), "-srcstoretype", "PKCS12",
                "-srcstorepass", PASSWORD, "-destkeystore", file("broker.jks"), "-deststoretype", "JKS",
                "-deststorepass", PASSWORD, "-destkeypass", PASSWORD, "-noprompt");
        Files.writeString(dir.resolve("broker-key.pem"), privateKeyPem("broker"), StandardCharsets.US_ASCII);
        String chain = Files.readString(dir.resolve("broker.crt"), StandardCharsets.US_ASCII).trim() + "\n"
                + Files.readString(dir.resolve("ca.pem"), StandardCharsets.US_ASCII).trim() + "\n";
        Files.writeString(dir.resolve("broker-chain.pem"), chain, StandardCharsets.US_ASCII);
        Files.writeString(dir.resolve("broker.pem"), privateKeyPem("broker") + chain, StandardCharsets.US_ASCII);
    }

    /** A key pair {@code name} for {@code dn}, signed by the CA, with the CA in its chain. */
    private void signed(String name, String dn, String extension) throws IOException {
        keytool("-genkeypair", "-alias", name, "-keyalg", "EC", "-groupname", "secp256r1", "-dname", dn,
                "-validity", "7",
                "-keystore", file(name + ".p12"), "-storetype", "PKCS12", "-storepass", PASSWORD, "-keypass",
                PASSWORD);
        keytool("-certreq", "-alias", name, "-keystore", file(name + ".p12"), "-storepass", PASSWORD, "-file",
                file(name + ".csr"));
        List<String> gencert = new ArrayList<>(List.of("-gencert", "-rfc", "-alias", "ca", "-keystore",
                file("ca.p12"), "-storepass", PASSWORD, "-infile", file(name + ".csr"), "-outfile",
                file(name + ".crt"), "-validity", "7"));
        if (extension != null) {
            gencert.addAll(List.of("-ext", extension));
        }
        keytool(gencert.toArray(new String[0]));
        keytool("-importcert", "-noprompt", "-alias", "ca", "-file", file("ca.pem"), "-keystore",
                file(name + ".p12"), "-storepass", PASSWORD);
        keytool("-importcert", "-alias", name, "-file", file(name + ".crt"), "-keystore", file(name + ".p12"),
                "-storepass", PASSWORD);
    }

    private String privateKeyPem(String name) throws IOException {
        try (InputStream in = Files.newInputStream(dir.resolve(name + ".p12"))) {
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(in, PASSWORD.toCharArray());
            Key key = store.getKey(name, PASSWORD.toCharArray());
            String base64 = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                    .encodeToString(key.getEncoded());
            return "-----BEGIN PRIVATE KEY-----\n" + base64 + "\n-----END PRIVATE KEY-----\n";
        } catch (GeneralSecurityException e) {
            throw new IOException("Cannot read the key of " + name, e);
        }
    }

    private String file(String name) {
        return dir.resolve(name).toString();
    }

    private void keytool(String... args) throws IOException {
        if (IN_PROCESS_KEYTOOL != null) {
            keytoolInProcess(args);
            return;
        }
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        // A short-lived tool: the quick JIT tier and a small heap start it several times faster.
        command.addAll(List.of("-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC", "-J-Xshare:auto"));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            byte[] output = process.getInputStream().readAllBytes();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IOException("keytool did not finish: " + command);
            }
            if (process.exitValue() != 0) {
                throw new IOException("keytool failed (" + process.exitValue() + "): " + command + ": "
                        + new String(output, StandardCharsets.UTF_8));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
            throw new IOException("Interrupted running keytool", e);
        }
    }

    /**
     * The JDK's {@code keytool} class run in this JVM: a new {@code Main} and its {@code run(args, out)}, which
     * throws where the command line tool would print the error and exit with 1. About 50 ms a command against half a
     * second for a JVM of its own here; the package must be opened to this module, as the poms' test JVM options do
     * ({@code --add-opens java.base/sun.security.tools.keytool=ALL-UNNAMED}).
     */
    private static void keytoolInProcess(String... args) throws IOException {
        ByteArrayOutputStream output = new ByteArrayOutputStream();
        try (PrintStream out = new PrintStream(output, true, StandardCharsets.UTF_8)) {
            Constructor<?> constructor = IN_PROCESS_KEYTOOL.getDeclaringClass().getDeclaredConstructor();
            constructor.setAccessible(true);
            Object keytool = constructor.newInstance();
            IN_PROCESS_KEYTOOL.invoke(keytool, args, out);
        } catch (InvocationTargetException e) {
            throw new IOException("keytool failed: " + List.of(args) + ": " + e.getCause() + "; "
                    + output.toString(StandardCharsets.UTF_8), e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new IOException("Could not run keytool in this JVM: " + List.of(args), e);
        }
    }

    /** {@code sun.security.tools.keytool.Main.run(String[], PrintStream)}, made accessible, or null if closed. */
    private static Method inProcessKeytool() {
        try {
            Class<?> main = Class.forName(KEYTOOL_CLASS);
            String pkg = main.getPackageName();
            if (!main.getModule().isOpen(pkg, TestCertificates.class.getModule())) {
                return null;
            }
            Method run = main.getDeclaredMethod("run", String[].class, PrintStream.class);
            run.setAccessible(true);
            return run;
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    /** The password of every store and key. */
    public String password() {
        return PASSWORD;
    }

    /** The directory holding everything. */
    public Path dir() {
        return dir;
    }

    /** The CA certificate, PEM (what kcat's {@code ssl.ca.location} takes). */
    public Path caPem() {
        return dir.resolve("ca.pem");
    }

    /** A PKCS12 trust store holding the CA. */
    public Path truststore() {
        return dir.resolve("truststore.p12");
    }

    /** The broker's PKCS12 key store (key, its certificate and the CA). */
    public Path brokerKeystore() {
        return dir.resolve("broker.p12");
    }

    /** The broker's key store as JKS. */
    public Path brokerKeystoreJks() {
        return dir.resolve("broker.jks");
    }

    /** The broker's PEM private key (unencrypted PKCS#8) followed by its certificate chain, in one file. */
    public Path brokerPem() {
        return dir.resolve("broker.pem");
    }

    /** The broker's unencrypted PKCS#8 private key, PEM text. */
    public String brokerKeyPem() {
        return read("broker-key.pem");
    }

    /** The broker's certificate and the CA's, PEM text. */
    public String brokerChainPem() {
        return read("broker-chain.pem");
    }

    /** The CA certificate, PEM text. */
    public String caPemText() {
        return read("ca.pem");
    }

    /**
     * Mints a new broker key pair and certificate, signed by the CA, with the broker's distinguished name and subject
     * alternative names (what a certificate renewal looks like, and what a key store reload accepts), into the PKCS12
     * key store {@code name}.p12 (alias {@code name}, the CA after it, {@link #password()}). About five keytool runs.
     */
    public Path newBrokerKeystore(String name) {
        try {
            signed(name, BROKER_DN, "SAN=dns:localhost,ip:127.0.0.1");
        } catch (IOException e) {
            throw new UncheckedIOException("Could not mint the broker certificate " + name + " in " + dir, e);
        }
        return dir.resolve(name + ".p12");
    }

    /** The client's PKCS12 key store ({@value #CLIENT_DN}, signed by the CA). */
    public Path clientKeystore() {
        return dir.resolve("client.p12");
    }

    /**
     * A broker's key and trust stores in Kafka's {@code ssl.*} keys: the PKCS12 broker key store ({@value #BROKER_DN})
     * and the PKCS12 trust store of the CA, both with {@link #password()}.
     */
    public Map<String, String> brokerStoreConfig() {
        Map<String, String> config = new LinkedHashMap<>();
        config.put("ssl.keystore.type", "PKCS12");
        config.put("ssl.keystore.location", brokerKeystore().toString());
        config.put("ssl.keystore.password", password());
        config.put("ssl.key.password", password());
        config.put("ssl.truststore.type", "PKCS12");
        config.put("ssl.truststore.location", truststore().toString());
        config.put("ssl.truststore.password", password());
        return config;
    }

    private String read(String name) {
        try {
            return Files.readString(dir.resolve(name), StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
