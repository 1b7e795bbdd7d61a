package io.cairn.metadata.image;

/**
 * Receives committed metadata updates, in log order, on the node's single apply thread. Implementations must
 * return quickly (hand work to their own executor) and must not throw; a thrown exception is logged and ignored.
 */
@FunctionalInterface
public interface MetadataListener {

    void onUpdate(MetadataUpdate update);
}
