package io.cairn.metadata;

import io.cairn.metadata.image.ScramCredential;
import io.cairn.metadata.image.ScramMechanism;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;

/**
 * The SCRAM credentials a new cluster starts with: {@code cairn-storage format --add-scram
 * 'SCRAM-SHA-256=[name=alice,password=alice-secret]'} parses Kafka's syntax (Kafka's {@code ScramParser}: a
 * mechanism, then in brackets {@code name} and either {@code password} or {@code saltedpassword} with {@code salt},
 * optionally {@code salt} and {@code iterations}, values optionally in double quotes, salt and salted password in
 * base64; 4096 iterations and a random salt by default), turns each into the stored credential (salt, StoredKey,
 * ServerKey, iterations; never the password) and writes them into {@value #FILE_NAME} in the metadata log dir, as
 * Kafka's tool writes UserScramCredentialRecords into its bootstrap checkpoint. The first active controller commits
 * them with the bootstrap feature levels. The file holds, per credential {@code n}, the keys {@code n.name},
 * {@code n.mechanism}, {@code n.iterations}, {@code n.salt}, {@code n.storedKey} and {@code n.serverKey} (binary
 * values in base64). Stateless, thread-safe.
 */
public final class BootstrapScram {

    /** The file name inside the metadata log dir. */
    public static final String FILE_NAME = "bootstrap-scram.properties";

    private BootstrapScram() {
    }

    /**
     * Parses one {@code --add-scram} argument, with Kafka's messages.
     *
     * @throws IllegalArgumentException when the argument is malformed or its iterations are out of range
     */
    public static ScramCredential parse(String argument) {
        String input = argument.trim();
        int equals = input.indexOf('=');
        if (equals < 0) {
            throw new IllegalArgumentException("Failed to find equals sign in SCRAM argument '" + input + "'");
        }
        String mechanismName = input.substring(0, equals);
        String config = input.substring(equals + 1);
        ScramMechanism mechanism = ScramMechanism.forMechanismName(mechanismName);
        if (mechanism == null) {
            throw new IllegalArgumentException("The add-scram mechanism " + mechanismName + " is not supported.");
        }
        if (!config.startsWith("[")) {
            throw new IllegalArgumentException("Expected configuration string to start with [");
        }
        if (!config.endsWith("]")) {
            throw new IllegalArgumentException("Expected configuration string to end with ]");
        }
        Map<String, String> components = new TreeMap<>();
        for (String component : config.substring(1, config.length() - 1).split(",")) {
            int eq = component.indexOf('=');
            if (eq < 0) {
                throw new IllegalArgumentException("No equals sign found in SCRAM component: " + component);
            }
            String value = component.substring(eq + 1);
            if (value.length() >= 2 && value.startsWith("\"") && value.endsWith("\"")) {
                value = value.substring(1, value.length() - 1);
            }
            components.put(component.substring(0, eq), value);
        }
        return credential(mechanism, components);
    }

    private static ScramCredential credential(ScramMechanism mechanism, Map<String, String> components) {
        String name = components.remove("name");
        if (name == null) {
            throw new IllegalArgumentException("You must supply 'name' to add-scram");
        }
        String saltText = components.remove("salt");
        byte[] salt = saltText == null ? ScramMechanism.randomSalt()
                : base64(saltText, "Failed to decode given salt: ");
        String iterationsText = components.remove("iterations");
        int iterations = ScramMechanism.MIN_ITERATIONS;
        if (iterationsText != null) {
            try {
                iterations = Integer.parseInt(iterationsText);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("Failed to parse iterations count: " + iterationsText, e);
            }
        }
        String password = components.remove("password");
        String saltedPasswordText = components.remove("saltedpassword");
        if (password == null && saltedPasswordText == null) {
            throw new IllegalArgumentException("You must supply one of 'password' or 'saltedpassword' to add-scram");
        }
        if (password == null && saltText == null) {
            throw new IllegalArgumentException("You must supply 'salt' with 'saltedpassword' to add-scram");
        }
        byte[] saltedPassword = password == null
                ? base64(saltedPasswordText, "Failed to decode given saltedPassword: ") : null;
        if (!components.isEmpty()) {
            throw new IllegalArgumentException("Unknown SCRAM configurations: " + String.join(", ",
                    components.keySet()));
        }
        if (iterations < ScramMechanism.MIN_ITERATIONS) {
            throw new IllegalArgumentException("The 'iterations' value must be >= " + ScramMechanism.MIN_ITERATIONS
                    + " for add-scram using " + mechanism);
        }
        if (iterations > ScramMechanism.MAX_ITERATIONS) {
            throw new IllegalArgumentException("The 'iterations' value must be <= " + ScramMechanism.MAX_ITERATIONS
                    + " for add-scram using " + mechanism);
        }
        if (saltedPassword == null) {
            saltedPassword = mechanism.saltedPassword(password, salt, iterations);
        }
        return mechanism.credential(name, salt, saltedPassword, iterations);
    }

    private static byte[] base64(String text, String failure) {
        try {
            return Base64.getDecoder().decode(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(failure + text, e);
        }
    }

    /** Writes {@code credentials} into {@code dir} atomically (creating the directory). */
    public static void write(Path dir, List<ScramCredential> credentials) throws IOException {
        Properties props = new Properties();
        Base64.Encoder base64 = Base64.getEncoder();
        for (int i = 0; i < credentials.size(); i++) {
            ScramCredential credential = credentials.get(i);
            props.setProperty(i + ".name", credential.user());
            props.setProperty(i + ".mechanism", ScramMechanism.forType(credential.mechanism()).mechanismName());
            props.setProperty(i + ".iterations", Integer.toString(credential.iterations()));
            props.setProperty(i + ".salt", base64.encodeToString(credential.salt()));
            props.setProperty(i + ".storedKey", base64.encodeToString(credential.storedKey()));
            props.setProperty(i + ".serverKey", base64.encodeToString(credential.serverKey()));
        }
        PropertiesFiles.write(dir, FILE_NAME, props, "The SCRAM credentials of a new cluster (format --add-scram)");
    }

    /** The credentials formatted into {@code dir}, in order; none when it has no file. */
    public static List<ScramCredential> read(Path dir) throws IOException {
        Optional<Properties> read = PropertiesFiles.read(dir, FILE_NAME);
        List<ScramCredential> credentials = new ArrayList<>();
        if (read.isEmpty()) {
            return credentials;
        }
        Properties props = read.get();
        Base64.Decoder base64 = Base64.getDecoder();
        for (int i = 0; props.getProperty(i + ".name") != null; i++) {
            try {
                ScramMechanism mechanism = ScramMechanism.forMechanismName(props.getProperty(i + ".mechanism"));
                credentials.add(new ScramCredential(props.getProperty(i + ".name"), mechanism.type(),
                        base64.decode(props.getProperty(i + ".salt")),
                        base64.decode(props.getProperty(i + ".storedKey")),
                        base64.decode(props.getProperty(i + ".serverKey")),
                        Integer.parseInt(props.getProperty(i + ".iterations"))));
            } catch (RuntimeException e) {
                throw new IOException("Invalid SCRAM credential " + i + " in " + dir.resolve(FILE_NAME), e);
            }
        }
        return credentials;
    }
}
