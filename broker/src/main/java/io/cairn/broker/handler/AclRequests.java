package io.cairn.broker.handler;

import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclPatternType;
import io.cairn.metadata.image.AclPermissionType;
import io.cairn.metadata.image.AclResourceType;

/**
 * What the three ACL APIs share: Kafka's messages for a broker without an authorizer and for a caller without the
 * cluster permission, and its parse-time check that no part of an ACL or filter is UNKNOWN (a code Kafka does not
 * define). Stateless.
 */
final class AclRequests {

    /** Kafka's message of SECURITY_DISABLED from CreateAcls and DeleteAcls. */
    static final String NO_AUTHORIZER = "No Authorizer is configured.";
    /** Kafka's message of SECURITY_DISABLED from DescribeAcls. */
    static final String NO_AUTHORIZER_ON_BROKER = "No Authorizer is configured on the broker";
    /** The message of CLUSTER_AUTHORIZATION_FAILED when the caller lacks the cluster operation. */
    static final String NOT_AUTHORIZED = "Request is not authorized.";

    private AclRequests() {
    }

    /**
     * True when one of the codes is UNKNOWN. Kafka refuses such a request while parsing it
     * ({@code CreateAclsRequest.validate}, {@code DescribeAclsRequest.normalizeAndValidate}); Cairn answers it with
     * INVALID_REQUEST.
     */
    static boolean hasUnknown(byte resourceType, byte patternType, byte operation, byte permissionType) {
        return AclResourceType.fromCode(resourceType) == AclResourceType.UNKNOWN
                || AclPatternType.fromCode(patternType) == AclPatternType.UNKNOWN
                || AclOperation.fromCode(operation) == AclOperation.UNKNOWN
                || AclPermissionType.fromCode(permissionType) == AclPermissionType.UNKNOWN;
    }

    /** The message of a request refused for an UNKNOWN code. */
    static String unknownMessage(String what) {
        return what + " contain UNKNOWN elements";
    }
}
