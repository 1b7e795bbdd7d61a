package io.cairn.broker.handler;

import io.cairn.broker.share.partition.ShareFetchService;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.ShareFetchRequestData;
import io.cairn.wire.message.ShareFetchResponseData;
import io.netty.buffer.ByteBuf;
import io.netty.util.ReferenceCountUtil;
import java.util.concurrent.CompletionStage;

/**
 * ShareFetch v1 (KIP-932; Kafka 4.1.1 serves v1 only): a share consumer acquires records of a share group's
 * partitions this broker leads, with share sessions and piggybacked acknowledgements. The work is
 * {@link ShareFetchService}'s; the records of the response are released through {@link #releaseResponse}.
 *
 * <p>Stateless and thread-safe.
 */
public final class ShareFetchHandler implements ApiHandler<ShareFetchRequestData, ShareFetchResponseData> {

    private final ShareFetchService service;

    public ShareFetchHandler(ShareFetchService service) {
        this.service = service;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.SHARE_FETCH;
    }

    @Override
    public short minVersion() {
        return 1;
    }

    @Override
    public short maxVersion() {
        return 1;
    }

    @Override
    public CompletionStage<ShareFetchResponseData> handle(RequestContext ctx, ShareFetchRequestData request) {
        ClientConnection connection = ctx.connection();
        return service.fetch(request, access(ctx), ctx.listenerName(), new ShareFetchService.Connection(
            connection.connectionId(), action -> connection.onClose("share-sessions", action)));
    }

    static ShareFetchService.Access access(RequestContext ctx) {
        return new ShareFetchService.Access(group -> ctx.authorize(AclOperation.READ, AclResourceType.GROUP, group),
            topic -> ctx.authorize(AclOperation.READ, AclResourceType.TOPIC, topic));
    }

    @Override
    public ShareFetchResponseData errorResponse(RequestContext ctx, ShareFetchRequestData request, Errors error) {
        return ShareFetchService.fetchError(error);
    }

    /** The top-level code, then one per partition and one per partition's acknowledgement. */
    @Override
    public void countErrors(ShareFetchResponseData response, ErrorCounter counter) {
        counter.count(response.errorCode());
        for (ShareFetchResponseData.ShareFetchableTopicResponse topic : response.responses()) {
            for (ShareFetchResponseData.PartitionData partition : topic.partitions()) {
                counter.count(partition.errorCode());
                counter.count(partition.acknowledgeErrorCode());
            }
        }
    }

    @Override
    public void releaseResponse(ShareFetchResponseData response) {
        for (ShareFetchResponseData.ShareFetchableTopicResponse topic : response.responses()) {
            for (ShareFetchResponseData.PartitionData partition : topic.partitions()) {
                ByteBuf records = partition.records();
                if (records != null) {
                    partition.setRecords(null);
                    ReferenceCountUtil.release(records);
                }
            }
        }
    }
}
