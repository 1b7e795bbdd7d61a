package io.cairn.metadata;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import io.cairn.metadata.controller.ControllerLogic;
import io.cairn.metadata.controller.ControllerSettings;
import io.cairn.metadata.image.Features;
import io.cairn.metadata.image.MetadataDelta;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.ScramCredential;
import io.cairn.metadata.image.ScramMechanism;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StorageToolTest {

    @TempDir
    Path dir;

    private Path properties() throws Exception {
        Path file = dir.resolve("server.properties");
        Files.writeString(file, String.join("\n", "process.roles=broker,controller", "node.id=3",
                "controller.quorum.voters=3@localhost:9093,4@localhost:9094",
                "log.dirs=" + dir.resolve("a") + "," + dir.resolve("b"),
                "metadata.log.dir=" + dir.resolve("meta")));
        return file;
    }

    @Test
    void formatWritesMetaPropertiesLikeKafkaIntoTheMetadataDirAndEveryLogDir() throws Exception {
        // Given
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        String clusterId = MetaProperties.randomUuid().toString();

        // When
        int code = StorageTool.run(new String[] {"format", "-t", clusterId, "-c", properties().toString()},
                new PrintStream(out, true, StandardCharsets.UTF_8));

        // Then
        assertThat(code).isZero();
        for (String sub : new String[] {"meta", "a", "b"}) {
            MetaProperties meta = MetaProperties.read(dir.resolve(sub)).orElseThrow();
            assertThat(meta.clusterId()).isEqualTo(clusterId);
            assertThat(meta.nodeId()).isEqualTo(3);
            assertThat(Files.readString(dir.resolve(sub).resolve("meta.properties"))).contains("version=1",
                    "cluster.id=" + clusterId, "node.id=3", "directory.id=");
        }
        assertThatThrownBy(() -> StorageTool.run(new String[] {"format", "--cluster-id", clusterId, "--config",
                properties().toString()}, new PrintStream(out, true, StandardCharsets.UTF_8)))
                .hasMessageContaining("already formatted");
        assertThat(StorageTool.run(new String[] {"format", "--cluster-id", clusterId, "--config",
                properties().toString(), "--ignore-formatted"}, new PrintStream(out, true, StandardCharsets.UTF_8)))
                .isZero();
    }

    @Test
    void aNodeThatIsNotTheSoleVoterRefusesToStartUnformatted() throws Exception {
        // Given
        MetadataConfig config = MetadataConfig.load(properties());

        // Then
        assertThat(config.isSoleVoter()).isFalse();
        assertThatThrownBy(() -> MetadataNode.start(config)).hasMessageContaining("No meta.properties found");
    }

    @Test
    void configReadsKafkasKeys() {
        // Given / When
        MetadataConfig config = MetadataConfig.from(Map.of("process.roles", "broker", "node.id", "7",
                "controller.quorum.voters", "1@a:9093, 2@b:9094", "log.dirs", "/x,/y",
                "broker.session.timeout.ms", "1234", "default.replication.factor", "3"));

        // Then
        assertThat(config.isBroker()).isTrue();
        assertThat(config.isController()).isFalse();
        assertThat(config.voters()).extracting(MetadataConfig.QuorumVoter::toString)
                .containsExactly("1@a:9093", "2@b:9094");
        assertThat(config.metadataLogDir()).isEqualTo(Path.of("/x"));
        assertThat(config.controller().brokerSessionTimeoutMs()).isEqualTo(1234);
        assertThat(config.controller().defaultReplicationFactor()).isEqualTo((short) 3);
        assertThatThrownBy(() -> MetadataConfig.from(Map.of("process.roles", "controller", "node.id", "9",
                "controller.quorum.voters", "1@a:9093"))).hasMessageContaining("must be one of");
    }

    @Test
    void leaderBalancingFollowsKafkasKeys() {
        // Given
        Map<String, String> base = Map.of("process.roles", "broker", "node.id", "7",
                "controller.quorum.voters", "1@a:9093");

        // When
        MetadataConfig defaults = MetadataConfig.from(base);
        Map<String, String> everyMinute = new HashMap<>(base);
        everyMinute.put("leader.imbalance.check.interval.seconds", "60");
        Map<String, String> disabled = new HashMap<>(everyMinute);
        disabled.put("auto.leader.rebalance.enable", "false");
        Map<String, String> zero = new HashMap<>(base);
        zero.put("leader.imbalance.check.interval.seconds", "0");

        // Then
        assertThat(defaults.controller().leaderImbalanceCheckIntervalMs()).isEqualTo(300_000L);
        assertThat(MetadataConfig.from(everyMinute).controller().leaderImbalanceCheckIntervalMs()).isEqualTo(60_000L);
        assertThat(MetadataConfig.from(disabled).controller().leaderImbalanceCheckIntervalMs()).isEqualTo(-1L);
        assertThatThrownBy(() -> MetadataConfig.from(zero)).hasMessageContaining("Value must be at least 1");
        assertThat(defaults.controller().uncleanLeaderElectionIntervalMs()).isEqualTo(300_000L);
    }

    private Path bootstrapProperties(String roles) throws Exception {
        Path file = dir.resolve("kraft.properties");
        Files.writeString(file, String.join("\n", "process.roles=" + roles, "node.id=1",
                "controller.quorum.bootstrap.servers=localhost:9093",
                "listeners=PLAINTEXT://:9092,CONTROLLER://:9093",
                "advertised.listeners=PLAINTEXT://localhost:9092,CONTROLLER://localhost:9093",
                "controller.listener.names=CONTROLLER", "log.dirs=" + dir.resolve("kraft")));
        return file;
    }

    private int run(String... args) throws Exception {
        return StorageTool.run(args, new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
    }

    @Test
    void addScramWritesKafkaStyleCredentialsThatTheFirstControllerCommits() throws Exception {
        // Given
        String clusterId = MetaProperties.randomUuid().toString();
        byte[] salt = "pepper".getBytes(StandardCharsets.UTF_8);
        byte[] salted = ScramMechanism.SCRAM_SHA_512.saltedPassword("bob-secret", salt, 8192);

        // When
        int code = run("format", "-t", clusterId, "-c", properties().toString(),
                "--add-scram", "SCRAM-SHA-256=[name=alice,password=alice-secret]",
                "-S", "SCRAM-SHA-512=[name=bob,iterations=8192,salt=\"" + Base64.getEncoder().encodeToString(salt)
                        + "\",saltedpassword=\"" + Base64.getEncoder().encodeToString(salted) + "\"]");

        // Then
        assertThat(code).isZero();
        List<ScramCredential> read = BootstrapScram.read(dir.resolve("meta"));
        assertThat(read).extracting(ScramCredential::user).containsExactly("alice", "bob");
        ScramCredential alice = read.get(0);
        assertThat(alice.iterations()).isEqualTo(4096);
        byte[] aliceSalted = ScramMechanism.SCRAM_SHA_256.saltedPassword("alice-secret", alice.salt(), 4096);
        assertThat(alice.storedKey()).isEqualTo(ScramMechanism.SCRAM_SHA_256.storedKey(
                ScramMechanism.SCRAM_SHA_256.clientKey(aliceSalted)));
        assertThat(read.get(1)).isEqualTo(ScramMechanism.SCRAM_SHA_512.credential("bob", salt, salted, 8192));
        ControllerLogic logic = new ControllerLogic(ControllerSettings.defaults(3), Features.bootstrapLevels(), read);
        MetadataImage image = new MetadataDelta(MetadataImage.EMPTY).replayAll(logic.bootstrapFeatures(
                MetadataImage.EMPTY)).apply(1);
        assertThat(image.scram().get("alice")).containsOnlyKeys((byte) 1);
        assertThat(image.scram().get("bob").get((byte) 2).iterations()).isEqualTo(8192);
        assertThat(logic.bootstrapFeatures(image)).isEmpty();
    }

    @Test
    void addScramRefusesWhatKafkasParserRefusesWithItsMessages() {
        assertThatThrownBy(() -> BootstrapScram.parse("SCRAM-SHA-256")).hasMessage(
                "Failed to find equals sign in SCRAM argument 'SCRAM-SHA-256'");
        assertThatThrownBy(() -> BootstrapScram.parse("SCRAM-SHA-1=[name=a,password=b]")).hasMessage(
                "The add-scram mechanism SCRAM-SHA-1 is not supported.");
        assertThatThrownBy(() -> BootstrapScram.parse("SCRAM-SHA-256=name=a,password=b]")).hasMessage(
                "Expected configuration string to start with [");
        assertThatThrownBy(() -> BootstrapScram.parse("SCRAM-SHA-256=[password=b]")).hasMessage(
                "You must supply 'name' to add-scram");
        assertThatThrownBy(() -> BootstrapScram.parse("SCRAM-SHA-256=[name=a]")).hasMessage(
                "You must supply one of 'password' or 'saltedpassword' to add-scram");
        assertThatThrownBy(() -> BootstrapScram.parse("SCRAM-SHA-256=[name=a,saltedpassword=AAAA]")).hasMessage(
                "You must supply 'salt' with 'saltedpassword' to add-scram");
        assertThatThrownBy(() -> BootstrapScram.parse("SCRAM-SHA-256=[name=a,password=b,colour=red]")).hasMessage(
                "Unknown SCRAM configurations: colour");
        assertThatThrownBy(() -> BootstrapScram.parse("SCRAM-SHA-256=[name=a,password=b,iterations=4095]"))
                .hasMessage("The 'iterations' value must be >= 4096 for add-scram using SCRAM-SHA-256");
        assertThatThrownBy(() -> BootstrapScram.parse("SCRAM-SHA-512=[name=a,password=b,iterations=16385]"))
                .hasMessage("The 'iterations' value must be <= 16384 for add-scram using SCRAM-SHA-512");
    }

    @Test
    void standaloneFormatsTheControllerAsTheOnlyVoterAtItsAdvertisedControllerListener() throws Exception {
        // Given
        String clusterId = MetaProperties.randomUuid().toString();

        // When
        int code = run("format", "--standalone", "-t", clusterId, "-c", bootstrapProperties("broker,controller")
                .toString());

        // Then
        assertThat(code).isZero();
        assertThat(BootstrapVoters.read(dir.resolve("kraft")).orElseThrow()).extracting(Object::toString)
                .containsExactly("1@localhost:9093");
        MetadataConfig config = MetadataConfig.load(bootstrapProperties("broker,controller"));
        assertThat(config.voters()).isEmpty();
        assertThat(config.controllerBind()).hasToString(":9093");
        assertThat(config.isStandaloneBootstrap()).isTrue();
        BootstrapVoters.Formatted formatted = BootstrapVoters.readFormatted(dir.resolve("kraft")).orElseThrow();
        assertThat(formatted.directoryIds()).containsExactly(java.util.Map.entry(1,
                MetaProperties.read(dir.resolve("kraft")).orElseThrow().directoryId()));
        assertThat(BootstrapFeatures.read(dir.resolve("kraft"))).containsEntry("kraft.version", (short) 1);
    }

    @Test
    void noInitialControllersFormatsAControllerThatJoinsARunningQuorumWithKraftVersion1() throws Exception {
        // Given
        String clusterId = MetaProperties.randomUuid().toString();

        // When
        int code = run("format", "--no-initial-controllers", "-t", clusterId, "-c",
                bootstrapProperties("broker,controller").toString());

        // Then
        assertThat(code).isZero();
        BootstrapVoters.Formatted formatted = BootstrapVoters.readFormatted(dir.resolve("kraft")).orElseThrow();
        assertThat(formatted.joins()).isTrue();
        assertThat(formatted.voters()).isEmpty();
        assertThat(BootstrapFeatures.read(dir.resolve("kraft"))).containsEntry("kraft.version", (short) 1);
        assertThat(MetaProperties.read(dir.resolve("kraft")).orElseThrow().directoryId()).isNotEqualTo(
                io.cairn.wire.protocol.Uuid.ZERO);
    }

    @Test
    void kraftVersionIsZeroForStaticVotersAndAContradictingFeatureFlagIsRefusedAsKafkaRefusesIt() throws Exception {
        // Given
        String clusterId = MetaProperties.randomUuid().toString();
        String dynamic = bootstrapProperties("broker,controller").toString();

        // When
        int code = run("format", "-t", clusterId, "-c", properties().toString());

        // Then
        assertThat(code).isZero();
        assertThat(BootstrapFeatures.read(MetadataConfig.load(properties()).metadataLogDir()))
                .containsEntry("kraft.version", (short) 0);
        assertThatThrownBy(() -> run("format", "-t", clusterId, "-c", dynamic, "-s", "--feature", "kraft.version=0"))
                .hasMessage("Cannot set kraft.version to 0 if one of the flags --standalone, --initial-controllers, "
                        + "or --no-initial-controllers is used. For dynamic controllers support, try removing the "
                        + "--feature flag for kraft.version.");
        assertThatThrownBy(() -> StorageTool.kraftVersion(Map.of(), Map.of("kraft.version", (short) 1), false))
                .hasMessage("Cannot set kraft.version to 1 unless KIP-853 configuration is present. Try removing "
                        + "the --feature flag for kraft.version.");
    }

    @Test
    void initialControllersNameEveryVoterAndGiveThisNodeItsDirectoryId() throws Exception {
        // Given
        String clusterId = MetaProperties.randomUuid().toString();
        String own = MetaProperties.randomUuid().toString();
        String initial = "1@localhost:9093:" + own + ",2@b:9093:" + MetaProperties.randomUuid() + ",3@c:9093:"
                + MetaProperties.randomUuid();

        // When
        int code = run("format", "-t", clusterId, "-c", bootstrapProperties("broker,controller").toString(), "-I",
                initial);

        // Then
        assertThat(code).isZero();
        assertThat(BootstrapVoters.read(dir.resolve("kraft")).orElseThrow()).extracting(Object::toString)
                .containsExactly("1@localhost:9093", "2@b:9093", "3@c:9093");
        assertThat(MetaProperties.read(dir.resolve("kraft")).orElseThrow().directoryId()).hasToString(own);
        assertThat(BootstrapVoters.readFormatted(dir.resolve("kraft")).orElseThrow().directoryIds()).hasSize(3)
                .extractingByKey(1).hasToString(own);
        assertThat(BootstrapFeatures.read(dir.resolve("kraft"))).containsEntry("kraft.version", (short) 1);
    }

    @Test
    void aBootstrapServersControllerNeedsAVoterFlagAsKafkasToolAsks() throws Exception {
        // Given
        String clusterId = MetaProperties.randomUuid().toString();
        String config = bootstrapProperties("broker,controller").toString();

        // Then
        assertThatThrownBy(() -> run("format", "-t", clusterId, "-c", config)).hasMessageContaining(
                "Because controller.quorum.voters is not set on this controller, you must specify one of the "
                        + "following: --standalone, --initial-controllers, or --no-initial-controllers.");
        assertThatThrownBy(() -> run("format", "-t", clusterId, "-c", config, "-s", "-I", "1@a:1:" + clusterId))
                .hasMessageContaining("Only one of");
        assertThatThrownBy(() -> run("format", "-t", clusterId, "-c", config, "-I", "2@b:9093:" + clusterId))
                .hasMessageContaining("is not one of --initial-controllers");
        assertThatThrownBy(() -> run("format", "-t", clusterId, "-c", config, "-I", "1@localhost:9093"))
                .hasMessageContaining("expected id@host:port:directoryId");
        assertThatThrownBy(() -> run("format", "-t", clusterId, "-c", config, "-I", "1@localhost:9094:"
                + clusterId)).hasMessageContaining("controller listener binds port 9093");
        assertThatThrownBy(() -> run("format", "-t", clusterId, "-c", config, "-N", "-s"))
                .hasMessageContaining("Only one of");
        assertThatThrownBy(() -> run("format", "-t", clusterId, "-c", properties().toString(), "--standalone"))
                .hasMessageContaining("You cannot specify controller.quorum.voters and format the node with "
                        + "--initial-controllers, --standalone or --no-initial-controllers.");
        assertThatThrownBy(() -> run("format", "-t", clusterId, "-c", properties().toString(), "-N"))
                .hasMessageContaining("You cannot specify controller.quorum.voters");
        assertThat(Files.exists(dir.resolve("kraft").resolve(MetaProperties.FILE_NAME))).isFalse();
    }

    @Test
    void aStaticVoterMayBeReachedElsewhereThanItsControllerListenerWhichItBinds() {
        // A static voter entry is where the others reach this controller (here a proxy on 9094), as Kafka allows.
        MetadataConfig config = MetadataConfig.from(Map.of("process.roles", "broker,controller", "node.id", "1",
                "controller.quorum.voters", "1@localhost:9094", "listeners",
                "PLAINTEXT://:9092,CONTROLLER://:9093", "controller.listener.names", "CONTROLLER"));
        assertThat(config.controllerBindPort()).isEqualTo(9093);
        assertThat(MetadataConfig.from(Map.of("process.roles", "broker,controller", "node.id", "1",
                "controller.quorum.voters", "1@localhost:9094", "listeners", "PLAINTEXT://:9092",
                "controller.listener.names", "CONTROLLER")).controllerBindPort()).isEqualTo(9094);
        assertThatThrownBy(() -> MetadataConfig.from(Map.of("process.roles", "broker", "node.id", "1")))
                .hasMessageContaining("controller.quorum.voters or controller.quorum.bootstrap.servers");
    }

    @Test
    void formatWritesTheBootstrapFeatureLevelsWithKafkasFeatureAndReleaseVersionFlags() throws Exception {
        // Given
        String clusterId = MetaProperties.randomUuid().toString();

        // When: ELR turned off at format time
        int code = run("format", "-t", clusterId, "-c", properties().toString(), "--release-version", "4.1",
                "--feature", "eligible.leader.replicas.version=0");

        // Then: only the metadata dir holds them; a dir without the file gets Cairn's defaults
        assertThat(code).isZero();
        assertThat(BootstrapFeatures.read(dir.resolve("meta"))).containsEntry("metadata.version", (short) 27)
                .containsEntry("eligible.leader.replicas.version", (short) 0);
        assertThat(Files.exists(dir.resolve("a").resolve(BootstrapFeatures.FILE_NAME))).isFalse();
        assertThat(BootstrapFeatures.read(dir.resolve("a")))
                .containsEntry("eligible.leader.replicas.version", (short) 1);
        String config = properties().toString();
        assertThatThrownBy(() -> run("format", "-t", clusterId, "-c", config, "-r", "3.9"))
                .hasMessageContaining("Unsupported release version 3.9");
        assertThatThrownBy(() -> run("format", "-t", clusterId, "-c", config, "-f", "streams.version=1"))
                .hasMessageContaining("Unknown feature streams.version");
        assertThatThrownBy(() -> run("format", "-t", clusterId, "-c", config, "-f", "transaction.version=3"))
                .hasMessageContaining("does not support level 3");
        assertThatThrownBy(() -> run("format", "-t", clusterId, "-c", config, "-f", "group.version"))
                .hasMessageContaining("equals sign not found");
    }
}
