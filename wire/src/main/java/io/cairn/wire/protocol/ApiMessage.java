package io.cairn.wire.protocol;

/** A request or response body of one Kafka API. */
public interface ApiMessage extends Message {

    /** The API key this message belongs to. */
    short apiKey();
}
