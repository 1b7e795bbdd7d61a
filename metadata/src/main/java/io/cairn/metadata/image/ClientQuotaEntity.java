package io.cairn.metadata.image;

import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * The entity a client quota applies to, as Kafka's {@code ClientQuotaEntity}: entity type ({@link #USER},
 * {@link #CLIENT_ID}, {@link #IP}) to name, where a null name is the default entity of that type (for example
 * {@code {user=null}} is the default user and {@code {user=alice, client-id=null}} alice's default client).
 * Immutable, thread-safe; equal when the maps are equal.
 *
 * @param entries entity type to name (null for a default), sorted by type
 */
public record ClientQuotaEntity(Map<String, String> entries) {

    public static final String USER = "user";
    public static final String CLIENT_ID = "client-id";
    public static final String IP = "ip";

    public ClientQuotaEntity {
        entries = Collections.unmodifiableMap(new TreeMap<>(entries));
    }

    /** An entity of one type. */
    public static ClientQuotaEntity of(String type, String name) {
        Map<String, String> entries = new HashMap<>();
        entries.put(type, name);
        return new ClientQuotaEntity(entries);
    }

    /** An entity of a user and a client id (either may be null for its default). */
    public static ClientQuotaEntity of(String user, String clientId, boolean withUser, boolean withClientId) {
        Map<String, String> entries = new HashMap<>();
        if (withUser) {
            entries.put(USER, user);
        }
        if (withClientId) {
            entries.put(CLIENT_ID, clientId);
        }
        return new ClientQuotaEntity(entries);
    }

    /**
     * The entries in the order Kafka's brokers write them into responses (the iteration order of a
     * {@code java.util.HashMap} of the same entries), so a response is the same byte for byte.
     */
    public Map<String, String> kafkaOrder() {
        return new HashMap<>(entries);
    }

    /** Kafka's rendering in messages, {@code ClientQuotaEntity(entries={user=alice})}. */
    @Override
    public String toString() {
        return "ClientQuotaEntity(entries=" + kafkaOrder() + ")";
    }
}
