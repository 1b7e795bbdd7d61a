package io.cairn.codegen;

import io.cairn.codegen.emit.ApiKeyEmitter;
import io.cairn.codegen.emit.MessageClassEmitter;
import io.cairn.codegen.schema.MessageSpec;
import io.cairn.codegen.schema.SchemaException;
import io.cairn.codegen.schema.SchemaParser;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The build-time entry point: {@code Main <schema dir> <output source root> [package]} reads every {@code *.json}
 * schema, writes one message class per schema plus {@code ApiKey}, and deletes generated files of schemas that no
 * longer exist. Files whose content did not change are left untouched. Run once per build; not thread-safe.
 */
public final class Main {

    private static final Logger LOGGER = LogManager.getLogger(Main.class);

    /** The package Kafka's messages are generated into unless told otherwise. */
    public static final String DEFAULT_PACKAGE = "io.cairn.wire.message";

    private Main() {
    }

    /**
     * Generates; throws (never exits, since it runs inside Maven through {@code exec:java}) with the schema file
     * name in the message when a schema is invalid.
     */
    public static void main(String[] args) throws IOException {
        if (args.length < 2 || args.length > 3) {
            throw new IllegalArgumentException("Usage: Main <schema dir> <output source root> [package]");
        }
        String targetPackage = args.length == 3 ? args[2] : DEFAULT_PACKAGE;
        Result result = generate(Path.of(args[0]), Path.of(args[1]), targetPackage);
        LOGGER.info("Generated {} message classes and ApiKey ({} APIs) into {}; {} unchanged, {} stale deleted",
                result.messages(), result.apis(), result.packageDir(), result.unchanged(), result.deleted());
    }

    /** What one run did. */
    public record Result(Path packageDir, int messages, int apis, int unchanged, int deleted) {
    }

    /** Generates every schema of {@code schemaDir} into {@code outputRoot}, in {@code targetPackage}. */
    public static Result generate(Path schemaDir, Path outputRoot, String targetPackage) throws IOException {
        if (!Files.isDirectory(schemaDir)) {
            throw new IllegalArgumentException("Schema directory " + schemaDir + " does not exist");
        }
        List<Path> schemaFiles;
        try (Stream<Path> files = Files.list(schemaDir)) {
            schemaFiles = files.filter(p -> p.getFileName().toString().endsWith(".json")).sorted().toList();
        }
        if (schemaFiles.isEmpty()) {
            throw new IllegalArgumentException("No *.json schema in " + schemaDir);
        }
        SchemaParser parser = new SchemaParser();
        MessageClassEmitter emitter = new MessageClassEmitter(targetPackage);
        Path packageDir = outputRoot.resolve(targetPackage.replace('.', '/'));
        Files.createDirectories(packageDir);
        Set<Path> written = new HashSet<>();
        List<MessageSpec> specs = new ArrayList<>();
        int unchanged = 0;
        for (Path schemaFile : schemaFiles) {
            String fileName = schemaFile.getFileName().toString();
            MessageSpec spec;
            String source;
            try {
                spec = parser.parse(Files.readString(schemaFile, StandardCharsets.UTF_8));
                if (!fileName.equals(spec.name() + ".json")) {
                    throw new SchemaException("the schema name '" + spec.name() + "' does not match the file name");
                }
                if (spec.validVersions().isEmpty()) {
                    LOGGER.debug("Skipping {}: validVersions is none (the API was removed)", fileName);
                    continue;
                }
                source = emitter.emit(spec);
            } catch (RuntimeException e) {
                throw new SchemaException("Invalid schema " + fileName + ": " + e.getMessage(), e);
            }
            specs.add(spec);
            unchanged += writeIfChanged(packageDir.resolve(spec.className() + ".java"), source, written) ? 0 : 1;
        }
        List<MessageSpec> apis = specs.stream().filter(s -> s.isRequest() || s.isResponse()).toList();
        // A schema set without requests/responses (metadata's own record schemas) gets no ApiKey enum.
        if (!apis.isEmpty()) {
            unchanged += writeIfChanged(packageDir.resolve("ApiKey.java"),
                    new ApiKeyEmitter(targetPackage).emit(apis), written) ? 0 : 1;
        }
        String packageInfo = apis.isEmpty() ? dataPackageInfo(targetPackage) : packageInfo(targetPackage);
        unchanged += writeIfChanged(packageDir.resolve("package-info.java"), packageInfo, written) ? 0 : 1;
        int deleted = deleteStale(packageDir, written);
        return new Result(packageDir, specs.size(), apis.size() / 2, unchanged, deleted);
    }

    private static String packageInfo(String targetPackage) {
        return """
                /**
                 * Kafka's protocol messages, generated at build time by {@code io.cairn.codegen} from the JSON schemas
                 * in kafka-clients: one {@code *Data} class per request, response and header, the data schemas, and
                 * {@link %s.ApiKey}. Nothing here is written by hand.
                 */
                package %s;
                """.formatted(targetPackage, targetPackage);
    }

    private static String dataPackageInfo(String targetPackage) {
        return """
                /**
                 * Data messages generated at build time by {@code io.cairn.codegen} from JSON schemas in Kafka's schema
                 * format, one class per schema. Nothing here is written by hand.
                 */
                package %s;
                """.formatted(targetPackage);
    }

    private static boolean writeIfChanged(Path file, String source, Set<Path> written) throws IOException {
        written.add(file);
        if (Files.exists(file) && Files.readString(file, StandardCharsets.UTF_8).equals(source)) {
            return false;
        }
        Files.writeString(file, source, StandardCharsets.UTF_8);
        return true;
    }

    private static int deleteStale(Path packageDir, Set<Path> written) throws IOException {
        List<Path> stale;
        try (Stream<Path> files = Files.list(packageDir)) {
            stale = files.filter(p -> p.getFileName().toString().endsWith(".java")).filter(p -> !written.contains(p))
                    .toList();
        }
        for (Path file : stale) {
            LOGGER.info("Deleting stale generated file {}", file);
            Files.delete(file);
        }
        return stale.size();
    }
}
