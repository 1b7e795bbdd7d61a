package io.cairn.metadata.image;

import io.cairn.metadata.record.AccessControlEntryRecord;
import io.cairn.metadata.record.BrokerRegistrationChangeRecord;
import io.cairn.metadata.record.ClusterIdRecord;
import io.cairn.metadata.record.ConfigRecord;
import io.cairn.metadata.record.ClearElrRecord;
import io.cairn.metadata.record.ClientQuotaRecord;
import io.cairn.metadata.record.ControllerChangeRecord;
import io.cairn.metadata.record.DelegationTokenRecord;
import io.cairn.metadata.record.FeatureLevelRecord;
import io.cairn.metadata.record.PartitionChangeRecord;
import io.cairn.metadata.record.PartitionRecord;
import io.cairn.metadata.record.ProducerIdsRecord;
import io.cairn.metadata.record.RegisterBrokerRecord;
import io.cairn.metadata.record.RemoveAccessControlEntryRecord;
import io.cairn.metadata.record.RemoveDelegationTokenRecord;
import io.cairn.metadata.record.RemoveTopicRecord;
import io.cairn.metadata.record.RemoveUserScramCredentialRecord;
import io.cairn.metadata.record.TopicRecord;
import io.cairn.metadata.record.UnregisterBrokerRecord;
import io.cairn.metadata.record.UserScramCredentialRecord;
import io.cairn.wire.protocol.ApiMessage;
import java.util.function.Supplier;

/**
 * The metadata record types, keyed by the {@code apiKey} of their schema in {@code src/main/schemas}. Immutable,
 * thread-safe.
 */
public enum MetadataRecordType {
    CLUSTER_ID(0, ClusterIdRecord::new),
    REGISTER_BROKER(1, RegisterBrokerRecord::new),
    UNREGISTER_BROKER(2, UnregisterBrokerRecord::new),
    BROKER_REGISTRATION_CHANGE(3, BrokerRegistrationChangeRecord::new),
    TOPIC(4, TopicRecord::new),
    PARTITION(5, PartitionRecord::new),
    PARTITION_CHANGE(6, PartitionChangeRecord::new),
    REMOVE_TOPIC(7, RemoveTopicRecord::new),
    CONFIG(8, ConfigRecord::new),
    PRODUCER_IDS(9, ProducerIdsRecord::new),
    ACCESS_CONTROL_ENTRY(10, AccessControlEntryRecord::new),
    REMOVE_ACCESS_CONTROL_ENTRY(11, RemoveAccessControlEntryRecord::new),
    USER_SCRAM_CREDENTIAL(12, UserScramCredentialRecord::new),
    REMOVE_USER_SCRAM_CREDENTIAL(13, RemoveUserScramCredentialRecord::new),
    CONTROLLER_CHANGE(14, ControllerChangeRecord::new),
    FEATURE_LEVEL(15, FeatureLevelRecord::new),
    CLEAR_ELR(16, ClearElrRecord::new),
    CLIENT_QUOTA(17, ClientQuotaRecord::new),
    DELEGATION_TOKEN(18, DelegationTokenRecord::new),
    REMOVE_DELEGATION_TOKEN(19, RemoveDelegationTokenRecord::new);

    private static final MetadataRecordType[] BY_ID = new MetadataRecordType[values().length];

    static {
        for (MetadataRecordType type : values()) {
            BY_ID[type.id] = type;
        }
    }

    private final short id;
    private final Supplier<ApiMessage> factory;

    MetadataRecordType(int id, Supplier<ApiMessage> factory) {
        this.id = (short) id;
        this.factory = factory;
    }

    public short id() {
        return id;
    }

    /** A new record of this type with default values. */
    public ApiMessage newRecord() {
        return factory.get();
    }

    /** The type with this id, or null when unknown. */
    public static MetadataRecordType forId(int id) {
        return id >= 0 && id < BY_ID.length ? BY_ID[id] : null;
    }

    /** The type of a record. */
    public static MetadataRecordType of(ApiMessage record) {
        MetadataRecordType type = forId(record.apiKey());
        if (type == null) {
            throw new IllegalArgumentException("Not a metadata record: " + record.getClass().getName());
        }
        return type;
    }
}
