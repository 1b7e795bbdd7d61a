package io.cairn.broker.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.broker.coordinator.CoordinatorRuntimeSettings;
import io.cairn.broker.group.GroupConfig;
import io.cairn.broker.group.consumer.ConsumerGroupConfig;
import io.cairn.broker.txn.TransactionConfig;
import io.cairn.log.cleaner.LogCleaner;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BrokerConfigTest {

    @TempDir
    Path dir;

    @Test
    void shouldUseKafkaDefaultsAndDataUnderDotDataWhenNothingIsSet() {
        // When
        BrokerConfig config = BrokerConfig.fromMap(Map.of());

        // Then
        assertThat(config.listeners()).containsExactly(new Endpoint("PLAINTEXT", "", 9092,
                SecurityProtocol.PLAINTEXT));
        assertThat(config.advertisedListeners()).isEqualTo(config.listeners());
        assertThat(config.nodeId()).isEqualTo(1);
        assertThat(config.processRoles()).containsExactly(BrokerConfig.ProcessRole.BROKER,
                BrokerConfig.ProcessRole.CONTROLLER);
        assertThat(config.logDirs()).containsExactly(Path.of("./data"));
        assertThat(config.socketRequestMaxBytes()).isEqualTo(104857600);
        assertThat(config.socketSendBufferBytes()).isEqualTo(102400);
        assertThat(config.socketReceiveBufferBytes()).isEqualTo(102400);
        assertThat(config.numNetworkThreads()).isEqualTo(3);
        assertThat(config.numIoThreads()).isEqualTo(8);
        assertThat(config.queuedMaxRequests()).isEqualTo(500);
        assertThat(config.queuedMaxRequestBytes()).isEqualTo(-1L);
        assertThat(config.connectionsMaxIdleMs()).isEqualTo(600000L);
        assertThat(config.listeners().get(0).wildcardHost()).isTrue();
    }

    @Test
    void shouldReadAPropertiesFileAndApplyOverridesOnTop() throws Exception {
        // Given
        Path file = dir.resolve("server.properties");
        Files.writeString(file, """
                # comment
                node.id=7
                listeners=PLAINTEXT://localhost:19092,CONTROLLER://[::1]:19093
                controller.listener.names=CONTROLLER
                log.dirs=/a,/b
                num.network.threads=5
                """);

        // When
        BrokerConfig config = BrokerConfig.load(file, Map.of("num.network.threads", "2"));

        // Then
        assertThat(config.nodeId()).isEqualTo(7);
        assertThat(config.listeners()).containsExactly(
                new Endpoint("PLAINTEXT", "localhost", 19092, SecurityProtocol.PLAINTEXT),
                new Endpoint("CONTROLLER", "::1", 19093, SecurityProtocol.PLAINTEXT));
        assertThat(config.advertisedListeners()).extracting(Endpoint::listenerName).containsExactly("PLAINTEXT");
        assertThat(config.isControllerListener("CONTROLLER")).isTrue();
        assertThat(config.logDirs()).containsExactly(Path.of("/a"), Path.of("/b"));
        assertThat(config.numNetworkThreads()).isEqualTo(2);
        assertThat(config.listeners().get(1).toString()).isEqualTo("CONTROLLER://[::1]:19093");
    }

    @Test
    void replicaLagTimeMaxMsHasKafkasDefaultAndIsAKnownKey() {
        // When
        BrokerConfig config = BrokerConfig.fromMap(Map.of("replica.lag.time.max.ms", "12000"));

        // Then
        assertThat(config.replicaLagTimeMaxMs()).isEqualTo(12_000L);
        assertThat(config.unknownKeys()).isEmpty();
        assertThat(BrokerConfig.fromMap(Map.of()).replicaLagTimeMaxMs()).isEqualTo(30_000L);
    }

    @Test
    void shouldPreferLogDirsOverLogDir() {
        // When
        BrokerConfig config = BrokerConfig.fromMap(Map.of("log.dir", "/one", "log.dirs", "/two"));

        // Then
        assertThat(config.logDirs()).containsExactly(Path.of("/two"));
        assertThat(BrokerConfig.fromMap(Map.of("log.dir", "/one")).logDirs()).containsExactly(Path.of("/one"));
    }

    @Test
    void shouldAcceptAndReportUnknownKeys() {
        // When
        BrokerConfig config = BrokerConfig.fromMap(Map.of("num.partitions", "3", "node.id", "2", "foo", "bar",
                "log.cleaner.threads", "10", "log.local.retention.ms", "1000"));

        // Then
        assertThat(config.unknownKeys()).containsExactly("foo");
        assertThat(config.notActedOnKeys()).containsExactly("log.local.retention.ms");
        assertThat(config.cleaner().threads()).isEqualTo(10);
    }

    @Test
    void theCleanerBuffersAreReadAndKafkasPerThreadMinimumIsRequired() {
        // Given / When: Kafka's defaults, then set values
        CleanerSettings defaults = BrokerConfig.fromMap(Map.of()).cleaner();
        CleanerSettings set = BrokerConfig.fromMap(Map.of("log.cleaner.dedupe.buffer.size", "8388608",
                "log.cleaner.io.buffer.load.factor", "0.5", "log.cleaner.io.buffer.size", "65536",
                "log.cleaner.threads", "2")).cleaner();

        // Then
        assertThat(defaults.bufferSizes()).isEqualTo(LogCleaner.BufferSizes.DEFAULTS);
        assertThat(set.bufferSizes()).isEqualTo(new LogCleaner.BufferSizes(8388608, 0.5, 65536));
        // each of 2 threads: a 4 MiB map at 0.5 (24-byte entries), a 16 KiB read buffer
        assertThat(set.bufferSizes().perThread(2).mapCapacity()).isEqualTo(4 * 1024 * 1024 / 24 / 2);
        assertThat(set.bufferSizes().perThread(2).readBufferBytes()).isEqualTo(16384);
        // Kafka's require: more than 1 MiB per thread
        assertThatThrownBy(() -> BrokerConfig.fromMap(Map.of("log.cleaner.dedupe.buffer.size", "2097152",
                "log.cleaner.threads", "2"))).isInstanceOf(ConfigException.class).hasMessage("requirement failed: "
                + "log.cleaner.dedupe.buffer.size must be at least 1MB per cleaner thread.");
        assertThat(BrokerConfig.fromMap(Map.of("log.cleaner.dedupe.buffer.size", "2097154",
                "log.cleaner.threads", "2")).cleaner().dedupeBufferSize()).isEqualTo(2097154);
        assertThatThrownBy(() -> BrokerConfig.fromMap(Map.of("log.cleaner.io.buffer.load.factor", "0")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("offset map is too small");
        assertThatThrownBy(() -> BrokerConfig.fromMap(Map.of("log.cleaner.io.buffer.load.factor", "0",
                "log.cleaner.threads", "0"))).isInstanceOf(ConfigException.class)
                .hasMessageContaining("offset map is too small");
        assertThat(BrokerConfig.fromMap(Map.of("log.cleaner.dedupe.buffer.size", "1024", "log.cleaner.threads",
                "0")).cleaner().threadsToRun()).isZero();
        // live values over the static ones
        assertThat(defaults.with(Map.of("log.cleaner.dedupe.buffer.size", "4194305")).dedupeBufferSize())
                .isEqualTo(4194305);
        assertThat(defaults.with(Map.of("log.cleaner.io.buffer.size", "1024")).with(Map.of(
                "log.cleaner.io.buffer.load.factor", "0.75")).bufferSizes()).isEqualTo(
                new LogCleaner.BufferSizes(134217728L, 0.75, 1024));
        assertThat(defaults.with(Map.of("log.cleaner.dedupe.buffer.size", "1048576")).problem()).isPresent();
    }

    @Test
    void brokerLogKeysBecomeTopicDefaultsWithTheFinestUnitWinning() {
        // When
        BrokerConfig config = BrokerConfig.fromMap(Map.of("log.retention.hours", "1", "log.retention.ms", "5000",
                "log.roll.hours", "2", "log.segment.bytes", "1048576", "message.max.bytes", "2000",
                "log.cleanup.policy", "compact"));

        // Then
        assertThat(config.topicDefaults()).containsEntry("retention.ms", "5000").containsEntry("segment.ms", "7200000")
                .containsEntry("segment.bytes", "1048576").containsEntry("max.message.bytes", "2000")
                .containsEntry("cleanup.policy", "compact");
        assertThat(config.unknownKeys()).isEmpty();
    }

    @Test
    void theFlushSchedulerIntervalRunsTheFlusherAndDefaultsFlushMsUnlessLogFlushIntervalMsIsSet() {
        // When
        BrokerConfig schedulerOnly = BrokerConfig.fromMap(Map.of("log.flush.scheduler.interval.ms", "250"));
        BrokerConfig both = BrokerConfig.fromMap(Map.of("log.flush.scheduler.interval.ms", "250",
                "log.flush.interval.ms", "900", "log.flush.interval.messages", "7"));
        BrokerConfig neither = BrokerConfig.fromMap(Map.of());

        // Then: Kafka's KafkaConfig.logFlushIntervalMs
        assertThat(schedulerOnly.logFlushSchedulerIntervalMs()).isEqualTo(250);
        assertThat(schedulerOnly.topicDefaults()).containsEntry("flush.ms", "250");
        assertThat(both.topicDefaults()).containsEntry("flush.ms", "900").containsEntry("flush.messages", "7");
        assertThat(both.effectiveValues()).containsEntry("log.flush.interval.ms", "900")
                .containsEntry("log.flush.interval.messages", "7");
        assertThat(neither.logFlushSchedulerIntervalMs()).isEqualTo(Long.MAX_VALUE);
        assertThat(neither.logRetentionCheckIntervalMs()).isEqualTo(300_000L);
        assertThat(neither.topicDefaults()).doesNotContainKey("flush.ms");
        assertThat(schedulerOnly.unknownKeys()).isEmpty();
        assertThatThrownBy(() -> BrokerConfig.fromMap(Map.of("log.flush.interval.messages", "0")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("log.flush.interval.messages");
    }

    @Test
    void fetchLimitsHaveKafkaDefaultsAndCanBeSet() {
        // When
        BrokerConfig defaults = BrokerConfig.fromMap(Map.of());
        BrokerConfig set = BrokerConfig.fromMap(Map.of("fetch.max.bytes", "1048576",
                "max.incremental.fetch.session.cache.slots", "0"));

        // Then
        assertThat(defaults.fetchMaxBytes()).isEqualTo(57_671_680);
        assertThat(defaults.fetchSessionCacheSlots()).isEqualTo(1000);
        assertThat(set.fetchMaxBytes()).isEqualTo(1_048_576);
        assertThat(set.fetchSessionCacheSlots()).isZero();
        assertThat(set.unknownKeys()).isEmpty();
    }

    @Test
    void aBrokerLogKeyThatIsNotANumberFailsTheConfig() {
        // When / Then
        assertThatThrownBy(() -> BrokerConfig.fromMap(Map.of("log.retention.hours", "a week")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("log.retention.hours");
    }

    @Test
    void shouldRejectANonIntegerPortNamingTheKey() {
        assertThatThrownBy(() -> BrokerConfig.fromMap(Map.of("listeners", "PLAINTEXT://:abc")))
                .isInstanceOf(ConfigException.class)
                .hasMessage("Invalid value PLAINTEXT://:abc for configuration listeners: port 'abc' is not a number");
    }

    @Test
    void shouldRejectAPortOutOfRange() {
        assertThatThrownBy(() -> BrokerConfig.fromMap(Map.of("listeners", "PLAINTEXT://:70000")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("between 0 and 65535");
    }

    @Test
    void shouldRejectAListenerWithoutName() {
        assertThatThrownBy(() -> BrokerConfig.fromMap(Map.of("listeners", "localhost:9092")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("NAME://host:port");
    }

    @Test
    void shouldRejectAListenerWithoutSecurityProtocol() {
        assertThatThrownBy(() -> BrokerConfig.fromMap(Map.of("listeners", "INTERNAL://:9092")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("no security protocol defined for listener INTERNAL");
    }

    @Test
    void shouldRejectTwoListenersWithTheSameName() {
        assertThatThrownBy(() -> BrokerConfig.fromMap(Map.of("listeners", "PLAINTEXT://:1,PLAINTEXT://:2")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("PLAINTEXT appears twice");
    }

    @Test
    void shouldRejectANonNumericInteger() {
        assertThatThrownBy(() -> BrokerConfig.fromMap(Map.of("socket.request.max.bytes", "lots")))
                .isInstanceOf(ConfigException.class)
                .hasMessage("Invalid value lots for configuration socket.request.max.bytes: Not a number of type INT");
    }

    @Test
    void shouldRejectAnUnknownProcessRole() {
        assertThatThrownBy(() -> BrokerConfig.fromMap(Map.of("process.roles", "broker,voter")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("voter");
    }

    @Test
    void shouldRejectAnAdvertisedListenerThatIsNotAListener() {
        assertThatThrownBy(() -> BrokerConfig.fromMap(Map.of("advertised.listeners", "OTHER://host:1",
                "listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,OTHER:PLAINTEXT")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("OTHER is not one of the listeners");
    }

    @Test
    void shouldRejectAdvertisingTheWildcardAddress() {
        assertThatThrownBy(() -> BrokerConfig.fromMap(Map.of("advertised.listeners", "PLAINTEXT://0.0.0.0:9092")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("nonroutable meta-address 0.0.0.0");
    }

    @Test
    void shouldAcceptAnAdvertisedHostForTheListener() {
        // When
        BrokerConfig config = BrokerConfig.fromMap(Map.of("advertised.listeners", "PLAINTEXT://broker1:19092"));

        // Then
        assertThat(config.advertisedListeners()).containsExactly(new Endpoint("PLAINTEXT", "broker1", 19092,
                SecurityProtocol.PLAINTEXT));
    }

    @Test
    void shouldMapCustomListenerNamesThroughTheProtocolMap() {
        // When
        BrokerConfig config = BrokerConfig.fromMap(Map.of("listeners", "internal://127.0.0.1:0",
                "listener.security.protocol.map", "INTERNAL:PLAINTEXT", "inter.broker.listener.name", "INTERNAL"));

        // Then
        assertThat(config.listeners()).containsExactly(new Endpoint("INTERNAL", "127.0.0.1", 0,
                SecurityProtocol.PLAINTEXT));
        assertThat(config.replicaFetch().interBrokerListenerName()).isEqualTo("INTERNAL");
    }

    @Test
    void shouldReadTheReplicaFetcherSettingsWithKafkasDefaults() {
        // When
        BrokerConfig defaults = BrokerConfig.fromMap(Map.of());
        BrokerConfig set = BrokerConfig.fromMap(Map.of("num.replica.fetchers", "3", "replica.fetch.max.bytes", "2048",
                "replica.fetch.wait.max.ms", "100", "replica.socket.receive.buffer.bytes", "-1"));

        // Then
        assertThat(defaults.replicaFetch()).isEqualTo(new ReplicaFetchSettings(1, 1_048_576, 1, 500, 1_000L,
                10_485_760, 30_000, 65_536, "PLAINTEXT"));
        assertThat(defaults.unknownKeys()).isEmpty();
        assertThat(set.replicaFetch().numFetchers()).isEqualTo(3);
        assertThat(set.replicaFetch().fetchMaxBytes()).isEqualTo(2048);
        assertThat(set.replicaFetch().fetchWaitMaxMs()).isEqualTo(100);
        assertThat(set.replicaFetch().socketReceiveBufferBytes()).isEqualTo(-1);
        assertThat(set.unknownKeys()).isEmpty();
    }

    @Test
    void shouldRejectAnInterBrokerListenerThatIsNotAdvertisedOrSetTwice() {
        assertThatThrownBy(() -> BrokerConfig.fromMap(Map.of("inter.broker.listener.name", "REPLICATION")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("must be a listener name defined in advertised.listeners");
        assertThatThrownBy(() -> BrokerConfig.fromMap(Map.of("inter.broker.listener.name", "PLAINTEXT",
                "security.inter.broker.protocol", "PLAINTEXT")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("Only one of inter.broker.listener.name and security.inter.broker.protocol");
        assertThatThrownBy(() -> BrokerConfig.fromMap(Map.of("replica.fetch.wait.max.ms", "40000")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("replica.socket.timeout.ms should always be at least replica.fetch.wait.max.ms");
    }

    @Test
    void shouldReadTheMetadataSettingsWithKafkasDefaults() {
        // When
        BrokerConfig defaults = BrokerConfig.fromMap(Map.of());
        BrokerConfig set = BrokerConfig.fromMap(Map.of("broker.rack", "r1", "auto.create.topics.enable", "false",
                "broker.heartbeat.interval.ms", "500", "offsets.topic.num.partitions", "4",
                "offsets.topic.replication.factor", "1"));

        // Then
        assertThat(defaults.brokerRack()).isNull();
        assertThat(defaults.autoCreateTopicsEnable()).isTrue();
        assertThat(defaults.brokerHeartbeatIntervalMs()).isEqualTo(2000L);
        assertThat(defaults.internalTopics()).isEqualTo(new BrokerConfig.InternalTopicDefaults(50, (short) 3, 50,
                (short) 3));
        assertThat(set.brokerRack()).isEqualTo("r1");
        assertThat(set.autoCreateTopicsEnable()).isFalse();
        assertThat(set.brokerHeartbeatIntervalMs()).isEqualTo(500L);
        assertThat(set.internalTopics().offsetsPartitions()).isEqualTo(4);
        assertThat(set.internalTopics().offsetsReplication()).isEqualTo((short) 1);
        assertThat(set.unknownKeys()).isEmpty();
    }

    @Test
    void transactionKeysHaveKafkasDefaultsAndAreKnown() {
        // When
        BrokerConfig defaults = BrokerConfig.fromMap(Map.of());
        BrokerConfig set = BrokerConfig.fromMap(Map.of("transaction.max.timeout.ms", "60000",
                "transaction.state.log.min.isr", "1", "transaction.state.log.segment.bytes", "1048576",
                "transaction.state.log.num.partitions", "3", "transactional.id.expiration.ms", "1000",
                "transaction.abort.timed.out.transaction.cleanup.interval.ms", "500"));

        // Then
        assertThat(defaults.transactionConfig()).isEqualTo(TransactionConfig.defaults());
        assertThat(set.transactionConfig().maxTimeoutMs()).isEqualTo(60_000);
        assertThat(set.transactionConfig().logMinIsr()).isEqualTo(1);
        assertThat(set.transactionConfig().logSegmentBytes()).isEqualTo(1_048_576);
        assertThat(set.transactionConfig().logNumPartitions()).isEqualTo(3);
        assertThat(set.transactionConfig().transactionalIdExpirationMs()).isEqualTo(1_000L);
        assertThat(set.transactionConfig().abortTimedOutIntervalMs()).isEqualTo(500L);
        assertThat(set.unknownKeys()).isEmpty();
        assertThat(set.effectiveValues()).containsEntry("transaction.max.timeout.ms", "60000")
                .containsEntry("transactional.id.expiration.ms", "1000")
                .containsEntry("transaction.abort.timed.out.transaction.cleanup.interval.ms", "500");
    }

    @Test
    void shouldRejectABooleanThatIsNeitherTrueNorFalseNamingTheKey() {
        assertThatThrownBy(() -> BrokerConfig.fromMap(Map.of("auto.create.topics.enable", "yes")))
                .isInstanceOf(ConfigException.class)
                .hasMessage("Invalid value yes for configuration auto.create.topics.enable: Expected value to be "
                        + "either true or false");
    }

    @Test
    void shouldReadTheGroupCoordinatorRuntimeSettingsWithKafka41Defaults() {
        // When
        BrokerConfig defaults = BrokerConfig.fromMap(Map.of());
        BrokerConfig set = BrokerConfig.fromMap(Map.of("group.coordinator.threads", "2",
                "group.coordinator.append.linger.ms", "0", "offsets.commit.timeout.ms", "700"));

        // Then
        assertThat(defaults.groupCoordinatorRuntime()).isEqualTo(new CoordinatorRuntimeSettings(4, 5, 5_000L));
        assertThat(set.groupCoordinatorRuntime()).isEqualTo(new CoordinatorRuntimeSettings(2, 0, 700L));
        assertThat(set.unknownKeys()).isEmpty();
        assertThat(set.effectiveValues()).containsEntry("group.coordinator.threads", "2")
                .containsEntry("group.coordinator.append.linger.ms", "0")
                .containsEntry("offsets.commit.timeout.ms", "700");
        assertThatThrownBy(() -> BrokerConfig.fromMap(Map.of("group.coordinator.threads", "0")))
                .isInstanceOf(ConfigException.class);
    }

    @Test
    void shouldReadTheConsumerGroupSettingsWithKafkasDefaultsAndRanges() {
        // When
        BrokerConfig defaults = BrokerConfig.fromMap(Map.of());
        BrokerConfig set = BrokerConfig.fromMap(Map.of("group.consumer.session.timeout.ms", "50000",
                "group.consumer.heartbeat.interval.ms", "6000", "group.consumer.max.size", "3",
                "group.consumer.assignors", "range, org.apache.kafka.coordinator.group.assignor.UniformAssignor"));

        // Then
        assertThat(defaults.consumerGroupConfig()).isEqualTo(ConsumerGroupConfig.defaults());
        assertThat(set.consumerGroupConfig()).isEqualTo(new ConsumerGroupConfig(50_000, 45_000, 60_000, 6_000, 5_000,
                15_000, 3, List.of("range", "uniform")));
        assertThat(set.unknownKeys()).isEmpty();
        assertThatThrownBy(() -> BrokerConfig.fromMap(Map.of("group.consumer.session.timeout.ms", "30000")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("group.consumer.session.timeout.ms");
        assertThatThrownBy(() -> BrokerConfig.fromMap(Map.of("group.consumer.assignors", "sticky")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("group.consumer.assignors");
    }

    @Test
    void shouldReadTheConsumerGroupMigrationPolicyCaseInsensitivelyAsKafka() {
        // When
        BrokerConfig defaults = BrokerConfig.fromMap(Map.of());
        BrokerConfig set = BrokerConfig.fromMap(Map.of("group.consumer.migration.policy", "Upgrade",
                "group.max.size", "7"));

        // Then
        assertThat(defaults.consumerGroupConfig().migrationPolicy())
                .isEqualTo(io.cairn.broker.group.consumer.ConsumerGroupMigrationPolicy.BIDIRECTIONAL);
        assertThat(set.consumerGroupConfig().migrationPolicy())
                .isEqualTo(io.cairn.broker.group.consumer.ConsumerGroupMigrationPolicy.UPGRADE);
        assertThat(set.consumerGroupConfig().classicMaxSize()).isEqualTo(7);
        assertThat(set.unknownKeys()).isEmpty();
        assertThatThrownBy(() -> BrokerConfig.fromMap(Map.of("group.consumer.migration.policy", "sideways")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("group.consumer.migration.policy");
    }

    @Test
    void shouldReadTheGroupCoordinatorSettingsWithKafkasDefaults() {
        // When
        BrokerConfig defaults = BrokerConfig.fromMap(Map.of());
        BrokerConfig set = BrokerConfig.fromMap(Map.of("group.min.session.timeout.ms", "1000",
                "group.max.session.timeout.ms", "60000", "group.initial.rebalance.delay.ms", "0",
                "group.max.size", "5", "offsets.retention.minutes", "2", "offsets.retention.check.interval.ms",
                "1000", "offset.metadata.max.bytes", "10"));

        // Then
        assertThat(defaults.groupConfig()).isEqualTo(GroupConfig.defaults());
        assertThat(set.groupConfig()).isEqualTo(new GroupConfig(1000, 60000, 0, 5, 120_000L, 1000L, 10));
        assertThat(set.unknownKeys()).isEmpty();
        assertThat(set.effectiveValues()).containsEntry("group.initial.rebalance.delay.ms", "0")
                .containsEntry("offsets.retention.minutes", "2");
        assertThatThrownBy(() -> BrokerConfig.fromMap(Map.of("group.min.session.timeout.ms", "70000",
                "group.max.session.timeout.ms", "60000")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("group.min.session.timeout.ms");
    }

    @Test
    void replicaSelectorClassIsUnsetOrKafkasRackAwareSelector() {
        // When
        BrokerConfig unset = BrokerConfig.fromMap(Map.of());
        BrokerConfig rackAware = BrokerConfig.fromMap(Map.of("replica.selector.class",
                "org.apache.kafka.common.replica.RackAwareReplicaSelector"));

        // Then
        assertThat(unset.rackAwareReplicaSelector()).isFalse();
        assertThat(unset.effectiveValues()).containsEntry("replica.selector.class", "null");
        assertThat(rackAware.rackAwareReplicaSelector()).isTrue();
        assertThat(rackAware.unknownKeys()).isEmpty();
        assertThat(rackAware.effectiveValues()).containsEntry("replica.selector.class",
                "org.apache.kafka.common.replica.RackAwareReplicaSelector");
    }

    @Test
    void anyOtherReplicaSelectorClassFailsTheConfigInOneLine() {
        assertThatThrownBy(() -> BrokerConfig.fromMap(Map.of("replica.selector.class", "com.example.MySelector")))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("Invalid value com.example.MySelector for configuration replica.selector.class:")
                .hasMessageContaining("org.apache.kafka.common.replica.RackAwareReplicaSelector")
                .hasMessageNotContaining("\n");
    }

    @Test
    void authorizerIsKafkasStandardAuthorizerWithItsSuperUsersAndDefaultRule() {
        // When
        BrokerConfig unset = BrokerConfig.fromMap(Map.of());
        BrokerConfig standard = BrokerConfig.fromMap(Map.of("authorizer.class.name",
                "org.apache.kafka.metadata.authorizer.StandardAuthorizer", "super.users", " User:admin ;;User:ops",
                "allow.everyone.if.no.acl.found", "true"));

        // Then
        assertThat(unset.authorizer()).isNull();
        assertThat(standard.authorizer().superUsers()).containsExactly("User:admin", "User:ops");
        assertThat(standard.authorizer().allowEveryoneIfNoAclFound()).isTrue();
        assertThat(standard.unknownKeys()).isEmpty();
        assertThat(BrokerConfig.fromMap(Map.of("authorizer.class.name",
                "org.apache.kafka.metadata.authorizer.StandardAuthorizer")).authorizer().allowEveryoneIfNoAclFound())
                .isFalse();
    }

    @Test
    void anyOtherAuthorizerClassOrAMalformedSuperUserFailsTheConfigInOneLine() {
        assertThatThrownBy(() -> BrokerConfig.fromMap(Map.of("authorizer.class.name", "kafka.security.Custom")))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("Invalid value kafka.security.Custom for configuration authorizer.class.name:")
                .hasMessageContaining("org.apache.kafka.metadata.authorizer.StandardAuthorizer")
                .hasMessageNotContaining("\n");
        assertThatThrownBy(() -> BrokerConfig.fromMap(Map.of("authorizer.class.name",
                "org.apache.kafka.metadata.authorizer.StandardAuthorizer", "super.users", "admin")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("super.users");
    }

    @Test
    void metricsEndpointDefaultsToStrimzisPortOnEveryInterfaceAndCanBeMovedOrTurnedOff() {
        // When
        BrokerConfig defaults = BrokerConfig.fromMap(Map.of());
        BrokerConfig set = BrokerConfig.fromMap(Map.of("metrics.enabled", "false", "metrics.host", "127.0.0.1",
                "metrics.port", "0"));

        // Then
        assertThat(defaults.metricsEnabled()).isTrue();
        assertThat(defaults.metricsHost()).isEmpty();
        assertThat(defaults.metricsPort()).isEqualTo(9404);
        assertThat(set.metricsEnabled()).isFalse();
        assertThat(set.metricsHost()).isEqualTo("127.0.0.1");
        assertThat(set.metricsPort()).isZero();
        assertThat(set.unknownKeys()).isEmpty();
        assertThat(set.effectiveValues()).containsEntry("metrics.port", "0");
        assertThatThrownBy(() -> BrokerConfig.fromMap(Map.of("metrics.port", "65536")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("metrics.port");
    }

    @Test
    void aValueThatFailsItsKeysRuleFailsStartupNamingTheKeyAndTheRule() {
        // When / Then: every value is checked as Kafka checks it, with Kafka's message
        assertThatThrownBy(() -> BrokerConfig.fromMap(Map.of("log.cleaner.threads", "-1")))
                .isInstanceOf(ConfigException.class)
                .hasMessage("Invalid value -1 for configuration log.cleaner.threads: Value must be at least 0");
        assertThatThrownBy(() -> BrokerConfig.fromMap(Map.of("log.message.timestamp.type", "Now")))
                .isInstanceOf(ConfigException.class).hasMessage("Invalid value Now for configuration "
                        + "log.message.timestamp.type: String must be one of: CreateTime, LogAppendTime");
    }

    @Test
    void kafkasKeysThatCairnDoesNotActOnAreReportedApartFromUnknownOnes() {
        // When
        BrokerConfig config = BrokerConfig.fromMap(Map.of("log.local.retention.ms", "1000",
                "queued.max.requests", "10", "num.io.threads", "4", "no.such.key", "1"));

        // Then
        assertThat(config.notActedOnKeys()).containsExactly("log.local.retention.ms", "queued.max.requests");
        assertThat(config.unknownKeys()).containsExactly("no.such.key");
    }

    @Test
    void minutesWinOverHoursAndJitterMsOverJitterHoursAsInKafka() {
        // When
        BrokerConfig config = BrokerConfig.fromMap(Map.of("log.retention.hours", "1", "log.retention.minutes", "5",
                "log.roll.jitter.hours", "2", "log.roll.jitter.ms", "700", "log.roll.hours", "3"));

        // Then
        assertThat(config.topicDefaults()).containsEntry("retention.ms", "300000")
                .containsEntry("segment.jitter.ms", "700").containsEntry("segment.ms", "10800000");
    }
}
