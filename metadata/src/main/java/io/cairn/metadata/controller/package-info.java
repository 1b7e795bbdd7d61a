/**
 * The controller: pure decision logic ({@link io.cairn.metadata.controller.ControllerLogic}, topic commands,
 * replica placement, leader election, Kafka's topic-name and topic-config validation) and the active controller
 * ({@link io.cairn.metadata.controller.QuorumController}) that runs it against a pending image and appends the
 * resulting records to a {@link io.cairn.metadata.controller.MetadataLog}. No Ratis here: the log is an interface.
 */
package io.cairn.metadata.controller;
