package io.cairn.metadata.controller;

import io.cairn.metadata.image.AclEntry;
import io.cairn.metadata.image.AclFilter;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclPatternType;
import io.cairn.metadata.image.AclPermissionType;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.record.AccessControlEntryRecord;
import io.cairn.metadata.record.RemoveAccessControlEntryRecord;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.CreateAclsRequestData;
import io.cairn.wire.message.CreateAclsResponseData;
import io.cairn.wire.message.DeleteAclsRequestData;
import io.cairn.wire.message.DeleteAclsResponseData;
import io.cairn.wire.protocol.ApiMessage;
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * CreateAcls and DeleteAcls as Kafka's controller decides them ({@code AclControlManager}, with the broker's checks
 * of {@code AclApis} first): a new ACL becomes an {@code AccessControlEntryRecord} with a fresh id unless the same
 * binding exists (then it succeeds without a record); a filter removes every ACL it matches with
 * {@code RemoveAccessControlEntryRecord}s. Stateless; thread-safe.
 */
final class AclCommands {

    private AclCommands() {
    }

    /** One binding without its id: what makes two ACLs the same. */
    private record Binding(byte resourceType, String resourceName, byte patternType, String principal, String host,
                           byte operation, byte permissionType) {

        static Binding of(AclEntry acl) {
            return new Binding(acl.resourceType(), acl.resourceName(), acl.patternType(), acl.principal(),
                    acl.host(), acl.operation(), acl.permissionType());
        }
    }

    static ControllerResult<CreateAclsResponseData> createAcls(MetadataImage image, CreateAclsRequestData request,
                                                               Supplier<Uuid> ids) {
        Set<Binding> existing = new HashSet<>();
        image.acls().values().forEach(acl -> existing.add(Binding.of(acl)));
        Set<Uuid> usedIds = new HashSet<>(image.acls().keySet());
        List<ApiMessage> records = new ArrayList<>();
        CreateAclsResponseData response = new CreateAclsResponseData();
        for (CreateAclsRequestData.AclCreation creation : request.creations()) {
            CreateAclsResponseData.AclCreationResult result = new CreateAclsResponseData.AclCreationResult();
            response.results().add(result);
            String invalid = invalidCreation(creation);
            if (invalid != null) {
                result.setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage(invalid);
                continue;
            }
            Binding binding = new Binding(creation.resourceType(), creation.resourceName(),
                    creation.resourcePatternType(), creation.principal(), creation.host(), creation.operation(),
                    creation.permissionType());
            if (existing.add(binding)) {
                Uuid id;
                do {
                    id = ids.get();
                } while (!usedIds.add(id));
                records.add(new AccessControlEntryRecord().setId(id).setResourceType(binding.resourceType())
                        .setResourceName(binding.resourceName()).setPatternType(binding.patternType())
                        .setPrincipal(binding.principal()).setHost(binding.host()).setOperation(binding.operation())
                        .setPermissionType(binding.permissionType()));
            }
        }
        return new ControllerResult<>(records, response);
    }

    /**
     * Kafka's reason to refuse one creation, or null: the broker's checks (the CLUSTER resource's only name, an empty
     * name), then the controller's {@code validateNewAcl}.
     */
    static String invalidCreation(CreateAclsRequestData.AclCreation creation) {
        AclResourceType type = AclResourceType.fromCode(creation.resourceType());
        if (type == AclResourceType.CLUSTER && !AclResourceType.CLUSTER_NAME.equals(creation.resourceName())) {
            return "The only valid name for the CLUSTER resource is " + AclResourceType.CLUSTER_NAME;
        }
        if (creation.resourceName() == null || creation.resourceName().isEmpty()) {
            return "Invalid empty resource name";
        }
        if (type == AclResourceType.UNKNOWN || type == AclResourceType.ANY) {
            return "Invalid resourceType " + type;
        }
        AclPatternType pattern = AclPatternType.fromCode(creation.resourcePatternType());
        if (pattern != AclPatternType.LITERAL && pattern != AclPatternType.PREFIXED) {
            return "Invalid patternType " + pattern;
        }
        AclOperation operation = AclOperation.fromCode(creation.operation());
        if (operation == AclOperation.UNKNOWN || operation == AclOperation.ANY) {
            return "Invalid operation " + operation;
        }
        AclPermissionType permission = AclPermissionType.fromCode(creation.permissionType());
        if (permission != AclPermissionType.ALLOW && permission != AclPermissionType.DENY) {
            return "Invalid permissionType " + permission;
        }
        return null;
    }

    static ControllerResult<DeleteAclsResponseData> deleteAcls(MetadataImage image, DeleteAclsRequestData request) {
        Map<Uuid, ApiMessage> removals = new LinkedHashMap<>();
        DeleteAclsResponseData response = new DeleteAclsResponseData();
        for (DeleteAclsRequestData.DeleteAclsFilter f : request.filters()) {
            DeleteAclsResponseData.DeleteAclsFilterResult result = new DeleteAclsResponseData.DeleteAclsFilterResult();
            response.filterResults().add(result);
            AclFilter filter = new AclFilter(f.resourceTypeFilter(), f.resourceNameFilter(), f.patternTypeFilter(),
                    f.principalFilter(), f.hostFilter(), f.operation(), f.permissionType());
            if (AclResourceType.fromCode(filter.resourceType()) == AclResourceType.UNKNOWN
                    || AclPatternType.fromCode(filter.patternType()) == AclPatternType.UNKNOWN) {
                result.setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage("Unknown patternFilter.");
                continue;
            }
            if (AclOperation.fromCode(filter.operation()) == AclOperation.UNKNOWN
                    || AclPermissionType.fromCode(filter.permissionType()) == AclPermissionType.UNKNOWN) {
                result.setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage("Unknown entryFilter.");
                continue;
            }
            for (Map.Entry<Uuid, AclEntry> entry : image.acls().entrySet()) {
                AclEntry acl = entry.getValue();
                if (filter.matches(acl)) {
                    result.matchingAcls().add(new DeleteAclsResponseData.DeleteAclsMatchingAcl()
                            .setResourceType(acl.resourceType()).setResourceName(acl.resourceName())
                            .setPatternType(acl.patternType()).setPrincipal(acl.principal()).setHost(acl.host())
                            .setOperation(acl.operation()).setPermissionType(acl.permissionType()));
                    removals.putIfAbsent(entry.getKey(), new RemoveAccessControlEntryRecord().setId(entry.getKey()));
                }
            }
        }
        return new ControllerResult<>(new ArrayList<>(removals.values()), response);
    }
}
