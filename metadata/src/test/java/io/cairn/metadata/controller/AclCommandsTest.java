package io.cairn.metadata.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.metadata.image.AclEntry;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclPatternType;
import io.cairn.metadata.image.AclPermissionType;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.record.AccessControlEntryRecord;
import io.cairn.metadata.record.RemoveAccessControlEntryRecord;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.CreateAclsRequestData;
import io.cairn.wire.message.CreateAclsRequestData.AclCreation;
import io.cairn.wire.message.CreateAclsResponseData;
import io.cairn.wire.message.DeleteAclsRequestData;
import io.cairn.wire.message.DeleteAclsRequestData.DeleteAclsFilter;
import io.cairn.wire.message.DeleteAclsResponseData;
import io.cairn.wire.protocol.ApiMessage;
import java.util.List;
import org.junit.jupiter.api.Test;

/** CreateAcls and DeleteAcls as Kafka's AclControlManager decides them, through ControllerLogic and the image. */
class AclCommandsTest {

    private final ControllerLogic logic = new ControllerLogic(ControllerSettings.defaults(1));
    private MetadataImage image = MetadataImage.EMPTY;
    private List<ApiMessage> lastRecords = List.of();

    private static AclCreation creation(AclResourceType type, String name, AclPatternType pattern, String principal) {
        return new AclCreation().setResourceType(type.code()).setResourceName(name)
                .setResourcePatternType(pattern.code()).setPrincipal(principal).setHost("*")
                .setOperation(AclOperation.READ.code()).setPermissionType(AclPermissionType.ALLOW.code());
    }

    private CreateAclsResponseData create(AclCreation... creations) {
        ControllerResult<? extends ApiMessage> result = logic.handle(image,
                new CreateAclsRequestData().setCreations(List.of(creations)), b -> true);
        lastRecords = result.records();
        image = ControllerLogic.apply(image, result.records());
        return (CreateAclsResponseData) result.response();
    }

    @Test
    void aNewBindingIsRecordedOnceAndInvalidOnesAreRefusedWithKafkasMessages() {
        // Given
        AclCreation aliceReads = creation(AclResourceType.TOPIC, "orders", AclPatternType.LITERAL, "User:alice");

        // When
        CreateAclsResponseData first = create(aliceReads,
                creation(AclResourceType.CLUSTER, "prod", AclPatternType.LITERAL, "User:alice"),
                creation(AclResourceType.TOPIC, "", AclPatternType.LITERAL, "User:alice"));
        List<ApiMessage> firstRecords = lastRecords;
        CreateAclsResponseData again = create(aliceReads);

        // Then
        assertThat(first.results()).extracting(r -> Errors.forCode(r.errorCode()) + ":" + r.errorMessage())
                .containsExactly("NONE:",
                        "INVALID_REQUEST:The only valid name for the CLUSTER resource is kafka-cluster",
                        "INVALID_REQUEST:Invalid empty resource name");
        assertThat(firstRecords).singleElement().isInstanceOf(AccessControlEntryRecord.class);
        assertThat(again.results()).singleElement().satisfies(r -> assertThat(r.errorCode()).isZero());
        assertThat(lastRecords).isEmpty();
        assertThat(image.acls().values()).singleElement().satisfies(acl -> {
            assertThat(acl.principal()).isEqualTo("User:alice");
            assertThat(acl.resourceName()).isEqualTo("orders");
        });
    }

    @Test
    void aFilterRemovesEveryAclItMatchesAndListsThemPerFilter() {
        // Given
        create(creation(AclResourceType.TOPIC, "orders", AclPatternType.LITERAL, "User:alice"),
                creation(AclResourceType.TOPIC, "ord", AclPatternType.PREFIXED, "User:bob"),
                creation(AclResourceType.GROUP, "g", AclPatternType.LITERAL, "User:alice"));
        DeleteAclsFilter matchOrders = new DeleteAclsFilter().setResourceTypeFilter(AclResourceType.TOPIC.code())
                .setResourceNameFilter("orders").setPatternTypeFilter(AclPatternType.MATCH.code())
                .setPrincipalFilter(null).setHostFilter(null).setOperation(AclOperation.ANY.code())
                .setPermissionType(AclPermissionType.ANY.code());
        DeleteAclsFilter bobs = new DeleteAclsFilter().setResourceTypeFilter(AclResourceType.ANY.code())
                .setResourceNameFilter(null).setPatternTypeFilter(AclPatternType.ANY.code())
                .setPrincipalFilter("User:bob").setHostFilter(null).setOperation(AclOperation.ANY.code())
                .setPermissionType(AclPermissionType.ANY.code());

        // When
        ControllerResult<? extends ApiMessage> result = logic.handle(image,
                new DeleteAclsRequestData().setFilters(List.of(matchOrders, bobs)), b -> true);
        image = ControllerLogic.apply(image, result.records());

        // Then
        DeleteAclsResponseData response = (DeleteAclsResponseData) result.response();
        assertThat(response.filterResults().get(0).matchingAcls()).extracting(a -> a.resourceName())
                .containsExactlyInAnyOrder("orders", "ord");
        assertThat(response.filterResults().get(1).matchingAcls()).extracting(a -> a.principal())
                .containsExactly("User:bob");
        assertThat(result.records()).hasSize(2).allMatch(r -> r instanceof RemoveAccessControlEntryRecord);
        assertThat(image.acls().values()).extracting(AclEntry::resourceName).containsExactly("g");
    }
}
