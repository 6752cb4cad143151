package feed.standin.changestream;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.exception.MongoServerError;
import de.bwaldvogel.mongo.exception.MongoServerException;
import de.bwaldvogel.mongo.wire.message.MongoMessage;
import feed.standin.oplog.DatabaseChangeStream;
import io.netty.channel.Channel;
import io.netty.channel.ChannelPipeline;

/**
 * Makes a change-stream {@code getMore} wait for new events, like a real server.
 *
 * <p>mongo-java-server answers every {@code getMore} at once, so an idle change stream makes the driver
 * send thousands of {@code getMore}s per second. Here a change-stream {@code getMore} that finds no events is
 * parked instead: the library's handler, which always writes whatever the backend returns, gets a placeholder
 * document that a per-channel {@link ReplyDeferrer} (last in the pipeline, so the first outbound handler a write
 * passes) swallows, keeping its header. The real reply is written later, on the channel's own event loop, as soon as
 * <ul>
 *   <li>an oplog write for the cursor's namespace (reported to {@link #oplogWritten}) yields events;</li>
 *   <li>the wait is over: the getMore's {@code maxTimeMS} (the Node driver sends the change-stream option
 *       {@code maxAwaitTimeMS} under that name), {@code maxAwaitTimeMS}, or else
 *       {@value #DEFAULT_MAX_AWAIT_MS} ms, as in mongod;</li>
 *   <li>or the cursor is killed (the re-run then fails with CursorNotFound).</li>
 * </ul>
 * No thread ever blocks or polls: the event loop goes on serving its other clients meanwhile.
 *
 * <p>All state of a {@link PendingGetMore} except its flags is touched only on its channel's event loop.
 * Netty runs {@code channelRead} (and so the backend's {@code handleMessage}) on that event loop too, and the
 * library's handler writes the placeholder synchronously there, so every task queued for the pending reply runs
 * after the placeholder has passed the {@link ReplyDeferrer}.
 */
public final class ChangeStreamGetMores {

    /** What mongod uses for an awaitData getMore without maxAwaitTimeMS (the Node driver sends none by default). */
    static final long DEFAULT_MAX_AWAIT_MS = 1000;

    /** Runs a getMore through the library again, as the backend's {@code handleGetMore} does. */
    @FunctionalInterface
    public interface GetMoreRunner {
        Document run(String databaseName, String command, Document query);
    }

    private final GetMoreRunner runner;
    /** Counts oplog writes; closes the race between "the query found nothing" and "the getMore is parked". */
    private final AtomicLong oplogWrites = new AtomicLong();
    private final Set<PendingGetMore> pending = ConcurrentHashMap.newKeySet();

    public ChangeStreamGetMores(GetMoreRunner runner) {
        this.runner = runner;
    }

    /**
     * Runs a change-stream getMore ({@code run}, on the channel's event loop) and answers at once if it found
     * events; otherwise returns a placeholder and replies later.
     */
    public Document handle(MongoMessage message, String command, Supplier<Document> run) {
        Channel channel = message.getChannel();
        Document query = message.getDocument();
        long writesBefore = oplogWrites.get();
        Document response = run.get();
        long maxAwaitMs = maxAwaitTimeMs(query);
        if (!isEmptyBatch(response) || maxAwaitMs <= 0) {
            return response;
        }
        PendingGetMore getMore = new PendingGetMore(this, channel, message.getDatabaseName(), command, query);
        deferrerFor(channel).expect(getMore);
        pending.add(getMore);
        getMore.expireAfter(maxAwaitMs);
        if (oplogWrites.get() != writesBefore) {
            getMore.wake(); // an event may have been written after the query read the oplog
        }
        return getMore.placeholder;
    }

    /** Called after every oplog write; {@code namespace} is "db.collection", or "db.$cmd" for a drop. */
    public void oplogWritten(String namespace) {
        oplogWrites.incrementAndGet();
        if (pending.isEmpty()) {
            return;
        }
        boolean wholeDatabase = namespace.endsWith(".$cmd");
        String databasePrefix = namespace.substring(0, namespace.indexOf('.') + 1);
        for (PendingGetMore getMore : pending) {
            // A database-wide stream (its namespace "db.1") is woken by every write of its database.
            boolean affected = wholeDatabase || DatabaseChangeStream.isDatabaseWide(getMore.namespace)
                ? getMore.namespace.startsWith(databasePrefix)
                : getMore.namespace.equals(namespace);
            if (affected) {
                getMore.wake();
            }
        }
    }

    /** Killed or closed cursors: their parked getMores re-run now, and fail as the library answers then. */
    public void cursorsClosed(Object cursorIds) {
        if (cursorIds instanceof List<?> ids) {
            for (Object id : ids) {
                for (PendingGetMore getMore : pending) {
                    if (id instanceof Number number && number.longValue() == getMore.cursorId) {
                        getMore.wake();
                    }
                }
            }
        }
    }

    /** Nobody is left to read these replies. */
    public void channelClosed(Channel channel) {
        for (PendingGetMore getMore : pending) {
            if (getMore.channel == channel) {
                getMore.discard();
            }
        }
    }

    long oplogWrites() {
        return oplogWrites.get();
    }

    void forget(PendingGetMore getMore) {
        pending.remove(getMore);
    }

    /** The re-run's answer; a failure becomes the error document the library would have sent. */
    Document rerun(PendingGetMore getMore) {
        try {
            return runner.run(getMore.databaseName, getMore.command, getMore.query);
        } catch (RuntimeException e) {
            return errorResponse(e);
        }
    }

    /**
     * On a getMore of an awaitData cursor, {@code maxTimeMS} is the await time: the Node driver sends a
     * change stream's {@code maxAwaitTimeMS} option under that name, and nothing when it is not set.
     */
    private static long maxAwaitTimeMs(Document query) {
        for (String field : new String[] {"maxTimeMS", "maxAwaitTimeMS"}) {
            if (query.get(field) instanceof Number number) {
                return number.longValue();
            }
        }
        return DEFAULT_MAX_AWAIT_MS;
    }

    static boolean isEmptyBatch(Document response) {
        return response.get("cursor") instanceof Document cursor
            && cursor.get("nextBatch") instanceof List<?> batch
            && batch.isEmpty();
    }

    private static ReplyDeferrer deferrerFor(Channel channel) {
        ChannelPipeline pipeline = channel.pipeline();
        ReplyDeferrer deferrer = (ReplyDeferrer) pipeline.get(ReplyDeferrer.NAME);
        if (deferrer == null) {
            deferrer = new ReplyDeferrer();
            pipeline.addLast(ReplyDeferrer.NAME, deferrer);
        }
        return deferrer;
    }

    /** The same error document the library's MongoDatabaseHandler sends for a failed command. */
    private static Document errorResponse(RuntimeException exception) {
        MongoServerException e = exception instanceof MongoServerException serverException
            ? serverException
            : new MongoServerException("Unknown error: " + exception.getMessage(), exception);
        Document response = new Document();
        response.put("$err", e.getMessageWithoutErrorCode());
        response.put("errmsg", e.getMessageWithoutErrorCode());
        if (e instanceof MongoServerError error) {
            response.put("code", error.getCode());
            response.putIfNotNull("codeName", error.getCodeName());
        }
        response.put("ok", Integer.valueOf(0));
        return response;
    }
}
