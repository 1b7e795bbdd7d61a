/**
 * The one table of config keys ({@link io.cairn.metadata.config.ConfigTable}): every broker and topic key of Kafka
 * 4.1 with its type, default, unit, importance, rule and documentation, whether it may change at run time, and
 * whether Cairn acts on it. The broker's {@code server.properties} reading, DescribeConfigs and the controller's
 * topic-config checks all read it.
 */
package io.cairn.metadata.config;
