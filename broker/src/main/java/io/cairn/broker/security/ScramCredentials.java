package io.cairn.broker.security;

import io.cairn.metadata.image.ScramCredential;
import io.cairn.metadata.image.ScramMechanism;

/**
 * Where the SCRAM server finds a user's credential: in the broker, the current metadata image (the credentials the
 * controller committed from AlterUserScramCredentials or {@code cairn-storage format --add-scram}). Implementations
 * are thread-safe and never block (a volatile read of the image).
 */
@FunctionalInterface
public interface ScramCredentials {

    /** None: every SCRAM authentication fails as an unknown user's does. */
    ScramCredentials NONE = (user, mechanism) -> null;

    /** The credential of {@code user} for {@code mechanism}, or null when there is none. */
    ScramCredential credential(String user, ScramMechanism mechanism);
}
