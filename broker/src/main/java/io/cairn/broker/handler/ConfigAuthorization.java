package io.cairn.broker.handler;

import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.wire.error.Errors;

/**
 * Kafka's authorization of a config resource ({@code ConfigHelper.handleDescribeConfigsRequest},
 * {@code ControllerApis.authorizeAlterResource}): BROKER, BROKER_LOGGER and CLIENT_METRICS resources need the operation
 * on the cluster (else CLUSTER_AUTHORIZATION_FAILED), a TOPIC on the topic (TOPIC_AUTHORIZATION_FAILED), a GROUP on
 * the group (GROUP_AUTHORIZATION_FAILED). Other types are left to the handler's own validation. Stateless.
 */
final class ConfigAuthorization {

    private static final byte TOPIC = 2;
    private static final byte BROKER = 4;
    private static final byte BROKER_LOGGER = 8;
    private static final byte CLIENT_METRICS = 16;
    private static final byte GROUP = 32;

    private ConfigAuthorization() {
    }

    /** The error for a caller without {@code operation} on the resource, or null when it may proceed. */
    static Errors denied(RequestContext ctx, AclOperation operation, byte resourceType, String resourceName) {
        switch (resourceType) {
            case BROKER, BROKER_LOGGER, CLIENT_METRICS -> {
                return ctx.authorizeCluster(operation) ? null : Errors.CLUSTER_AUTHORIZATION_FAILED;
            }
            case TOPIC -> {
                return ctx.authorize(operation, AclResourceType.TOPIC, resourceName) ? null
                        : Errors.TOPIC_AUTHORIZATION_FAILED;
            }
            case GROUP -> {
                return ctx.authorize(operation, AclResourceType.GROUP, resourceName) ? null
                        : Errors.GROUP_AUTHORIZATION_FAILED;
            }
            default -> {
                return null;
            }
        }
    }
}
