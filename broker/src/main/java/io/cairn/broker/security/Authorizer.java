package io.cairn.broker.security;

import io.cairn.metadata.image.AclEntry;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclResourceType;
import java.util.List;

/**
 * Decides whether a principal connected from a host may perform an operation on a resource, as Kafka's
 * {@code org.apache.kafka.server.authorizer.Authorizer} does. {@link #NONE} is the broker without
 * {@code authorizer.class.name}: it allows everything and the ACL APIs answer SECURITY_DISABLED.
 *
 * <p>Implementations are thread-safe: every request handler thread asks concurrently.
 */
public interface Authorizer {

    /** No authorizer configured: every action is allowed. */
    Authorizer NONE = new Authorizer() {
        @Override
        public boolean enabled() {
            return false;
        }

        @Override
        public boolean authorize(KafkaPrincipal principal, String host, AclOperation operation,
                AclResourceType resourceType, String resourceName) {
            return true;
        }

        @Override
        public boolean authorizeByResourceType(KafkaPrincipal principal, String host, AclOperation operation,
                AclResourceType resourceType) {
            return true;
        }

        @Override
        public List<AclEntry> acls() {
            return List.of();
        }
    };

    /** Every ACL the authorizer decides with (DescribeAcls reads them). */
    List<AclEntry> acls();

    /** False only for {@link #NONE}. */
    boolean enabled();

    /** Whether {@code principal} from {@code host} may perform {@code operation} on the literal resource named. */
    boolean authorize(KafkaPrincipal principal, String host, AclOperation operation, AclResourceType resourceType,
            String resourceName);

    /**
     * Whether {@code principal} from {@code host} may perform {@code operation} on at least one resource of
     * {@code resourceType} (Kafka's {@code Authorizer.authorizeByResourceType}, used for IdempotentWrite's
     * fallback to WRITE on any topic).
     */
    boolean authorizeByResourceType(KafkaPrincipal principal, String host, AclOperation operation,
            AclResourceType resourceType);
}
