package feed.standin;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.MongoVersion;
import de.bwaldvogel.mongo.backend.Cursor;
import de.bwaldvogel.mongo.backend.Utils;
import de.bwaldvogel.mongo.backend.aggregation.Aggregation;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.exception.MongoServerError;
import de.bwaldvogel.mongo.exception.MongoServerException;
import de.bwaldvogel.mongo.oplog.Oplog;
import de.bwaldvogel.mongo.oplog.OplogCursor;
import de.bwaldvogel.mongo.wire.message.MessageHeader;
import de.bwaldvogel.mongo.wire.message.MongoMessage;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;

/**
 * In-memory MongoDB wire-protocol stand-in (mongo-java-server) for development and tests.
 *
 * <p>Usage: {@code java -jar mongo-standin.jar [--port N] [--host H] [--ignore-stdin]}
 *
 * <ul>
 *   <li>{@code --port} TCP port, default 0 (ephemeral)</li>
 *   <li>{@code --host} bind address, default 127.0.0.1</li>
 *   <li>{@code --ignore-stdin} do not stop when stdin reaches EOF (for manual/background runs)</li>
 * </ul>
 *
 * <p>Prints exactly one line to stdout once listening: {@code MONGODB_URI=mongodb://127.0.0.1:<port>}.
 * Stops on SIGTERM/SIGINT and when stdin reaches EOF (so it never outlives its parent process).
 * All logging goes to stderr at WARN level or above.
 *
 * <p>Change-stream {@code getMore} honours {@code maxAwaitTimeMS} (default 1000 ms) without blocking a
 * Netty thread: see {@link AwaitingMemoryBackend}.
 */
public final class MongoStandIn {

    /** Reports MongoDB 6.0 (wire version 17); the Node driver 7.x rejects servers below wire version 9. */
    private static final MongoVersion MONGO_6_0 = new MongoVersion() {
        @Override
        public List<Integer> getVersionArray() {
            return List.of(6, 0, 0);
        }

        @Override
        public String toVersionString() {
            return "6.0.0";
        }

        @Override
        public int getWireVersion() {
            return 17;
        }
    };

    private MongoStandIn() {
    }

    public static void main(String[] args) {
        configureLogging();

        String host = "127.0.0.1";
        int port = 0;
        boolean watchStdin = true;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            switch (arg) {
                case "--port" -> port = parsePort(requireValue(args, ++i, arg));
                case "--host" -> host = requireValue(args, ++i, arg);
                case "--ignore-stdin" -> watchStdin = false;
                case "--help", "-h" -> {
                    System.err.println("usage: java -jar mongo-standin.jar [--port N] [--host H] [--ignore-stdin]");
                    System.exit(0);
                }
                default -> {
                    if (arg.startsWith("--port=")) {
                        port = parsePort(arg.substring("--port=".length()));
                    } else if (arg.startsWith("--host=")) {
                        host = arg.substring("--host=".length());
                    } else {
                        fail("unknown argument: " + arg);
                    }
                }
            }
        }

        MemoryBackend backend = new AwaitingMemoryBackend();
        backend.version(MONGO_6_0);
        MongoServer server = new MongoServer(backend);
        server.enableOplog(); // change streams need the oplog

        try {
            server.bind(host, port);
        } catch (Exception e) { // Netty rethrows checked exceptions such as BindException sneakily
            fail("failed to listen on " + host + ":" + port + ": " + e);
        }

        AtomicBoolean stopped = new AtomicBoolean(false);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> stop(server, stopped), "mongo-standin-shutdown"));

        InetSocketAddress address = server.getLocalAddress();
        String uriHost = isWildcard(host) ? "127.0.0.1" : hostForUri(address.getHostString());
        PrintStream out = System.out;
        out.println("MONGODB_URI=mongodb://" + uriHost + ":" + address.getPort());
        out.flush();

        if (watchStdin) {
            // Block until the parent closes our stdin (or dies), then exit; the shutdown hook stops the server.
            waitForEof(System.in);
            System.exit(0);
        }
        // Otherwise Netty's non-daemon event loop threads keep the JVM alive until a signal arrives.
    }

    private static void configureLogging() {
        // slf4j-simple: quiet by default, everything to stderr; -D overrides still win.
        setDefault("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        setDefault("org.slf4j.simpleLogger.logFile", "System.err");
        // "Closing N clients" on shutdown is expected, not a warning for us.
        setDefault("org.slf4j.simpleLogger.log.de.bwaldvogel.mongo.MongoServer", "error");
        // Warns on every createIndex of a non-unique index ("secondary index ... not yet implemented").
        setDefault("org.slf4j.simpleLogger.log.de.bwaldvogel.mongo.backend.AbstractMongoDatabase", "error");
        // Logs a stack trace for every command that fails (duplicate key in findAndModify, unsupported
        // stage, ...). The same error is always returned to the client, so the trace is just noise.
        setDefault("org.slf4j.simpleLogger.log.de.bwaldvogel.mongo.wire.MongoWireProtocolHandler", "off");
    }

    private static void setDefault(String key, String value) {
        if (System.getProperty(key) == null) {
            System.setProperty(key, value);
        }
    }

    private static void waitForEof(InputStream in) {
        byte[] buffer = new byte[256];
        try {
            while (in.read(buffer) != -1) {
                // input is ignored; only EOF matters
            }
        } catch (IOException e) {
            // a broken stdin means the parent is gone as well
        }
    }

    private static void stop(MongoServer server, AtomicBoolean stopped) {
        if (stopped.compareAndSet(false, true)) {
            try {
                server.shutdownNow();
            } catch (RuntimeException e) {
                System.err.println("mongo-standin: error during shutdown: " + e);
            }
        }
    }

    private static boolean isWildcard(String host) {
        return host.equals("0.0.0.0") || host.equals("::") || host.equals("[::]");
    }

    private static String hostForUri(String host) {
        return host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
    }

    private static String requireValue(String[] args, int index, String flag) {
        if (index >= args.length) {
            fail("missing value for " + flag);
        }
        return args[index];
    }

    private static int parsePort(String value) {
        try {
            int port = Integer.parseInt(value);
            if (port < 0 || port > 65535) {
                fail("port out of range: " + value);
            }
            return port;
        } catch (NumberFormatException e) {
            fail("invalid port: " + value);
            return -1; // unreachable
        }
    }

    private static void fail(String message) {
        System.err.println("mongo-standin: " + message);
        System.exit(2);
    }

    /**
     * Memory backend whose change-stream {@code getMore} waits for new events, like a real server.
     *
     * <p>mongo-java-server answers every {@code getMore} at once, so an idle change stream makes the driver
     * send thousands of {@code getMore}s per second. Here a {@code getMore} on an {@link OplogCursor} (the
     * library's change-stream cursor) that finds no events is parked instead: the library's handler, which
     * always writes whatever {@link #handleMessage} returns, gets a placeholder document that a per-channel
     * {@link ReplyDeferrer} (last in the pipeline, so the first outbound handler a write passes) swallows,
     * keeping its header. The real reply is written later, on the channel's own event loop, as soon as
     * <ul>
     *   <li>an oplog write for the cursor's namespace (signalled by {@link SignallingOplog}) yields events;</li>
     *   <li>the wait is over: the getMore's {@code maxTimeMS} (the Node driver sends the change-stream option
     *       {@code maxAwaitTimeMS} under that name), {@code maxAwaitTimeMS}, or else
     *       {@value #DEFAULT_MAX_AWAIT_MS} ms, as in mongod;</li>
     *   <li>or the cursor is killed (the re-run then fails with CursorNotFound).</li>
     * </ul>
     * No thread ever blocks or polls: the event loop goes on serving its other clients meanwhile.
     *
     * <p>All state of a {@link PendingGetMore} except its flags is touched only on its channel's event loop.
     * Netty runs {@code channelRead} (and so {@link #handleMessage}) on that event loop too, and the library's
     * handler writes the placeholder synchronously there, so every task queued for the pending reply runs
     * after the placeholder has passed the {@link ReplyDeferrer}.
     */
    static final class AwaitingMemoryBackend extends MemoryBackend {

        /** What mongod uses for an awaitData getMore without maxAwaitTimeMS (the Node driver sends none by default). */
        static final long DEFAULT_MAX_AWAIT_MS = 1000;

        /** Counts oplog writes; closes the race between "the query found nothing" and "the getMore is parked". */
        private final AtomicLong oplogWrites = new AtomicLong();
        private final Set<PendingGetMore> pending = ConcurrentHashMap.newKeySet();

        @Override
        protected Oplog createOplog() {
            return new SignallingOplog(super.createOplog(), this);
        }

        @Override
        public Document handleMessage(MongoMessage message) {
            Channel channel = message.getChannel();
            Document query = message.getDocument();
            String command = query.isEmpty() ? "" : query.keySet().iterator().next();
            if (!command.equalsIgnoreCase("getMore") || channel == null || !channel.eventLoop().inEventLoop()
                || !isChangeStreamCursor(query.get(command))) {
                return super.handleMessage(message);
            }
            long writesBefore = oplogWrites.get();
            Document response = super.handleMessage(message);
            long maxAwaitMs = maxAwaitTimeMs(query);
            if (!isEmptyBatch(response) || maxAwaitMs <= 0) {
                return response;
            }
            PendingGetMore getMore = new PendingGetMore(channel, message.getDatabaseName(), command, query);
            deferrerFor(channel).expect(getMore);
            pending.add(getMore);
            getMore.timeout = channel.eventLoop().schedule(getMore::expire, maxAwaitMs, TimeUnit.MILLISECONDS);
            if (oplogWrites.get() != writesBefore) {
                getMore.wake(); // an event may have been written after the query read the oplog
            }
            return getMore.placeholder;
        }

        @Override
        protected Document handleKillCursors(Document query) {
            Document response = super.handleKillCursors(query);
            wakeCursors(query.get("cursors"));
            return response;
        }

        @Override
        public void closeCursors(List<Long> cursorIds) {
            super.closeCursors(cursorIds);
            wakeCursors(cursorIds);
        }

        @Override
        public void handleClose(Channel channel) {
            super.handleClose(channel);
            for (PendingGetMore getMore : pending) {
                if (getMore.channel == channel) {
                    getMore.discard();
                }
            }
        }

        /** Called after every oplog write; {@code namespace} is "db.collection", or "db.$cmd" for a drop. */
        void oplogWritten(String namespace) {
            oplogWrites.incrementAndGet();
            if (pending.isEmpty()) {
                return;
            }
            boolean wholeDatabase = namespace.endsWith(".$cmd");
            String databasePrefix = namespace.substring(0, namespace.indexOf('.') + 1);
            for (PendingGetMore getMore : pending) {
                boolean affected = wholeDatabase
                    ? getMore.namespace.startsWith(databasePrefix)
                    : getMore.namespace.equals(namespace);
                if (affected) {
                    getMore.wake();
                }
            }
        }

        private void wakeCursors(Object cursorIds) {
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

        private boolean isChangeStreamCursor(Object cursorId) {
            if (!(cursorId instanceof Number number)) {
                return false;
            }
            try {
                Cursor cursor = getCursorRegistry().getCursor(number.longValue());
                return cursor instanceof OplogCursor;
            } catch (MongoServerException e) { // CursorNotFound: let the library report it
                return false;
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

        private static boolean isEmptyBatch(Document response) {
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

        /** A change-stream getMore that found nothing and waits for events or its deadline. */
        final class PendingGetMore {
            final Channel channel;
            final String databaseName;
            final String command;
            final Document query;
            final long cursorId;
            final String namespace;
            /** Returned to the library's handler instead of a reply; identity matters, not content. */
            final Document placeholder = new Document();
            private final AtomicBoolean wakeQueued = new AtomicBoolean();
            private volatile boolean done;
            ScheduledFuture<?> timeout;
            private MessageHeader header; // of the swallowed placeholder reply
            private Document earlyReply;

            PendingGetMore(Channel channel, String databaseName, String command, Document query) {
                this.channel = channel;
                this.databaseName = databaseName;
                this.command = command;
                this.query = query;
                this.cursorId = ((Number) query.get(command)).longValue();
                this.namespace = databaseName + "." + query.get("collection");
            }

            /** Any thread: re-run the getMore soon on the channel's event loop (coalesced). */
            void wake() {
                if (!done && wakeQueued.compareAndSet(false, true)) {
                    execute(() -> poll(false));
                }
            }

            void expire() {
                poll(true);
            }

            /** Event loop: the placeholder reply reached the ReplyDeferrer and was dropped there. */
            void placeholderSwallowed(MessageHeader header) {
                this.header = header;
                if (earlyReply != null) { // cannot happen (see the class comment), but never lose a reply
                    Document reply = earlyReply;
                    execute(() -> write(reply));
                }
            }

            /** Event loop. */
            private void poll(boolean deadlineReached) {
                wakeQueued.set(false);
                if (done) {
                    return;
                }
                long writesBefore = oplogWrites.get();
                Document response;
                try {
                    response = handleGetMore(databaseName, command, query);
                } catch (RuntimeException e) {
                    response = errorResponse(e);
                }
                if (deadlineReached || !isEmptyBatch(response)) {
                    complete(response);
                } else if (oplogWrites.get() != writesBefore) {
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

            /** Channel closed: drop the reply. */
            void discard() {
                finish();
            }

            private void finish() {
                done = true;
                pending.remove(this);
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
    }

    /**
     * Last handler of a client channel's pipeline, so the first one every outbound write passes: drops the
     * placeholder replies of parked getMores (remembering their headers) and forwards everything else.
     * Only used on its channel's event loop.
     */
    static final class ReplyDeferrer extends ChannelOutboundHandlerAdapter {
        static final String NAME = "mongo-standin-reply-deferrer";

        private final Map<Document, AwaitingMemoryBackend.PendingGetMore> expected = new IdentityHashMap<>();

        void expect(AwaitingMemoryBackend.PendingGetMore getMore) {
            expected.put(getMore.placeholder, getMore);
        }

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
            if (msg instanceof MongoMessage message) {
                AwaitingMemoryBackend.PendingGetMore getMore = expected.remove(message.getDocument());
                if (getMore != null) {
                    promise.trySuccess();
                    getMore.placeholderSwallowed(message.getHeader());
                    return;
                }
            }
            ctx.write(msg, promise);
        }
    }

    /** Delegates to the library's oplog and tells the backend about every write, after it is visible. */
    static final class SignallingOplog implements Oplog {
        private final Oplog delegate;
        private final AwaitingMemoryBackend backend;

        SignallingOplog(Oplog delegate, AwaitingMemoryBackend backend) {
            this.delegate = delegate;
            this.backend = backend;
        }

        @Override
        public void handleInsert(String namespace, List<Document> documents) {
            delegate.handleInsert(namespace, documents);
            backend.oplogWritten(namespace);
        }

        @Override
        public void handleUpdate(String namespace, Document selector, Document query, List<Object> modifiedIds) {
            delegate.handleUpdate(namespace, selector, query, modifiedIds);
            if (!modifiedIds.isEmpty()) { // nothing was written to the oplog otherwise
                backend.oplogWritten(namespace);
            }
        }

        @Override
        public void handleDelete(String namespace, Document query, List<Object> deletedIds) {
            delegate.handleDelete(namespace, query, deletedIds);
            if (!deletedIds.isEmpty()) {
                backend.oplogWritten(namespace);
            }
        }

        @Override
        public void handleDropCollection(String namespace) {
            delegate.handleDropCollection(namespace);
            backend.oplogWritten(Utils.getDatabaseNameFromFullName(namespace) + ".$cmd");
        }

        @Override
        public Cursor createCursor(Document changeStreamDocument, String namespace, Aggregation aggregation) {
            return delegate.createCursor(changeStreamDocument, namespace, aggregation);
        }
    }
}
