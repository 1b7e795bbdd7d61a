package io.cairn.broker.handler;

import io.cairn.broker.share.partition.ShareFetchService;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.ShareAcknowledgeRequestData;
import io.cairn.wire.message.ShareAcknowledgeResponseData;
import java.util.concurrent.CompletionStage;

/**
 * ShareAcknowledge v1 (KIP-932; Kafka 4.1.1 serves v1 only): a share consumer accepts, releases or rejects records
 * it acquired, within its share session. The work is {@link ShareFetchService}'s.
 *
 * <p>Stateless and thread-safe.
 */
public final class ShareAcknowledgeHandler
        implements ApiHandler<ShareAcknowledgeRequestData, ShareAcknowledgeResponseData> {

    private final ShareFetchService service;

    public ShareAcknowledgeHandler(ShareFetchService service) {
        this.service = service;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.SHARE_ACKNOWLEDGE;
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
    public CompletionStage<ShareAcknowledgeResponseData> handle(RequestContext ctx,
                                                              ShareAcknowledgeRequestData request) {
        return service.acknowledge(request, ShareFetchHandler.access(ctx), ctx.listenerName());
    }

    @Override
    public ShareAcknowledgeResponseData errorResponse(RequestContext ctx, ShareAcknowledgeRequestData request,
                                                     Errors error) {
        return ShareFetchService.acknowledgeError(error);
    }

    /** The top-level code, then one per partition. */
    @Override
    public void countErrors(ShareAcknowledgeResponseData response, ErrorCounter counter) {
        counter.count(response.errorCode());
        for (ShareAcknowledgeResponseData.ShareAcknowledgeTopicResponse topic : response.responses()) {
            for (ShareAcknowledgeResponseData.PartitionData partition : topic.partitions()) {
                counter.count(partition.errorCode());
            }
        }
    }
}
