/**
 * The Cairn broker process: {@link io.cairn.broker.Main} parses the command line, {@link io.cairn.broker.CairnServer}
 * owns one node's log directories, handlers and listeners.
 */
package io.cairn.broker;
