package io.cairn.metadata.controller;

import io.cairn.metadata.image.ClientQuotaEntity;
import io.cairn.metadata.image.ImageRecords;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AlterClientQuotasRequestData;
import io.cairn.wire.message.AlterClientQuotasResponseData;
import io.cairn.wire.message.DescribeClientQuotasRequestData;
import io.cairn.wire.message.DescribeClientQuotasResponseData;
import io.cairn.wire.protocol.ApiMessage;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Client quotas: AlterClientQuotas v0-1 on the controller, as Kafka's {@code ClientQuotaControlManager} decides it.
 * Per entry of the request: the entity is a map of entity type to name (a later component of the same type replaces an
 * earlier one, as Kafka's request parsing does; a null name is the type's default); a quota key named twice fails the
 * entity with "Duplicate quota key", and an entity met again fails with "Ignoring duplicate entity" (the first entry's
 * records stand, as in Kafka). An entity is refused with INVALID_REQUEST when it is empty, has a type other than user,
 * client-id and ip, an empty name, combines ip with user or client-id, or names an ip that is neither an address nor a
 * resolvable host; a key outside the entity's keys ({@link QuotaKey}), a value not above 0, a fractional value for an
 * integral key or one too large for its type is refused with Kafka's message. A removal of a key the entity does not
 * have, and a set to the value it has, write no record. The records of the whole request are committed together; with
 * {@code validate_only} none are written. More than {@link ControllerLogic#MAX_RECORDS_PER_USER_OP} records fail every
 * entry with POLICY_VIOLATION, as Kafka refuses an excessively large batch.
 *
 * <p>DescribeClientQuotas is answered by any broker from its image ({@link #describe}).
 *
 * <p>Resolving an ip entity that is a host name asks DNS, as Kafka's controller does; the decision is made once by
 * the active controller and only its records are replayed, so the image stays deterministic. Stateless, thread-safe.
 */
public final class ClientQuotaCommands {

    /** DescribeClientQuotas match types (Kafka's {@code DescribeClientQuotasRequest}). */
    public static final byte MATCH_TYPE_EXACT = 0;
    public static final byte MATCH_TYPE_DEFAULT = 1;
    public static final byte MATCH_TYPE_SPECIFIED = 2;

    private ClientQuotaCommands() {
    }

    /** The quota keys Kafka accepts and the type each value must fit (Kafka's {@code QuotaConfig}). */
    public enum QuotaKey {
        PRODUCER_BYTE_RATE("producer_byte_rate", Type.LONG, false),
        CONSUMER_BYTE_RATE("consumer_byte_rate", Type.LONG, false),
        REQUEST_PERCENTAGE("request_percentage", Type.DOUBLE, false),
        CONTROLLER_MUTATION_RATE("controller_mutation_rate", Type.DOUBLE, false),
        CONNECTION_CREATION_RATE("connection_creation_rate", Type.INT, true);

        enum Type { INT, LONG, DOUBLE }

        private final String key;
        private final Type type;
        private final boolean ip;

        QuotaKey(String key, Type type, boolean ip) {
            this.key = key;
            this.type = type;
            this.ip = ip;
        }

        public String key() {
            return key;
        }

        static QuotaKey forKey(String key, boolean ipEntity) {
            for (QuotaKey k : values()) {
                if (k.key.equals(key) && k.ip == ipEntity) {
                    return k;
                }
            }
            return null;
        }
    }

    private record Outcome(Errors error, String message) {
        static final Outcome NONE = new Outcome(Errors.NONE, null);

        static Outcome invalid(String message) {
            return new Outcome(Errors.INVALID_REQUEST, message);
        }
    }

    static ControllerResult<AlterClientQuotasResponseData> alter(MetadataImage image,
            AlterClientQuotasRequestData request) {
        List<ApiMessage> records = new ArrayList<>();
        Map<ClientQuotaEntity, Outcome> results = new LinkedHashMap<>();
        for (AlterClientQuotasRequestData.EntryData entry : request.entries()) {
            Map<String, String> entries = new HashMap<>();
            entry.entity().forEach(e -> entries.put(e.entityType(), e.entityName()));
            ClientQuotaEntity entity = new ClientQuotaEntity(entries);
            // Values are null for removals, as in Kafka's ClientQuotaAlteration.
            Map<String, Double> alterations = new HashMap<>();
            for (AlterClientQuotasRequestData.OpData op : entry.ops()) {
                if (alterations.containsKey(op.key())) {
                    results.put(entity, Outcome.invalid("Duplicate quota key " + op.key()
                            + " not updating quota for this entity " + entity));
                } else {
                    alterations.put(op.key(), op.remove() ? null : op.value());
                }
            }
            if (results.containsKey(entity)) {
                results.put(entity, Outcome.invalid("Ignoring duplicate entity " + entity));
            } else {
                results.put(entity, alterEntity(image, entity, alterations, records));
            }
        }
        AlterClientQuotasResponseData response = new AlterClientQuotasResponseData();
        boolean tooLarge = records.size() > ControllerLogic.MAX_RECORDS_PER_USER_OP;
        results.forEach((entity, outcome) -> {
            List<AlterClientQuotasResponseData.EntityData> data = new ArrayList<>();
            entity.kafkaOrder().forEach((type, name) -> data.add(new AlterClientQuotasResponseData.EntityData()
                    .setEntityType(type).setEntityName(name)));
            Outcome shown = tooLarge ? new Outcome(Errors.POLICY_VIOLATION, Errors.POLICY_VIOLATION.message())
                    : outcome;
            response.entries().add(new AlterClientQuotasResponseData.EntryData().setEntity(data)
                    .setErrorCode(shown.error().code()).setErrorMessage(shown.message()));
        });
        return new ControllerResult<>(tooLarge || request.validateOnly() ? List.of() : records, response);
    }

    private static Outcome alterEntity(MetadataImage image, ClientQuotaEntity entity,
                                       Map<String, Double> alterations, List<ApiMessage> records) {
        Outcome outcome = validateEntity(entity);
        if (outcome.error() != Errors.NONE) {
            return outcome;
        }
        Map<String, String> entries = entity.entries();
        boolean ip = entries.containsKey(ClientQuotaEntity.IP);
        if (ip && (entries.containsKey(ClientQuotaEntity.USER) || entries.containsKey(ClientQuotaEntity.CLIENT_ID))) {
            // Kafka's message, missing space included.
            return Outcome.invalid("Invalid quota entity combination, IP entity should"
                    + "not be combined with User or ClientId");
        }
        if (ip && !isValidIpEntity(entries.get(ClientQuotaEntity.IP))) {
            return Outcome.invalid(entries.get(ClientQuotaEntity.IP) + " is not a valid IP or resolvable host.");
        }
        Map<String, Double> current = image.clientQuotas().getOrDefault(entity, Map.of());
        List<ApiMessage> changes = new ArrayList<>();
        for (Map.Entry<String, Double> alteration : alterations.entrySet()) {
            String key = alteration.getKey();
            Double value = alteration.getValue();
            if (value == null) {
                if (current.containsKey(key)) {
                    changes.add(ImageRecords.clientQuotaRecord(entity, key).setRemove(true));
                }
                continue;
            }
            Outcome invalid = validateValue(QuotaKey.forKey(key, ip), key, value);
            if (invalid != null) {
                return invalid;
            }
            if (!Objects.equals(current.get(key), value)) {
                changes.add(ImageRecords.clientQuotaRecord(entity, key).setValue(value));
            }
        }
        records.addAll(changes);
        return Outcome.NONE;
    }

    private static Outcome validateEntity(ClientQuotaEntity entity) {
        if (entity.entries().isEmpty()) {
            return Outcome.invalid("Invalid empty client quota entity");
        }
        for (Map.Entry<String, String> e : entity.kafkaOrder().entrySet()) {
            String type = e.getKey();
            if (!type.equals(ClientQuotaEntity.USER) && !type.equals(ClientQuotaEntity.CLIENT_ID)
                    && !type.equals(ClientQuotaEntity.IP)) {
                return Outcome.invalid("Unhandled client quota entity type: " + type);
            }
            if (e.getValue() != null && e.getValue().isEmpty()) {
                return Outcome.invalid("Empty " + type + " not supported");
            }
        }
        return Outcome.NONE;
    }

    /** Kafka's {@code validateQuotaKeyValue}: null when {@code value} is acceptable for {@code key}. */
    private static Outcome validateValue(QuotaKey quotaKey, String key, double value) {
        if (quotaKey == null) {
            return Outcome.invalid("Invalid configuration key " + key);
        }
        if (value <= 0.0) {
            return Outcome.invalid("Quota " + key + " must be greater than 0");
        }
        switch (quotaKey.type) {
            case INT:
                if (value > Integer.MAX_VALUE) {
                    return Outcome.invalid("Proposed value for " + key + " is too large for an INT.");
                }
                break;
            case LONG:
                if (value > Long.MAX_VALUE) {
                    return Outcome.invalid("Proposed value for " + key + " is too large for a LONG.");
                }
                break;
            default:
                return null;
        }
        if (Math.abs(value % 1.0) > 1e-6) {
            return Outcome.invalid(key + " cannot be a fractional value.");
        }
        return null;
    }

    /**
     * DescribeClientQuotas v0-1 from {@code image}, as Kafka's {@code ClientQuotasImage.describe}: each component
     * of the filter matches its entity type EXACT (the name; a null name is INVALID_REQUEST), DEFAULT (the default
     * entity; a name is INVALID_REQUEST) or SPECIFIED (any entity that has the type); with {@code strict} an entity
     * matches only when it has no other type. An empty type, a type named twice, an unknown match type and ip combined
     * with user or client-id are INVALID_REQUEST, a type other than user, client-id and ip UNSUPPORTED_VERSION, each
     * with Kafka's message and no entries. Entities come out in a stable order, their keys as Kafka lists them.
     */
    public static DescribeClientQuotasResponseData describe(MetadataImage image,
            DescribeClientQuotasRequestData request) {
        Map<String, String> exact = new HashMap<>();
        Set<String> specified = new HashSet<>();
        for (DescribeClientQuotasRequestData.ComponentData component : request.components()) {
            String type = component.entityType();
            if (type.isEmpty()) {
                return describeError(Errors.INVALID_REQUEST, "Invalid empty entity type.");
            }
            if (exact.containsKey(type) || specified.contains(type)) {
                return describeError(Errors.INVALID_REQUEST, "Entity type " + type
                        + " cannot appear more than once in the filter.");
            }
            if (!type.equals(ClientQuotaEntity.IP) && !type.equals(ClientQuotaEntity.USER)
                    && !type.equals(ClientQuotaEntity.CLIENT_ID)) {
                return describeError(Errors.UNSUPPORTED_VERSION, "Unsupported entity type " + type);
            }
            switch (component.matchType()) {
                case MATCH_TYPE_EXACT -> {
                    if (component.match() == null) {
                        return describeError(Errors.INVALID_REQUEST,
                                "Request specified MATCH_TYPE_EXACT, but set match string to null.");
                    }
                    exact.put(type, component.match());
                }
                case MATCH_TYPE_DEFAULT -> {
                    if (component.match() != null) {
                        return describeError(Errors.INVALID_REQUEST,
                                "Request specified MATCH_TYPE_DEFAULT, but also specified a match string.");
                    }
                    exact.put(type, null);
                }
                case MATCH_TYPE_SPECIFIED -> {
                    if (component.match() != null) {
                        return describeError(Errors.INVALID_REQUEST,
                                "Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.");
                    }
                    specified.add(type);
                }
                default -> {
                    return describeError(Errors.INVALID_REQUEST, "Unknown match type " + component.matchType());
                }
            }
        }
        boolean ip = exact.containsKey(ClientQuotaEntity.IP) || specified.contains(ClientQuotaEntity.IP);
        boolean userOrClient = exact.containsKey(ClientQuotaEntity.USER) || specified.contains(ClientQuotaEntity.USER)
                || exact.containsKey(ClientQuotaEntity.CLIENT_ID) || specified.contains(ClientQuotaEntity.CLIENT_ID);
        if (ip && userOrClient) {
            return describeError(Errors.INVALID_REQUEST, "Invalid entity filter component combination. IP filter "
                    + "component should not be used with user or clientId filter component.");
        }
        DescribeClientQuotasResponseData response = new DescribeClientQuotasResponseData()
                .setErrorCode(Errors.NONE.code()).setErrorMessage(null);
        image.clientQuotas().entrySet().stream()
                .filter(e -> matches(e.getKey(), exact, specified, request.strict()))
                .sorted(Comparator.comparing(e -> e.getKey().entries().toString()))
                .forEach(e -> {
                    DescribeClientQuotasResponseData.EntryData entry = new DescribeClientQuotasResponseData.EntryData();
                    e.getKey().kafkaOrder().forEach((type, name) -> entry.entity().add(
                            new DescribeClientQuotasResponseData.EntityData().setEntityType(type)
                                    .setEntityName(name)));
                    new HashMap<>(e.getValue()).forEach((key, value) -> entry.values().add(
                            new DescribeClientQuotasResponseData.ValueData().setKey(key).setValue(value)));
                    response.entries().add(entry);
                });
        return response;
    }

    private static boolean matches(ClientQuotaEntity entity, Map<String, String> exact, Set<String> specified,
                                   boolean strict) {
        Map<String, String> entries = entity.entries();
        if (strict && entries.size() != exact.size() + specified.size()) {
            return false;
        }
        for (Map.Entry<String, String> e : exact.entrySet()) {
            if (!entries.containsKey(e.getKey()) || !Objects.equals(entries.get(e.getKey()), e.getValue())) {
                return false;
            }
        }
        return entries.keySet().containsAll(specified);
    }

    /** A whole-request failure of DescribeClientQuotas: the error and message, and no entries (Kafka's). */
    public static DescribeClientQuotasResponseData describeError(Errors error, String message) {
        return new DescribeClientQuotasResponseData().setErrorCode(error.code()).setErrorMessage(message)
                .setEntries(null);
    }

    private static boolean isValidIpEntity(String ip) {
        if (ip == null) {
            return true;
        }
        try {
            InetAddress.getByName(ip);
            return true;
        } catch (UnknownHostException e) {
            return false;
        }
    }
}
