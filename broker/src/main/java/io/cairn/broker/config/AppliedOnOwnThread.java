package io.cairn.broker.config;

import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.MetadataListener;
import io.cairn.metadata.image.MetadataUpdate;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * A part of the broker that applies each committed change of this broker's or the cluster default's dynamic configs
 * on a thread of its own, because its {@link #apply} may wait (threads stopping, sockets binding) and the metadata
 * applier must not. Changes are applied in commit order. Thread-safe.
 */
abstract class AppliedOnOwnThread implements MetadataListener, AutoCloseable {

    private static final Logger LOGGER = LogManager.getLogger(AppliedOnOwnThread.class);

    private final String brokerId;
    private final ExecutorService thread;

    /**
     * @param threadName the applying thread's name
     * @param brokerId   this broker's id
     */
    AppliedOnOwnThread(String threadName, String brokerId) {
        this.brokerId = brokerId;
        this.thread = Executors.newSingleThreadExecutor(runnable -> {
            Thread t = new Thread(runnable, threadName);
            t.setDaemon(true);
            return t;
        });
    }

    /** Applies the configs {@code image} gives this broker (also called at start, for those kept in metadata). */
    public abstract void apply(MetadataImage image);

    @Override
    public final void onUpdate(MetadataUpdate update) {
        if (BrokerReconfigurable.changesConfigsOf(update, brokerId)) {
            MetadataImage image = update.image();
            try {
                thread.execute(() -> apply(image));
            } catch (RejectedExecutionException e) {
                LOGGER.debug("Not applying the broker configs of metadata offset {}: shutting down", image.offset());
            }
        }
    }

    /** Stops the thread that applies changes (a change in progress completes). */
    @Override
    public final void close() {
        thread.shutdownNow();
    }
}
