package io.cairn.testkit;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

class TestDirectoriesTest {

    @Test
    void deleteRecursivelyShouldRemoveNestedFilesAndDirectories() throws IOException {
        // Given
        Path root = TestDirectories.createTempDirectory("cairn-testkit-test-");
        Files.createDirectories(root.resolve("a/b/c"));
        Files.writeString(root.resolve("a/b/c/file.log"), "x");
        Files.writeString(root.resolve("top.txt"), "y");

        // When
        TestDirectories.deleteRecursively(root);

        // Then
        assertThat(root).doesNotExist();
    }

    @Test
    void deleteRecursivelyShouldIgnoreAMissingDirectory() {
        // Given
        Path parent = TestDirectories.createTempDirectory("cairn-testkit-test-");
        Path missing = parent.resolve("missing");

        // When
        TestDirectories.deleteRecursively(missing);

        // Then
        assertThat(missing).doesNotExist();
        TestDirectories.deleteRecursively(parent);
    }

    @Test
    void sanitizeShouldTurnADisplayNameIntoOnePathSegment() {
        // Given
        String displayName = "toolPrints-[1] cairn@127.0.0.1:1234";

        // When
        String segment = TestDirectories.sanitize(displayName);

        // Then
        assertThat(segment).isEqualTo("toolPrints-_1_cairn_127.0.0.1_1234");
    }

    @Test
    void logDirectoryShouldBeCreatedUnderTheConfiguredRoot() {
        // Given
        String root = System.getProperty(TestDirectories.LOGS_DIR_PROPERTY, "target/broker-logs");

        // When
        Path dir = TestDirectories.logDirectory("TestDirectoriesTest/some test");

        // Then
        assertThat(dir).isDirectory();
        assertThat(dir).isEqualTo(Path.of(root).toAbsolutePath().resolve("TestDirectoriesTest").resolve("some_test"));
    }
}
