/** The quorum front: SASL (and its TLS) on the metadata quorum's links, before the Raft transport. */
package io.cairn.broker.quorum;
