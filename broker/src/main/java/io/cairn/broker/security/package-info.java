/**
 * Transport security as Kafka does it: TLS engines built from a listener's {@code ssl.*} settings with the JDK's
 * provider ({@link io.cairn.broker.security.SslEngineFactory}), and the principal a TLS peer authenticates as
 * ({@link io.cairn.broker.security.KafkaPrincipal}, mapped from its certificate's distinguished name by
 * {@link io.cairn.broker.security.SslPrincipalMapper}), kept on the connection for the authorizer.
 */
package io.cairn.broker.security;
