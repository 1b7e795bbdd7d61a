package io.cairn.broker.handler;

import io.cairn.broker.group.GroupCoordinator;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.ListGroupsRequestData;
import io.cairn.wire.message.ListGroupsResponseData;
import io.cairn.wire.message.ListGroupsResponseData.ListedGroup;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletionStage;

/**
 * ListGroups v0-v5: the groups of every coordinator shard this broker runs, classic and consumer (KIP-848, type and
 * protocol type "consumer") alike (each broker lists the groups it coordinates; the admin client asks every broker),
 * filtered by state (v4+, case-insensitive) and type (v5+). While a
 * shard still loads the answer is COORDINATOR_LOAD_IN_PROGRESS, as Kafka's. Immutable, thread-safe.
 */
public final class ListGroupsHandler implements ApiHandler<ListGroupsRequestData, ListGroupsResponseData> {

    private final GroupCoordinator coordinator;

    public ListGroupsHandler(GroupCoordinator coordinator) {
        this.coordinator = coordinator;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.LIST_GROUPS;
    }

    @Override
    public short minVersion() {
        return 0;
    }

    @Override
    public short maxVersion() {
        return 5;
    }

    @Override
    public CompletionStage<ListGroupsResponseData> handle(RequestContext ctx, ListGroupsRequestData request) {
        Set<String> states = new HashSet<>(request.statesFilter() == null ? List.of() : request.statesFilter());
        Set<String> types = new HashSet<>(request.typesFilter() == null ? List.of() : request.typesFilter());
        return coordinator.callAll(shard -> shard.listGroups(states, types)).handle((lists, failure) -> {
            if (failure != null) {
                return errorResponse(ctx, request, Errors.forException(failure));
            }
            ListGroupsResponseData response = new ListGroupsResponseData().setThrottleTimeMs(0)
                .setErrorCode(Errors.NONE.code());
            // Kafka: DESCRIBE on the cluster lists every group, else only those the caller may DESCRIBE.
            boolean all = ctx.authorizeCluster(AclOperation.DESCRIBE);
            for (List<ListedGroup> groups : lists) {
                for (ListedGroup group : groups) {
                    if (all || ctx.authorize(AclOperation.DESCRIBE, AclResourceType.GROUP, group.groupId())) {
                        response.groups().add(group);
                    }
                }
            }
            return response;
        });
    }

    @Override
    public ListGroupsResponseData errorResponse(RequestContext ctx, ListGroupsRequestData request, Errors error) {
        return new ListGroupsResponseData().setThrottleTimeMs(0).setErrorCode(error.code());
    }
}
