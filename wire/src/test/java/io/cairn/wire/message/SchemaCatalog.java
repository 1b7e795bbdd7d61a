package io.cairn.wire.message;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.FileSystem;
import java.nio.file.FileSystemAlreadyExistsException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The Kafka JSON schemas the build unpacked into {@code target/kafka-schemas}, read for tests that need to know
 * which fields exist, are nullable or tagged at a version. Immutable after construction; thread-safe.
 */
final class SchemaCatalog {

    private static final ObjectMapper MAPPER = new ObjectMapper().enable(JsonParser.Feature.ALLOW_COMMENTS);

    private final Map<String, MessageSchema> byClassName = new LinkedHashMap<>();

    private SchemaCatalog(Path dir) {
        try (Stream<Path> files = Files.list(dir)) {
            for (Path file : files.filter(p -> p.toString().endsWith(".json")).sorted().toList()) {
                JsonNode root = MAPPER.readTree(Files.readAllBytes(file));
                MessageSchema schema = new MessageSchema(root);
                if (!schema.validVersions().isEmpty()) {
                    byClassName.put(schema.className(), schema);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The schemas of the module under test ({@code target/kafka-schemas/common/message}); in another module (which
     * uses wire's test jar), those in the kafka-clients jar on the test classpath, the same files.
     */
    static SchemaCatalog load() {
        Path base = Path.of(System.getProperty("basedir", "."));
        Path dir = base.resolve("target/kafka-schemas/common/message");
        if (Files.isDirectory(dir)) {
            return new SchemaCatalog(dir);
        }
        URL inJar = SchemaCatalog.class.getClassLoader().getResource("common/message/ProduceRequest.json");
        if (inJar == null) {
            throw new IllegalStateException("No schemas at " + dir.toAbsolutePath()
                    + " nor in kafka-clients on the classpath; run the Maven build first");
        }
        try {
            URI uri = inJar.toURI();
            try (FileSystem jar = FileSystems.newFileSystem(uri, Map.of())) {
                return new SchemaCatalog(jar.getPath("common/message"));
            } catch (FileSystemAlreadyExistsException opened) {
                return new SchemaCatalog(FileSystems.getFileSystem(uri).getPath("common/message"));
            }
        } catch (IOException | URISyntaxException e) {
            throw new IllegalStateException("Cannot read the schemas in " + inJar, e);
        }
    }

    MessageSchema byClassName(String className) {
        MessageSchema schema = byClassName.get(className);
        if (schema == null) {
            throw new IllegalArgumentException("No schema for " + className);
        }
        return schema;
    }

    Map<String, MessageSchema> all() {
        return byClassName;
    }

    /** An inclusive version range parsed from the schema text ({@code "3+"}, {@code "0-2"}, {@code "none"}). */
    record Range(int lowest, int highest) {
        static Range parse(String text) {
            if (text == null || text.equals("none")) {
                return new Range(0, -1);
            }
            if (text.endsWith("+")) {
                return new Range(Integer.parseInt(text.substring(0, text.length() - 1)), Short.MAX_VALUE);
            }
            int dash = text.indexOf('-');
            if (dash > 0) {
                return new Range(Integer.parseInt(text.substring(0, dash)), Integer.parseInt(text.substring(dash + 1)));
            }
            return new Range(Integer.parseInt(text), Integer.parseInt(text));
        }

        boolean contains(int version) {
            return version >= lowest && version <= highest;
        }

        boolean isEmpty() {
            return lowest > highest;
        }
    }

    /** One schema file with its structs (inline and common) by name. */
    static final class MessageSchema {
        private final JsonNode root;
        private final Map<String, JsonNode> structFields = new HashMap<>();

        MessageSchema(JsonNode root) {
            this.root = root;
            collect(root.get("fields"));
            if (root.has("commonStructs")) {
                for (JsonNode struct : root.get("commonStructs")) {
                    structFields.put(struct.get("name").asText(), struct.get("fields"));
                    collect(struct.get("fields"));
                }
            }
        }

        private void collect(JsonNode fields) {
            if (fields == null) {
                return;
            }
            for (JsonNode field : fields) {
                if (field.has("fields")) {
                    String type = field.get("type").asText();
                    structFields.put(type.startsWith("[]") ? type.substring(2) : type, field.get("fields"));
                    collect(field.get("fields"));
                }
            }
        }

        String name() {
            return root.get("name").asText();
        }

        String type() {
            return root.get("type").asText();
        }

        String className() {
            return type().equals("data") ? name() : name() + "Data";
        }

        Range validVersions() {
            return Range.parse(root.get("validVersions").asText());
        }

        Range flexibleVersions() {
            return Range.parse(root.has("flexibleVersions") ? root.get("flexibleVersions").asText() : "none");
        }

        JsonNode fields() {
            return root.get("fields");
        }

        JsonNode structFields(String structName) {
            JsonNode fields = structFields.get(structName);
            if (fields == null) {
                throw new IllegalArgumentException(name() + " has no struct " + structName);
            }
            return fields;
        }
    }
}
