/**
 * SASL/OAUTHBEARER on the broker as Kafka 4.1 serves it: the mechanism's server side
 * ({@link io.cairn.broker.security.oauth.OAuthBearerSaslServer}, RFC 7628 messages with SASL extensions) and the two
 * token validators Kafka ships, written natively (no kafka-clients, jose4j or JSON library at run time): signed JWTs
 * checked against a JWKS fetched from a URL and refreshed in the background (KIP-768), and unsigned tokens for
 * development (KIP-255), the latter only when a listener names it. Every input a client controls is bounded: the
 * token's length, the JSON nesting, how often an unknown key id can make the broker fetch its JWKS.
 */
package io.cairn.broker.security.oauth;
