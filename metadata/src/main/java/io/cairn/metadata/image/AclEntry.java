package io.cairn.metadata.image;

import io.cairn.wire.protocol.Uuid;

/**
 * One access-control entry, with Kafka's numeric ids for the enums. Immutable, thread-safe.
 *
 * @param id             the ACL id
 * @param resourceType   the resource type id
 * @param resourceName   the resource name
 * @param patternType    the pattern type id
 * @param principal      the principal, e.g. {@code User:alice}
 * @param host           the host, {@code *} for any
 * @param operation      the operation id
 * @param permissionType the permission type id (allow or deny)
 */
public record AclEntry(Uuid id, byte resourceType, String resourceName, byte patternType, String principal,
                       String host, byte operation, byte permissionType) {
}
