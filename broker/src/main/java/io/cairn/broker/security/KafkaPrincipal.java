package io.cairn.broker.security;

/**
 * Who a connection authenticated as, in Kafka's form {@code type:name}: {@code User:ANONYMOUS} on a PLAINTEXT
 * listener or for a TLS client without a certificate, {@code User:<mapped distinguished name>} for a TLS client
 * that presented one.
 *
 * @param principalType the type, {@code User} for every principal Cairn derives
 * @param name the name
 */
public record KafkaPrincipal(String principalType, String name) {

    /** Kafka's principal type of users. */
    public static final String USER_TYPE = "User";
    /** The principal of an unauthenticated connection. */
    public static final KafkaPrincipal ANONYMOUS = new KafkaPrincipal(USER_TYPE, "ANONYMOUS");

    @Override
    public String toString() {
        return principalType + ":" + name;
    }
}
