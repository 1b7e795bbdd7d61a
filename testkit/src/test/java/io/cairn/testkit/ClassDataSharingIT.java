package io.cairn.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(120)
class ClassDataSharingIT {

    @Test
    void aToolsSecondRunMapsTheArchiveItsFirstRunWroteAndPrintsTheSame() throws Exception {
        // Given: FakeBroker in a jar of its own (the JVM archives nothing from classpath directories)
        Path dir = TestDirectories.createTempDirectory("cairn-cds-it-");
        Path archives = dir.resolve("cds");
        Path jar = jarOf(dir.resolve("fake.jar"), FakeBroker.class);
        JavaTool tool = JavaTool.builder(FakeBroker.class.getName()).classpath(jar.toString())
                .jvmArgs("-XX:TieredStopAtLevel=1").args("0", "fail").build();
        String previous = System.setProperty(ClassDataSharing.DIR_PROPERTY, archives.toString());
        try {
            // When
            JavaTool.Result first = tool.run();
            List<Path> afterFirst = list(archives);
            JavaTool.Result second = tool.run();

            // Then: one archive, published by the first run; both runs print only what the tool prints
            assertThat(afterFirst).singleElement().satisfies(archive -> {
                assertThat(archive.getFileName().toString()).startsWith("FakeBroker-").endsWith(".jsa");
                assertThat(Files.size(archive)).isPositive();
            });
            assertThat(list(archives)).isEqualTo(afterFirst);
            assertThat(ClassDataSharing.launch(FakeBroker.class.getName(), List.of(jar),
                    List.of("-XX:TieredStopAtLevel=1")).jvmArgs())
                    .contains("-XX:SharedArchiveFile=" + afterFirst.get(0).toAbsolutePath());
            for (JavaTool.Result result : List.of(first, second)) {
                assertThat(result.exitCode()).as("%s", result).isEqualTo(3);
                assertThat(result.stdout()).as("%s", result).isEqualTo("fake broker refusing to start"
                        + System.lineSeparator());
                assertThat(result.stderr()).as("%s", result).isEmpty();
            }
        } finally {
            if (previous == null) {
                System.clearProperty(ClassDataSharing.DIR_PROPERTY);
            } else {
                System.setProperty(ClassDataSharing.DIR_PROPERTY, previous);
            }
            TestDirectories.deleteRecursively(dir);
        }
    }

    @Test
    void withoutTheDirectoryPropertyOrWithAClasspathDirectoryNothingIsAdded() {
        // Given
        String previous = System.clearProperty(ClassDataSharing.DIR_PROPERTY);
        try {
            // When / Then
            assertThat(ClassDataSharing.launch("Main", List.of(Path.of("some.jar")), List.of()).jvmArgs()).isEmpty();
            System.setProperty(ClassDataSharing.DIR_PROPERTY, System.getProperty("java.io.tmpdir"));
            assertThat(ClassDataSharing.launch("Main", List.of(Path.of(System.getProperty("java.io.tmpdir"))),
                    List.of()).jvmArgs()).isEmpty();
        } finally {
            if (previous == null) {
                System.clearProperty(ClassDataSharing.DIR_PROPERTY);
            } else {
                System.setProperty(ClassDataSharing.DIR_PROPERTY, previous);
            }
        }
    }

    private static List<Path> list(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.sorted().toList();
        }
    }

    private static Path jarOf(Path jar, Class<?> type) throws IOException {
        String entry = type.getName().replace('.', '/') + ".class";
        try (OutputStream file = Files.newOutputStream(jar); JarOutputStream out = new JarOutputStream(file);
             InputStream in = type.getClassLoader().getResourceAsStream(entry)) {
            out.putNextEntry(new JarEntry(entry));
            in.transferTo(out);
            out.closeEntry();
        }
        return jar;
    }
}
