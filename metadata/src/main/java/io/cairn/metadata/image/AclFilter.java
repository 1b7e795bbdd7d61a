package io.cairn.metadata.image;

/**
 * A filter over ACLs as DescribeAcls and DeleteAcls carry it, with Kafka's matching rules
 * ({@code AclBindingFilter.matches}). Immutable, thread-safe.
 *
 * <p>The resource part: type {@code ANY} or equal; pattern type {@code ANY}, {@code MATCH} or equal; a null name
 * matches every name; with pattern type {@code ANY} or the ACL's own the name must be equal; with {@code MATCH} a
 * literal ACL matches its own name or the wildcard {@code *}, and a prefixed ACL every name that starts with its
 * prefix. The entry part: a null principal or host matches any, operation and permission {@code ANY} or equal.
 *
 * @param resourceType the resource type code
 * @param resourceName the resource name, null for any
 * @param patternType the pattern type code
 * @param principal the principal, null for any
 * @param host the host, null for any
 * @param operation the operation code
 * @param permissionType the permission type code
 */
public record AclFilter(byte resourceType, String resourceName, byte patternType, String principal, String host,
                        byte operation, byte permissionType) {

    /** True when a part of the filter is UNKNOWN (a code Kafka does not define, or 0): Kafka refuses such a filter. */
    public boolean hasUnknown() {
        return AclResourceType.fromCode(resourceType) == AclResourceType.UNKNOWN
                || AclPatternType.fromCode(patternType) == AclPatternType.UNKNOWN
                || AclOperation.fromCode(operation) == AclOperation.UNKNOWN
                || AclPermissionType.fromCode(permissionType) == AclPermissionType.UNKNOWN;
    }

    public boolean matches(AclEntry acl) {
        return matchesResource(acl) && matchesEntry(acl);
    }

    private boolean matchesResource(AclEntry acl) {
        AclResourceType type = AclResourceType.fromCode(resourceType);
        if (type != AclResourceType.ANY && resourceType != acl.resourceType()) {
            return false;
        }
        AclPatternType pattern = AclPatternType.fromCode(patternType);
        if (pattern != AclPatternType.ANY && pattern != AclPatternType.MATCH && patternType != acl.patternType()) {
            return false;
        }
        if (resourceName == null) {
            return true;
        }
        if (pattern == AclPatternType.ANY || patternType == acl.patternType()) {
            return resourceName.equals(acl.resourceName());
        }
        AclPatternType aclPattern = AclPatternType.fromCode(acl.patternType());
        if (aclPattern == AclPatternType.LITERAL) {
            return resourceName.equals(acl.resourceName()) || acl.resourceName().equals("*");
        }
        return aclPattern == AclPatternType.PREFIXED && resourceName.startsWith(acl.resourceName());
    }

    private boolean matchesEntry(AclEntry acl) {
        if (principal != null && !principal.equals(acl.principal())) {
            return false;
        }
        if (host != null && !host.equals(acl.host())) {
            return false;
        }
        if (AclOperation.fromCode(operation) != AclOperation.ANY && operation != acl.operation()) {
            return false;
        }
        return AclPermissionType.fromCode(permissionType) == AclPermissionType.ANY
                || permissionType == acl.permissionType();
    }
}
