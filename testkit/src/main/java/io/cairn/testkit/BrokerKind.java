package io.cairn.testkit;

/**
 * The brokers a compat scenario can run against, for {@code @EnumSource(BrokerKind.class)}: the scenario is
 * written once and each constant creates its broker, not yet started.
 *
 * <p>Immutable and thread-safe.
 */
public enum BrokerKind {

    /** The real Cairn process, from the jar the build produced. */
    CAIRN {
        @Override
        public BrokerProcess create() {
            return CairnProcess.create();
        }
    },

    /** The reference Apache Kafka, resolved from Maven Central at the version the build pins. */
    KAFKA {
        @Override
        public BrokerProcess create() {
            return KafkaReferenceProcess.create();
        }
    };

    /** A new broker of this kind with default settings, not yet started. */
    public abstract BrokerProcess create();

    /**
     * The one broker of this kind shared by every test in this JVM that only reads or adds state (topics with
     * unique names, own groups): started on first use, closed when the JVM exits. Tests that stop, kill, restart or
     * reconfigure a broker use {@link #start()} instead.
     */
    public BrokerProcess shared() {
        return SharedBrokers.get(this);
    }

    /** A new broker of this kind, already started. */
    public BrokerProcess start() {
        BrokerProcess broker = create();
        try {
            broker.start();
            return broker;
        } catch (RuntimeException e) {
            broker.close();
            throw e;
        }
    }
}
