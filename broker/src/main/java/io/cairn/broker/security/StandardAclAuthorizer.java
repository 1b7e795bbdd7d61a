package io.cairn.broker.security;

import io.cairn.metadata.image.AclEntry;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclPatternType;
import io.cairn.metadata.image.AclPermissionType;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.MetadataListener;
import io.cairn.metadata.image.MetadataUpdate;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Cairn's counterpart of Kafka's {@code org.apache.kafka.metadata.authorizer.StandardAuthorizer}: ACLs from the
 * metadata image (literal, prefixed and the wildcard name {@code *}; principal {@code User:*}; host {@code *}),
 * DENY wins over ALLOW, ALLOW of READ/WRITE/DELETE/ALTER implies DESCRIBE and ALTER_CONFIGS implies
 * DESCRIBE_CONFIGS, {@code super.users} may do anything, and {@code allow.everyone.if.no.acl.found} decides a
 * resource no ACL names.
 *
 * <p>Lifecycle: built from the config, given the current image by {@link #load(MetadataImage)} and then every
 * committed change as a {@link MetadataListener}. Thread-safe: the index is immutable and published through a volatile
 * field (written by the metadata apply thread, read by every request handler).
 */
public final class StandardAclAuthorizer implements Authorizer, MetadataListener {

    private static final Logger LOGGER = LogManager.getLogger(StandardAclAuthorizer.class);
    /** Kafka's audit logger name; every decision at DEBUG (Metadata alone asks once per topic). */
    private static final Logger AUDIT = LogManager.getLogger("kafka.authorizer.logger");

    private final Set<String> superUsers;
    private final boolean allowIfNoAcl;
    /** Written by the metadata apply thread, read by request handlers. */
    private volatile AclIndex index = AclIndex.EMPTY;

    /**
     * @param superUsers the principals of {@code super.users}, each {@code type:name} (parsed by the config)
     * @param allowIfNoAcl {@code allow.everyone.if.no.acl.found}
     */
    public StandardAclAuthorizer(Set<String> superUsers, boolean allowIfNoAcl) {
        this.superUsers = Set.copyOf(superUsers);
        this.allowIfNoAcl = allowIfNoAcl;
    }

    /** Takes the ACLs of {@code image} (the image the broker starts from). */
    public void load(MetadataImage image) {
        index = AclIndex.of(image.acls().values());
        LOGGER.info("[StandardAuthorizer] Initialized with {} acl(s); super.users={}, allow.everyone.if.no.acl.found"
                + "={}", index.size(), String.join(",", superUsers), allowIfNoAcl);
    }

    @Override
    public void onUpdate(MetadataUpdate update) {
        if (update.image().acls() != update.previous().acls()
                && !update.image().acls().equals(update.previous().acls())) {
            index = AclIndex.of(update.image().acls().values());
        }
    }

    @Override
    public boolean enabled() {
        return true;
    }

    @Override
    public List<AclEntry> acls() {
        return index.all();
    }

    @Override
    public boolean authorize(KafkaPrincipal principal, String host, AclOperation operation,
            AclResourceType resourceType, String resourceName) {
        String name = principal.toString();
        boolean allowed = superUsers.contains(name)
                || index.decide(name, host, operation, resourceType, resourceName, allowIfNoAcl);
        if (!allowed && AUDIT.isDebugEnabled()) {
            AUDIT.debug("Principal = {} is Denied operation = {} from host = {} on resource = {}:LITERAL:{}", name,
                    operation, host, resourceType, resourceName);
        } else if (AUDIT.isDebugEnabled()) {
            AUDIT.debug("Principal = {} is Allowed operation = {} from host = {} on resource = {}:LITERAL:{}", name,
                    operation, host, resourceType, resourceName);
        }
        return allowed;
    }

    /**
     * Kafka's {@code Authorizer.authorizeByResourceType}: allowed when the action on a resource no ACL names is (so
     * super users and {@code allow.everyone.if.no.acl.found} count), when a wildcard-name ALLOW applies, or when some
     * ALLOW of this principal and host names a literal or prefixed resource that no DENY covers (a literal DENY of
     * the same name or a prefixed DENY of one of its prefixes); a wildcard-name DENY denies at once.
     */
    @Override
    public boolean authorizeByResourceType(KafkaPrincipal principal, String host, AclOperation operation,
            AclResourceType resourceType) {
        String name = principal.toString();
        if (superUsers.contains(name)
                || index.decide(name, host, operation, resourceType, "hardcode", allowIfNoAcl)) {
            return true;
        }
        Set<String> denyLiteral = new HashSet<>();
        Set<String> denyPrefixed = new HashSet<>();
        Set<String> allowLiteral = new HashSet<>();
        Set<String> allowPrefixed = new HashSet<>();
        boolean wildcardAllow = false;
        for (AclEntry acl : index.all()) {
            if (acl.resourceType() != resourceType.code()
                    || !acl.host().equals(host) && !acl.host().equals(AclIndex.WILDCARD)
                    || !acl.principal().equals(name) && !acl.principal().equals(AclIndex.WILDCARD_PRINCIPAL)
                    || acl.operation() != operation.code() && acl.operation() != AclOperation.ALL.code()) {
                continue;
            }
            AclPatternType pattern = AclPatternType.fromCode(acl.patternType());
            AclPermissionType permission = AclPermissionType.fromCode(acl.permissionType());
            if (permission == AclPermissionType.DENY) {
                if (pattern == AclPatternType.LITERAL) {
                    if (acl.resourceName().equals(AclIndex.WILDCARD)) {
                        return false;
                    }
                    denyLiteral.add(acl.resourceName());
                } else if (pattern == AclPatternType.PREFIXED) {
                    denyPrefixed.add(acl.resourceName());
                }
            } else if (permission == AclPermissionType.ALLOW) {
                if (pattern == AclPatternType.LITERAL) {
                    if (acl.resourceName().equals(AclIndex.WILDCARD)) {
                        wildcardAllow = true;
                    } else {
                        allowLiteral.add(acl.resourceName());
                    }
                } else if (pattern == AclPatternType.PREFIXED) {
                    allowPrefixed.add(acl.resourceName());
                }
            }
        }
        if (wildcardAllow) {
            return true;
        }
        for (String allowed : allowLiteral) {
            if (!denyLiteral.contains(allowed) && !deniedByPrefix(allowed, denyPrefixed)) {
                return true;
            }
        }
        for (String allowed : allowPrefixed) {
            if (!deniedByPrefix(allowed, denyPrefixed)) {
                return true;
            }
        }
        return false;
    }

    /** True when a non-empty prefix of {@code name} (or the name itself) is a prefixed DENY. */
    private static boolean deniedByPrefix(String name, Set<String> denyPrefixed) {
        for (int length = 1; length <= name.length(); length++) {
            if (denyPrefixed.contains(name.substring(0, length))) {
                return true;
            }
        }
        return false;
    }
}
