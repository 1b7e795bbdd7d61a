/**
 * The Netty front of the broker: listeners ({@link io.cairn.broker.net.SocketServer}), the per-connection pipeline
 * (frame decoder, dispatcher, response orderer, response encoder) and Kafka's rules for bad input, and the zero-copy
 * path of Fetch records ({@link io.cairn.broker.net.FileSliceByteBuf} sent as file regions). Everything here runs on
 * the network event loops and never blocks.
 */
package io.cairn.broker.net;
