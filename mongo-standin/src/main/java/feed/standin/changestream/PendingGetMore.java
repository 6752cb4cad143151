package feed.standin.changestream;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.wire.message.MessageHeader;
import de.bwaldvogel.mongo.wire.message.MongoMessage;
import io.netty.channel.Channel;

/** A change-stream getMore that found nothing and waits for events or its deadline (see {@link ChangeStreamGetMores}). */
final class PendingGetMore {
    final Channel channel;
    final String databaseName;
    final String command;
    final Document query;
    final long cursorId;
    final String namespace;
    /** Returned to the library's handler instead of a reply; identity matters, not content. */
    final Document placeholder = new Document();
    private final ChangeStreamGetMores owner;
    private final AtomicBoolean wakeQueued = new AtomicBoolean();
    private volatile boolean done;
    private ScheduledFuture<?> timeout;
    private MessageHeader header; // of the swallowed placeholder reply
    private Document earlyReply;

    PendingGetMore(ChangeStreamGetMores owner, Channel channel, String databaseName, String command, Document query) {
        this.owner = owner;
        this.channel = channel;
        this.databaseName = databaseName;
        this.command = command;
        this.query = query;
        this.cursorId = ((Number) query.get(command)).longValue();
        this.namespace = databaseName + "." + query.get("collection");
    }

    /** Event loop. */
    void expireAfter(long milliseconds) {
        timeout = channel.eventLoop().schedule(() -> poll(true), milliseconds, TimeUnit.MILLISECONDS);
    }

    /** Any thread: re-run the getMore soon on the channel's event loop (coalesced). */
    void wake() {
        if (!done && wakeQueued.compareAndSet(false, true)) {
            execute(() -> poll(false));
        }
    }

    /** Event loop: the placeholder reply reached the ReplyDeferrer and was dropped there. */
    void placeholderSwallowed(MessageHeader header) {
        this.header = header;
        if (earlyReply != null) { // cannot happen (see ChangeStreamGetMores), but never lose a reply
            Document reply = earlyReply;
            execute(() -> write(reply));
        }
    }

    /** Channel closed: drop the reply. */
    void discard() {
        finish();
    }

    /** Event loop. */
    private void poll(boolean deadlineReached) {
        wakeQueued.set(false);
        if (done) {
            return;
        }
        long writesBefore = owner.oplogWrites();
        Document response = owner.rerun(this);
        if (deadlineReached || !ChangeStreamGetMores.isEmptyBatch(response)) {
            complete(response);
        } else if (owner.oplogWrites() != writesBefore) {
            wake();
        }
    }

    private void complete(Document response) {
        finish();
        if (header != null) {
            write(response);
        } else {
            earlyReply = response;
        }
    }

    private void finish() {
        done = true;
        owner.forget(this);
        if (timeout != null) {
            timeout.cancel(false);
        }
    }

    private void write(Document response) {
        channel.writeAndFlush(new MongoMessage(channel, header, response));
    }

    private void execute(Runnable task) {
        try {
            channel.eventLoop().execute(task);
        } catch (RejectedExecutionException e) {
            // event loop shutting down: the server is stopping, nobody waits for this reply
        }
    }
}
