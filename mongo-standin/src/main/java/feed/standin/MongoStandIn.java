package feed.standin;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.MongoVersion;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.Cursor;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.Missing;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.Utils;
import de.bwaldvogel.mongo.backend.aggregation.Aggregation;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import de.bwaldvogel.mongo.backend.memory.MemoryCollection;
import de.bwaldvogel.mongo.backend.memory.MemoryDatabase;
import de.bwaldvogel.mongo.backend.memory.index.MemoryUniqueIndex;
import de.bwaldvogel.mongo.bson.BsonRegularExpression;
import de.bwaldvogel.mongo.bson.BsonTimestamp;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.bson.ObjectId;
import de.bwaldvogel.mongo.exception.MongoServerError;
import de.bwaldvogel.mongo.exception.MongoServerException;
import de.bwaldvogel.mongo.oplog.Oplog;
import de.bwaldvogel.mongo.oplog.OplogCursor;
import de.bwaldvogel.mongo.oplog.OplogPosition;
import de.bwaldvogel.mongo.wire.message.MessageHeader;
import de.bwaldvogel.mongo.wire.message.MongoMessage;
import de.bwaldvogel.mongo.wire.bson.BsonEncoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
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

    /** Set when {@code --data-dir} is given: every change is also appended there (see {@link Journal}). */
    private static volatile Journal journal;

    private MongoStandIn() {
    }

    public static void main(String[] args) {
        configureLogging();

        String host = "127.0.0.1";
        int port = 0;
        boolean watchStdin = true;
        String dataDir = null;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            switch (arg) {
                case "--port" -> port = parsePort(requireValue(args, ++i, arg));
                case "--data-dir" -> dataDir = requireValue(args, ++i, arg);
                case "--host" -> host = requireValue(args, ++i, arg);
                case "--ignore-stdin" -> watchStdin = false;
                case "--help", "-h" -> {
                    System.err.println("usage: java -jar mongo-standin.jar [--port N] [--host H] [--data-dir DIR] [--ignore-stdin]");
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

        AwaitingMemoryBackend backend = new AwaitingMemoryBackend();
        backend.version(MONGO_6_0);
        MongoServer server = new MongoServer(backend);
        server.enableOplog(); // change streams need the oplog
        if (dataDir != null) {
            try {
                Journal opened = Journal.open(java.nio.file.Path.of(dataDir));
                int entries = opened.restoreInto(backend);
                journal = opened;
                System.err.println("mongo-standin: restored " + entries + " journal entries from " + dataDir);
            } catch (IOException e) {
                fail("cannot use the data directory: " + e.getMessage());
            }
        }

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
            Journal open = journal;
            if (open != null) {
                open.close();
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
        public MemoryDatabase openOrCreateDatabase(String databaseName) {
            return new IndexedMemoryDatabase(databaseName, getCursorRegistry());
        }

        Set<String> databaseNames() {
            return listDatabaseNames();
        }

        @Override
        public Document handleCommand(Channel channel, String databaseName, String command, Document query) {
            LeadingMatch match = LeadingMatch.of(databaseName, command, query);
            Document response;
            if (match == null) {
                response = super.handleCommand(channel, databaseName, command, query);
            } else {
                IndexedMemoryCollection.leadingMatch.set(match);
                try {
                    response = super.handleCommand(channel, databaseName, command, query);
                } finally {
                    IndexedMemoryCollection.leadingMatch.remove();
                }
            }
            Journal open = journal;
            if (open != null && response != null && Double.valueOf(1.0).equals(toDouble(response.get("ok")))) {
                open.commandSucceeded(databaseName, command, query);
            }
            return response;
        }

        private static Double toDouble(Object value) {
            return value instanceof Number number ? number.doubleValue() : null;
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

        /** A change-stream getMore reads the oplog from its cursor's position on (see {@link OplogCollection}). */
        @Override
        protected Document handleGetMore(String databaseName, String command, Document query) {
            Long from = changeStreamPosition(query.get(command));
            if (from == null) {
                return super.handleGetMore(databaseName, command, query);
            }
            OplogCollection.readFrom.set(new OplogCollection.Read(from, databaseName + "." + query.get("collection")));
            try {
                return super.handleGetMore(databaseName, command, query);
            } finally {
                OplogCollection.readFrom.remove();
            }
        }

        /** The oplog timestamp a change-stream cursor has read up to, or null for any other cursor. */
        private Long changeStreamPosition(Object cursorId) {
            if (!(cursorId instanceof Number number)) {
                return null;
            }
            try {
                Cursor cursor = getCursorRegistry().getCursor(number.longValue());
                if (!(cursor instanceof OplogCursor)) {
                    return null;
                }
                OplogPosition position = (OplogPosition) CURSOR_POSITION.get(cursor);
                return ((BsonTimestamp) POSITION_TIMESTAMP.get(position)).getValue();
            } catch (MongoServerException e) { // CursorNotFound: let the library report it
                return null;
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            }
        }

        // The library keeps both private; read only, and checked at class load (a new library version fails at start).
        private static final Field CURSOR_POSITION = accessibleField(OplogCursor.class, "position");
        private static final Field POSITION_TIMESTAMP = accessibleField(OplogPosition.class, "timestamp");

        private static Field accessibleField(Class<?> type, String name) {
            try {
                Field field = type.getDeclaredField(name);
                field.setAccessible(true);
                return field;
            } catch (NoSuchFieldException e) {
                throw new IllegalStateException("mongo-java-server changed: " + type.getName() + "." + name + " is gone", e);
            }
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

    /**
     * Delegates to the library's oplog and tells the backend about every write, after it is visible.
     *
     * <p>Also keeps the oplog to its newest {@value #KEPT_ENTRIES} entries, as MongoDB caps its own: the library
     * keeps every entry forever and scans them all for every change-stream {@code getMore}, so an idle change
     * stream grew more expensive with every write the server had ever taken. A stream resuming from a trimmed
     * position gets what MongoDB answers then (its history is lost), which clients must handle anyway.
     */
    static final class SignallingOplog implements Oplog {
        static final int KEPT_ENTRIES = 10_000;
        /** Trimming scans the oplog once: done every this many writes, so its cost per write stays small. */
        static final int TRIM_EVERY = 1_000;

        private final Oplog delegate;
        private final AwaitingMemoryBackend backend;
        private final AtomicLong writesSinceTrim = new AtomicLong();

        SignallingOplog(Oplog delegate, AwaitingMemoryBackend backend) {
            this.delegate = delegate;
            this.backend = backend;
        }

        @Override
        public void handleInsert(String namespace, List<Document> documents) {
            delegate.handleInsert(namespace, documents);
            backend.oplogWritten(namespace);
            trimNow(documents.size());
        }

        private void trimNow(int written) {
            if (writesSinceTrim.addAndGet(written) < TRIM_EVERY) {
                return;
            }
            writesSinceTrim.set(0);
            if (backend.resolveDatabase("local").resolveCollection("oplog.rs", false) instanceof OplogCollection oplog) {
                oplog.keepNewest(KEPT_ENTRIES);
            }
        }

        @Override
        public void handleUpdate(String namespace, Document selector, Document query, List<Object> modifiedIds) {
            delegate.handleUpdate(namespace, selector, query, modifiedIds);
            if (!modifiedIds.isEmpty()) { // nothing was written to the oplog otherwise
                backend.oplogWritten(namespace);
                trimNow(modifiedIds.size());
            }
        }

        @Override
        public void handleDelete(String namespace, Document query, List<Object> deletedIds) {
            delegate.handleDelete(namespace, query, deletedIds);
            if (!deletedIds.isEmpty()) {
                backend.oplogWritten(namespace);
                trimNow(deletedIds.size());
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

    /**
     * The oplog's collection, also indexed by timestamp. The library answers every change-stream getMore by
     * streaming the whole oplog (through the query machinery, one copy per entry), filtering it by namespace
     * and position and sorting it; under write load with a few streams open that cost the stand-in most of
     * a core. While {@link AwaitingMemoryBackend#handleGetMore} runs a change-stream getMore it sets
     * {@link #readFrom} to the cursor's position and namespace, and the stream holds only the entries from
     * there on for that collection or its database's commands: a superset of what the library's filters
     * keep, so its answer is unchanged. Every other reader (a stream's opening aggregate, trimming) still
     * gets every entry.
     */
    static final class OplogCollection extends MemoryCollection {
        /** A change-stream getMore's oplog read: entries from timestamp {@code from} on, of {@code namespace}. */
        record Read(long from, String namespace) {
            boolean concerns(Document entry) {
                String entryNamespace = (String) entry.get("ns");
                return namespace.equals(entryNamespace)
                    || (entryNamespace != null && entryNamespace.endsWith(".$cmd")
                        && entryNamespace.regionMatches(0, namespace, 0, entryNamespace.length() - "$cmd".length()));
            }
        }

        static final ThreadLocal<Read> readFrom = new ThreadLocal<>();
        private final ConcurrentSkipListMap<Long, Document> byTimestamp = new ConcurrentSkipListMap<>();

        OplogCollection(MongoDatabase database, String collectionName, CollectionOptions options, CursorRegistry cursorRegistry) {
            super(database, collectionName, options, cursorRegistry);
        }

        @Override
        protected synchronized Integer addDocumentInternal(Document document) {
            Integer position = super.addDocumentInternal(document);
            byTimestamp.put(timestampOf(document), document);
            return position;
        }

        @Override
        protected synchronized void removeDocument(Integer position) {
            Document document = getDocument(position);
            super.removeDocument(position);
            if (document != null) {
                byTimestamp.remove(timestampOf(document));
            }
        }

        @Override
        public Stream<Document> queryAllAsStream() {
            Read read = readFrom.get();
            if (read == null) {
                return super.queryAllAsStream();
            }
            // Copies, as the library's query path hands out; only of the entries the stream can use.
            return byTimestamp.tailMap(read.from(), true).values().stream().filter(read::concerns).map(Document::cloneDeeply);
        }

        /**
         * Drops all but the newest {@code kept} entries, oldest first, each through the library's removal (its
         * {@code _id} index finds the position). By timestamp, not by position: the library reuses freed positions,
         * so after a trim the stored order is no longer write order. No query runs: a {@code ts < x} delete
         * matched every entry against the filter and looked each one up again by equality.
         */
        synchronized void keepNewest(int kept) {
            while (byTimestamp.size() > kept) {
                removeDocument(byTimestamp.firstEntry().getValue());
            }
        }

        private static long timestampOf(Document entry) {
            return ((BsonTimestamp) entry.get("ts")).getValue();
        }
    }

    /**
     * The {@code $match} an {@code aggregate} command starts with, and the collection it reads. The library
     * runs every pipeline over the whole collection ({@code queryAllAsStream}), so a {@code countDocuments}
     * (an aggregate of {@code $match}, {@code $limit}, {@code $group}) by {@code _id} examined every document;
     * the fanout path counts one post by id per sub-task. {@link IndexedMemoryCollection#queryAllAsStream}
     * answers the pipeline's source with the documents the filter matches, found through the indexes like a
     * find; the {@code $match} stage then keeps them all, so the result is the library's. Filters with
     * {@code $expr} or variables are left to the library, whose query path does not know a pipeline's variables.
     */
    record LeadingMatch(String namespace, Document filter) {
        static LeadingMatch of(String databaseName, String command, Document query) {
            if (!command.equalsIgnoreCase("aggregate") || !(query.get(command) instanceof String collection)
                || !(query.get("pipeline") instanceof List<?> pipeline) || pipeline.isEmpty()
                || !(pipeline.get(0) instanceof Document first) || first.size() != 1
                || !(first.get("$match") instanceof Document filter) || filter.toString().contains("$expr")
                || filter.toString().contains("$$")) {
                return null;
            }
            return new LeadingMatch(databaseName + "." + collection, filter);
        }
    }

    /** Memory database whose collections use their indexes to narrow the documents a query examines. */
    static final class IndexedMemoryDatabase extends MemoryDatabase {
        IndexedMemoryDatabase(String databaseName, CursorRegistry cursorRegistry) {
            super(databaseName, cursorRegistry);
        }

        @Override
        protected MemoryCollection openOrCreateCollection(String collectionName, CollectionOptions options) {
            if (getDatabaseName().equals("local") && collectionName.equals("oplog.rs")) {
                return new OplogCollection(this, collectionName, options, cursorRegistry);
            }
            return new IndexedMemoryCollection(this, collectionName, options, cursorRegistry);
        }

        @Override
        protected Index<Integer> openOrCreateUniqueIndex(String collectionName, String indexName, List<IndexKey> keys, boolean sparse) {
            return new MultikeySafeUniqueIndex(indexName, keys, sparse);
        }
    }

    /**
     * The library's unique index, fixed for documents that have no key in it. A multikey index over an empty array
     * (say {@code {_u: 1, "_c._id": 1}} on a document with {@code _c: []}) yields no key for that document; the
     * library's update check then looks up "the" position of the old document's keys and fails with "Expected one
     * element but got zero", which reached clients as an error without a code, where MongoDB updates the document
     * (or answers E11000 if the new keys belong to another document). Such an update is checked like an insert.
     */
    static final class MultikeySafeUniqueIndex extends MemoryUniqueIndex {
        MultikeySafeUniqueIndex(String name, List<IndexKey> keys, boolean sparse) {
            super(name, keys, sparse);
        }

        boolean holdsNoKeyFor(Document document) {
            return getKeyValues(document).isEmpty();
        }

        @Override
        public synchronized void checkUpdate(Document oldDocument, Document newDocument, MongoCollection<Integer> collection) {
            if (getKeyValues(oldDocument).isEmpty()) {
                checkAdd(newDocument, collection);
            } else {
                super.checkUpdate(oldDocument, newDocument, collection);
            }
        }
    }

    /**
     * A {@link MemoryCollection} whose queries (find, count, update, delete, findAndModify, upsert matching, distinct)
     * examine only the candidate documents an index yields, when the library itself would scan everything.
     *
     * <p>The library uses an index only when a query's fields are exactly a unique index's fields; it keeps non-unique
     * indexes as no-op {@code EmptyIndex}es. Here, when no library index takes the query, a top-level predicate
     * {@code field: value}, {@code field: {$eq: value}} or {@code field: {$in: [...]}} picks candidates:
     * <ul>
     *   <li>on {@code _id}, from the library's unique {@code _id} index;</li>
     *   <li>on the leading field of any other index (unique or not, dotted and array paths too), from a
     *       {@link FieldIndex}: value → positions, kept up to date on insert, update, delete, index creation and
     *       drop.</li>
     * </ul>
     * The candidates are then filtered with the library's own matcher and the full query, in natural (position) order,
     * exactly as a full scan would see them, and sorted, skipped, limited and projected by the library. So results,
     * their order, counts and upserts are the same as with a full scan; only documents that cannot match are skipped.
     * Anything not covered (other operators, regular expressions, unusual value types, queries the validator does not
     * know) takes the library's path unchanged.
     *
     * <p>All methods that touch the field indexes hold this collection's monitor, like the library's own methods
     * ({@link de.bwaldvogel.mongo.backend.AbstractSynchronizedMongoCollection}).
     */
    static final class IndexedMemoryCollection extends MemoryCollection {
        private static final String ID = "_id";
        private static final Document EMPTY_QUERY = new Document();

        /** Leading path of an index → its value map. Never "_id" (the library's _id index serves that). */
        private final Map<String, FieldIndex> fieldIndexes = new HashMap<>();
        /** One more than the highest position ever handed out. */
        private int positionLimit;

        IndexedMemoryCollection(MongoDatabase database, String collectionName, CollectionOptions options,
                                CursorRegistry cursorRegistry) {
            super(database, collectionName, options, cursorRegistry);
        }

        /** Set while an aggregate that starts with {@code $match} runs (see {@link LeadingMatch}). */
        static final ThreadLocal<LeadingMatch> leadingMatch = new ThreadLocal<>();

        @Override
        public Stream<Document> queryAllAsStream() {
            LeadingMatch match = leadingMatch.get();
            if (match == null || !match.namespace().equals(getFullName())) {
                return super.queryAllAsStream();
            }
            // Only the pipeline's source: a later stage ($lookup, $unionWith) reading this collection sees all of it.
            leadingMatch.remove();
            return handleQueryAsStream(match.filter());
        }

        // ---- index maintenance ----

        @Override
        protected synchronized Integer addDocumentInternal(Document document) {
            Integer position = super.addDocumentInternal(document);
            Journal open = journal;
            if (open != null) {
                open.inserted(this, document);
            }
            positionLimit = Math.max(positionLimit, position + 1);
            for (FieldIndex index : fieldIndexes.values()) {
                index.add(position, document);
            }
            return position;
        }

        /**
         * The library removes a document from each index in turn and gives up half-way, leaving the indexes that came
         * first without the document (and every later delete of it failing), when a non-sparse index yields no
         * position for it. A unique multikey index over an empty array yields none for a document that is stored all
         * the same (see {@link MultikeySafeUniqueIndex}); it holds nothing for the document, so it is passed over and
         * the position comes from the other indexes, as MongoDB deletes such a document.
         */
        @Override
        public synchronized void removeDocument(Document document) {
            boolean keyless = getIndexes().stream()
                .anyMatch(index -> index instanceof MultikeySafeUniqueIndex multikey && multikey.holdsNoKeyFor(document));
            if (!keyless) {
                super.removeDocument(document);
                return;
            }
            Integer position = null;
            for (Index<Integer> index : getIndexes()) {
                if (index instanceof MultikeySafeUniqueIndex multikey && multikey.holdsNoKeyFor(document)) {
                    continue;
                }
                Integer indexPosition = index.remove(document);
                if (indexPosition != null) {
                    position = indexPosition;
                }
            }
            if (position == null) {
                return;
            }
            removeDocument(position);
        }

        /**
         * The library keeps a running data size and so encodes the whole document, before and after, on every
         * update (a fifth of the stand-in's time under fanout into timeline caches, whose documents are large).
         * Only collection statistics read it: they add the documents up when asked.
         */
        @Override
        protected boolean tracksDataSize() {
            return false;
        }

        @Override
        protected synchronized int getDataSize() {
            int size = 0;
            for (int position = 0; position < positionLimit; position++) {
                Document document = getDocument(position);
                if (document != null) {
                    size += encodedSize(document);
                }
            }
            return size;
        }

        /** The document's BSON size, as the library counts it in collection statistics. */
        private static int encodedSize(Document document) {
            ByteBuf buffer = Unpooled.buffer();
            try {
                BsonEncoder.encodeDocument(document, buffer);
                return buffer.writerIndex();
            } finally {
                buffer.release();
            }
        }

        @Override
        protected synchronized void removeDocument(Integer position) {
            Document removed = journal != null ? getDocument(position) : null;
            for (FieldIndex index : fieldIndexes.values()) {
                index.remove(position);
            }
            super.removeDocument(position);
            Journal open = journal;
            if (open != null && removed != null) {
                open.removed(this, removed);
            }
        }

        @Override
        protected synchronized void handleUpdate(Integer position, Document oldDocument, Document newDocument) {
            super.handleUpdate(position, oldDocument, newDocument);
            Journal open = journal;
            if (open != null) {
                open.replaced(this, newDocument);
            }
            for (FieldIndex index : fieldIndexes.values()) {
                index.remove(position);
                index.add(position, newDocument);
            }
        }

        @Override
        public synchronized void addIndex(Index<Integer> index) {
            super.addIndex(index);
            refreshFieldIndexes();
        }

        @Override
        public synchronized void dropIndex(String indexName) {
            super.dropIndex(indexName);
            refreshFieldIndexes();
        }

        private void refreshFieldIndexes() {
            Set<String> wanted = new HashSet<>();
            for (Index<Integer> index : getIndexes()) {
                List<IndexKey> keys = index.getKeys();
                if (!keys.isEmpty()) {
                    String path = keys.get(0).getKey();
                    if (!path.equals(ID) && FieldIndex.isSupportedPath(path)) {
                        wanted.add(path);
                    }
                }
            }
            fieldIndexes.keySet().retainAll(wanted);
            for (String path : wanted) {
                if (!fieldIndexes.containsKey(path)) {
                    FieldIndex index = new FieldIndex(path);
                    for (int position = 0; position < positionLimit; position++) {
                        Document document = getDocument(position);
                        if (document != null) {
                            index.add(position, document);
                        }
                    }
                    fieldIndexes.put(path, index);
                }
            }
        }

        // ---- querying ----

        @Override
        protected synchronized QueryResult queryDocuments(Document query, Document orderBy, int numberToSkip, int limit,
                                                          int batchSize, Document fieldSelector) {
            Plan plan = query == null || query.isEmpty() ? null : plan(query);
            if (plan == null) {
                return super.queryDocuments(query, orderBy, numberToSkip, limit, batchSize, fieldSelector);
            }
            int[] positions = plan.positions;
            boolean descending = isNaturalDescending(orderBy); // what a full scan does with {$natural: -1}
            Document reduced = plan.reducedQuery;
            Stream<Document> candidates = IntStream.range(0, positions.length)
                .map(i -> positions[descending ? positions.length - 1 - i : i])
                .mapToObj(position -> {
                    Document document = getDocument(position);
                    if (document == null) {
                        return null;
                    }
                    Document effectiveQuery = plan.knownTrue(position) ? reduced : query;
                    return documentMatchesQuery(document, effectiveQuery) ? document : null;
                })
                .filter(Objects::nonNull);
            // Already filtered: the library's stream stage now matches against {} (always true), then sorts,
            // skips, limits and projects exactly as after a full scan.
            return matchDocumentsFromStream(candidates, EMPTY_QUERY, orderBy, numberToSkip, limit, batchSize,
                fieldSelector);
        }

        /** Candidates for {@code query}, or null for the library's own path. */
        private Plan plan(Document query) {
            for (Index<Integer> index : getIndexes()) {
                if (index.canHandle(query)) {
                    return null; // the library uses this index itself: keep its behaviour (and its order)
                }
            }
            if (!QueryCheck.isSupportedQuery(query)) {
                return null;
            }
            Plan best = null;
            for (Map.Entry<String, Object> entry : query.entrySet()) {
                String field = entry.getKey();
                if (field.startsWith("$")) {
                    continue;
                }
                List<Object> values = QueryCheck.equalityValues(entry.getValue(), field.equals(ID));
                if (values == null) {
                    continue;
                }
                Plan plan = null;
                if (field.equals(ID)) {
                    plan = planById(query, values);
                } else {
                    FieldIndex index = fieldIndexes.get(field);
                    if (index != null) {
                        plan = index.plan(query, field, values);
                    }
                }
                if (plan != null && (best == null || plan.positions.length < best.positions.length)) {
                    best = plan;
                }
            }
            return best;
        }

        private Plan planById(Document query, List<Object> values) {
            Index<Integer> idIndex = null;
            for (Index<Integer> index : getIndexes()) {
                List<IndexKey> keys = index.getKeys();
                if (index.isUnique() && keys.size() == 1 && keys.get(0).getKey().equals(ID)) {
                    idIndex = index;
                    break;
                }
            }
            if (idIndex == null) {
                return null;
            }
            PositionList positions = new PositionList();
            for (Object value : values) {
                Integer position = idIndex.getPosition(new Document(ID, value));
                if (position != null) {
                    positions.add(position);
                }
            }
            // _id is never an array, so an index hit on a top-level _id equality/$in predicate is a match of it.
            return new Plan(positions.sortedDistinct(), without(query, ID), null);
        }

        static Document without(Document query, String field) {
            Document reduced = new Document();
            for (Map.Entry<String, Object> entry : query.entrySet()) {
                if (!entry.getKey().equals(field)) {
                    reduced.put(entry.getKey(), entry.getValue());
                }
            }
            return reduced;
        }
    }

    /** Candidate positions (ascending, distinct) and how to check them. */
    static final class Plan {
        final int[] positions;
        /** The query without the predicate the candidates came from. */
        final Document reducedQuery;
        /** Positions at which that predicate is known to hold (null: all), so {@link #reducedQuery} suffices. */
        final BitSet knownTrue;

        Plan(int[] positions, Document reducedQuery, BitSet knownTrue) {
            this.positions = positions;
            this.reducedQuery = reducedQuery;
            this.knownTrue = knownTrue;
        }

        boolean knownTrue(int position) {
            return knownTrue == null || knownTrue.get(position);
        }
    }

    /** A growable int list. */
    static final class PositionList {
        private int[] values = new int[8];
        private int size;

        void add(int value) {
            if (size == values.length) {
                values = Arrays.copyOf(values, size * 2);
            }
            values[size++] = value;
        }

        void addAll(Collection<Integer> more) {
            for (Integer value : more) {
                add(value);
            }
        }

        int[] sortedDistinct() {
            int[] sorted = Arrays.copyOf(values, size);
            Arrays.sort(sorted);
            int distinct = 0;
            for (int i = 0; i < sorted.length; i++) {
                if (i == 0 || sorted[i] != sorted[i - 1]) {
                    sorted[distinct++] = sorted[i];
                }
            }
            return Arrays.copyOf(sorted, distinct);
        }
    }

    /**
     * Positions of documents by the values at one path, following the library's matcher
     * ({@code DefaultQueryMatcher}) so that every document the matcher could find equal to a value (or {@code $in}
     * one of several) is listed under that value:
     * <ul>
     *   <li>an array met on the way is entered element by element (nested arrays too), with the same remaining
     *       path;</li>
     *   <li>at the end, an array contributes each element (and, a superset, the elements of nested arrays);</li>
     *   <li>a missing field, a null, or a path that runs into a scalar give the null key (the matcher compares those
     *       as missing, and {@code null} equals missing);</li>
     *   <li>keys are the library's own normalised values ({@code Utils.normalizeValue}: every number as a double
     *       unless a long would lose precision, documents field-order-sensitive), so a hash lookup finds exactly the
     *       values the matcher's {@code nullAwareEquals} calls equal.</li>
     * </ul>
     * A document whose path met no array and ended in a non-array value is "simple": there the matcher's result for
     * an equality/{@code $in} predicate on this path is exactly "its key is one of the queried keys".
     */
    static final class FieldIndex {
        private static final Object NULL_KEY = new Object() {
            @Override
            public String toString() {
                return "null/missing";
            }
        };
        private static final Object NO_KEYS = new Object[0];

        private final String[] segments;
        private final Map<Object, Set<Integer>> positionsByKey = new HashMap<>();
        /** Position → its key (Object) or keys (Object[]), as indexed. */
        private final Map<Integer, Object> keysByPosition = new HashMap<>();
        private final BitSet simple = new BitSet();

        FieldIndex(String path) {
            this.segments = path.split("\\.", -1);
        }

        /** Paths the matcher walks plainly: no empty, numeric or $ segment. */
        static boolean isSupportedPath(String path) {
            for (String segment : path.split("\\.", -1)) {
                if (segment.isEmpty() || segment.startsWith("$") || segment.chars().allMatch(Character::isDigit)) {
                    return false;
                }
            }
            return true;
        }

        void add(int position, Document document) {
            KeyCollector keys = new KeyCollector();
            walk(document, 0, keys);
            Object stored;
            if (keys.single != null && keys.more == null) {
                stored = keys.single;
                index(keys.single, position);
            } else if (keys.more != null) {
                stored = keys.more.toArray();
                for (Object key : keys.more) {
                    index(key, position);
                }
            } else {
                stored = NO_KEYS;
            }
            keysByPosition.put(position, stored);
            simple.set(position, keys.simple && keys.more == null && keys.single != null);
        }

        void remove(int position) {
            Object stored = keysByPosition.remove(position);
            if (stored instanceof Object[] keys) {
                for (Object key : keys) {
                    unindex(key, position);
                }
            } else if (stored != null) {
                unindex(stored, position);
            }
            simple.clear(position);
        }

        private void index(Object key, int position) {
            positionsByKey.computeIfAbsent(key, k -> new HashSet<>(4)).add(position);
        }

        private void unindex(Object key, int position) {
            Set<Integer> positions = positionsByKey.get(key);
            if (positions != null) {
                positions.remove(position);
                if (positions.isEmpty()) {
                    positionsByKey.remove(key);
                }
            }
        }

        Plan plan(Document query, String field, List<Object> values) {
            PositionList positions = new PositionList();
            for (Object value : values) {
                Set<Integer> found = positionsByKey.get(key(value));
                if (found != null) {
                    positions.addAll(found);
                }
            }
            return new Plan(positions.sortedDistinct(), IndexedMemoryCollection.without(query, field), simple);
        }

        private void walk(Object value, int depth, KeyCollector keys) {
            if (value instanceof List<?> list) { // the matcher tries each element with the same remaining path
                keys.simple = false;
                for (Object element : list) {
                    walk(element, depth, keys);
                }
                return;
            }
            Object child = value instanceof Document document ? document.getOrMissing(segments[depth]) : null;
            if (depth < segments.length - 1) {
                walk(child, depth + 1, keys);
            } else if (child instanceof Collection<?> values) {
                keys.simple = false;
                addElements(values, keys);
            } else {
                keys.add(key(child));
            }
        }

        private static void addElements(Collection<?> values, KeyCollector keys) {
            for (Object element : values) {
                if (element instanceof Collection<?> nested) {
                    addElements(nested, keys);
                } else {
                    keys.add(key(element));
                }
            }
        }

        static Object key(Object value) {
            return Missing.isNullOrMissing(value) ? NULL_KEY : Normalizer.normalize(value);
        }

        /** The keys of one document; most have exactly one, so no set is made for them. */
        static final class KeyCollector {
            Object single;
            Set<Object> more;
            boolean simple = true;

            void add(Object key) {
                if (single == null) {
                    single = key;
                } else if (more != null) {
                    more.add(key);
                } else if (!single.equals(key)) {
                    more = new LinkedHashSet<>();
                    more.add(single);
                    more.add(key);
                }
            }
        }
    }

    /** The library's {@code Utils.normalizeValue} (package-private), so keys compare exactly as its matcher does. */
    static final class Normalizer {
        private static final MethodHandle NORMALIZE;

        static {
            try {
                Method method = Utils.class.getDeclaredMethod("normalizeValue", Object.class);
                method.setAccessible(true);
                NORMALIZE = MethodHandles.lookup().unreflect(method);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        private Normalizer() {
        }

        static Object normalize(Object value) {
            try {
                return NORMALIZE.invoke(value);
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable e) {
                throw new IllegalStateException(e);
            }
        }
    }

    /** Which filters the index path takes, and the values of an equality predicate. */
    static final class QueryCheck {
        private QueryCheck() {
        }

        /**
         * The values a top-level predicate requires the field to equal (one of), or null if it is not a plain
         * equality, {@code $eq} or {@code $in} of value types whose equality the index reproduces exactly.
         */
        static List<Object> equalityValues(Object predicate, boolean isId) {
            if (predicate instanceof Document document && !BsonRegularExpression.isRegularExpression(document)) {
                Set<String> operators = document.keySet();
                if (operators.equals(Set.of("$eq"))) {
                    Object value = document.get("$eq");
                    return isKeyValue(value, isId) ? Collections.singletonList(value) : null;
                }
                if (operators.equals(Set.of("$in"))) {
                    if (!(document.get("$in") instanceof List<?> values)) {
                        return null;
                    }
                    for (Object value : values) {
                        if (!isKeyValue(value, isId)) {
                            return null;
                        }
                    }
                    return new ArrayList<>(values);
                }
                // {_id: {...}} is document equality; elsewhere the matcher also compares it field by field
                return isId && isPlainDocument(document) ? List.of(document) : null;
            }
            return isKeyValue(predicate, isId) ? Collections.singletonList(predicate) : null;
        }

        /** Scalars with a symmetric equals/hashCode; null (= missing) except for _id; plain documents for _id. */
        private static boolean isKeyValue(Object value, boolean isId) {
            if (value == null) {
                return !isId;
            }
            if (value instanceof Document document) {
                return isId && isPlainDocument(document);
            }
            return isScalar(value);
        }

        private static boolean isScalar(Object value) {
            return value instanceof String || value instanceof Integer || value instanceof Long
                || value instanceof Double || value instanceof Boolean || value instanceof ObjectId
                || value instanceof Instant || value instanceof UUID;
        }

        /**
         * Non-empty, no $ keys, only non-null scalars and plain documents inside: the matcher compares such a value
         * with a non-document field field by field and never finds it equal, and with a document exactly.
         */
        private static boolean isPlainDocument(Document document) {
            if (document.isEmpty()) {
                return false;
            }
            for (Map.Entry<String, Object> entry : document.entrySet()) {
                if (entry.getKey().startsWith("$")) {
                    return false;
                }
                Object value = entry.getValue();
                if (value instanceof Document nested ? !isPlainDocument(nested) : value == null || !isScalar(value)) {
                    return false;
                }
            }
            return true;
        }

        /**
         * Whether the index path may take this filter. A full scan raises the matcher's errors for malformed
         * filters (unknown operators, {@code $and} without an array, {@code $in} without an array, ...) as soon as a
         * document reaches them; narrowing could skip those documents and hide the error. So only filters made of
         * well-formed, known operators are narrowed; anything else keeps the library's path.
         */
        static boolean isSupportedQuery(Document query) {
            for (Map.Entry<String, Object> entry : query.entrySet()) {
                String key = entry.getKey();
                Object value = entry.getValue();
                if (key.startsWith("$")) {
                    switch (key) {
                        case "$and", "$or", "$nor" -> {
                            if (!isQueryList(value)) {
                                return false;
                            }
                        }
                        case "$comment" -> {
                        }
                        default -> {
                            return false; // $expr, $where, $text, unknown
                        }
                    }
                } else if (!isSupportedPredicate(value)) {
                    return false;
                }
            }
            return true;
        }

        private static boolean isQueryList(Object value) {
            if (!(value instanceof List<?> list) || list.isEmpty()) {
                return false;
            }
            for (Object element : list) {
                if (!(element instanceof Document document) || !isSupportedQuery(document)) {
                    return false;
                }
            }
            return true;
        }

        private static boolean isSupportedPredicate(Object value) {
            if (!(value instanceof Document document) || BsonRegularExpression.isRegularExpression(value)) {
                return true;
            }
            for (Map.Entry<String, Object> entry : document.entrySet()) {
                String operator = entry.getKey();
                Object argument = entry.getValue();
                if (!operator.startsWith("$")) {
                    if (!isSupportedPredicate(argument)) { // field-by-field comparison of a query document
                        return false;
                    }
                    continue;
                }
                boolean ok = switch (operator) {
                    case "$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$exists" -> true;
                    case "$in", "$nin", "$all" -> argument instanceof List<?>;
                    case "$size" -> argument instanceof Number;
                    case "$elemMatch" -> argument instanceof Document elemMatch && isSupportedElemMatch(elemMatch);
                    case "$not" -> argument instanceof BsonRegularExpression
                        || argument instanceof Document not && isSupportedPredicate(not);
                    default -> false; // $type, $mod, $regex documents, $ref/$id, geo, unknown
                };
                if (!ok) {
                    return false;
                }
            }
            return true;
        }

        /** $elemMatch holds either operators on the element or a query on its fields (or a mix). */
        private static boolean isSupportedElemMatch(Document elemMatch) {
            if (elemMatch.isEmpty()) {
                return false;
            }
            for (Map.Entry<String, Object> entry : elemMatch.entrySet()) {
                String key = entry.getKey();
                Object value = entry.getValue();
                boolean ok;
                if (key.equals("$and") || key.equals("$or") || key.equals("$nor")) {
                    ok = isQueryList(value);
                } else if (key.startsWith("$")) {
                    ok = isSupportedPredicate(new Document(key, value));
                } else {
                    ok = isSupportedPredicate(value);
                }
                if (!ok) {
                    return false;
                }
            }
            return true;
        }
    }
}
