package io.cairn.metadata.image;

import java.util.Arrays;

/**
 * A SCRAM credential of one user and mechanism. Immutable (the arrays are copied), thread-safe.
 *
 * @param user       the user name
 * @param mechanism  1 SCRAM-SHA-256, 2 SCRAM-SHA-512
 * @param salt       the salt
 * @param storedKey  the stored key
 * @param serverKey  the server key
 * @param iterations the iteration count
 */
public record ScramCredential(String user, byte mechanism, byte[] salt, byte[] storedKey, byte[] serverKey,
                              int iterations) {

    public ScramCredential {
        salt = salt.clone();
        storedKey = storedKey.clone();
        serverKey = serverKey.clone();
    }

    @Override
    public byte[] salt() {
        return salt.clone();
    }

    @Override
    public byte[] storedKey() {
        return storedKey.clone();
    }

    @Override
    public byte[] serverKey() {
        return serverKey.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ScramCredential other && user.equals(other.user) && mechanism == other.mechanism
                && Arrays.equals(salt, other.salt) && Arrays.equals(storedKey, other.storedKey)
                && Arrays.equals(serverKey, other.serverKey) && iterations == other.iterations;
    }

    @Override
    public int hashCode() {
        return 31 * (31 * user.hashCode() + mechanism) + Arrays.hashCode(storedKey);
    }

    @Override
    public String toString() {
        return "ScramCredential[user=" + user + ", mechanism=" + mechanism + ", iterations=" + iterations + "]";
    }
}
