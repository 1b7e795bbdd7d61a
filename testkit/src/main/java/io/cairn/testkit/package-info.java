/**
 * Test-only helpers: broker processes (Cairn's jar, the reference Apache Kafka) on free loopback ports with their
 * own data directories and kept logs, Kafka CLI tools in child JVMs, and a raw Kafka-protocol client.
 */
package io.cairn.testkit;
