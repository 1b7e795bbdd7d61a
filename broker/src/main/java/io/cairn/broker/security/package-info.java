/**
 * Authentication as Kafka does it: TLS engines built from a listener's {@code ssl.*} settings with the JDK's
 * provider ({@link io.cairn.broker.security.SslEngineFactory}), the SASL mechanisms' server sides
 * ({@link io.cairn.broker.security.SaslServer}: PLAIN against the listener's JAAS users, SCRAM against the metadata
 * image's credentials, OAUTHBEARER in {@code io.cairn.broker.security.oauth}), and the principal a peer
 * authenticates as ({@link io.cairn.broker.security.KafkaPrincipal}: {@code User:<name>} after SASL, mapped from a
 * certificate's distinguished name by {@link io.cairn.broker.security.SslPrincipalMapper} on TLS), kept on the
 * connection for the authorizer.
 */
package io.cairn.broker.security;
