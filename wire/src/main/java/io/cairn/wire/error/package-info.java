/**
 * Kafka's error codes ({@link io.cairn.wire.error.Errors}) and the {@link io.cairn.wire.error.ApiException} family
 * that services use to fail a future with a code; {@link io.cairn.wire.error.Errors#forException(Throwable)} is the
 * one mapping from throwables to codes.
 */
package io.cairn.wire.error;
