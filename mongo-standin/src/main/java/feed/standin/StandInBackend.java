package feed.standin;

import java.util.List;
import java.util.Set;

import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.Cursor;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import de.bwaldvogel.mongo.backend.memory.MemoryCollection;
import de.bwaldvogel.mongo.backend.memory.MemoryDatabase;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.exception.MongoServerError;
import de.bwaldvogel.mongo.exception.MongoServerException;
import de.bwaldvogel.mongo.oplog.Oplog;
import de.bwaldvogel.mongo.oplog.OplogCursor;
import de.bwaldvogel.mongo.wire.message.MongoMessage;
import feed.standin.changestream.ChangeStreamGetMores;
import feed.standin.index.MultikeySafeUniqueIndex;
import feed.standin.internals.LibraryInternals;
import feed.standin.oplog.DatabaseChangeStream;
import feed.standin.oplog.OplogCollection;
import feed.standin.oplog.OplogRead;
import feed.standin.oplog.SignallingOplog;
import feed.standin.query.IndexedMemoryCollection;
import feed.standin.query.LeadingMatch;
import io.netty.channel.Channel;

/**
 * The library's memory backend with this stand-in's parts plugged in where the library calls out: its collections
 * ({@link IndexedMemoryCollection}, {@link OplogCollection}), its oplog ({@link SignallingOplog}), change-stream
 * getMores that wait ({@link ChangeStreamGetMores}), and the
 * {@link ChangeRecorder} that every successful command is reported to.
 */
final class StandInBackend extends MemoryBackend {
    private final ChangeRecorder changes;
    private final LeadingMatch.Scope leadingMatches = new LeadingMatch.Scope();
    private final OplogRead.Scope oplogReads = new OplogRead.Scope();
    private final ChangeStreamGetMores getMores = new ChangeStreamGetMores(this::handleGetMore);

    StandInBackend(ChangeRecorder changes) {
        this.changes = changes;
    }

    /** Null until the oplog is enabled; read by the collections' findAndModify (see IndexedMemoryCollection). */
    private volatile Oplog oplog;

    @Override
    protected Oplog createOplog() {
        oplog = new SignallingOplog(super.createOplog(), getMores::oplogWritten,
            () -> resolveDatabase("local").resolveCollection("oplog.rs", false), getCursorRegistry());
        return oplog;
    }

    @Override
    public MemoryDatabase openOrCreateDatabase(String databaseName) {
        return new StandInDatabase(databaseName, getCursorRegistry());
    }

    /** For the journal's compaction, which must see every database; the library keeps the list protected. */
    Set<String> databaseNames() {
        return listDatabaseNames();
    }

    @Override
    public Document handleCommand(Channel channel, String databaseName, String command, Document query) {
        if (command.equalsIgnoreCase("collMod") && query.get("index") instanceof Document index && index.get("expireAfterSeconds") != null) {
            return changeExpiry(channel, databaseName, query, index);
        }
        if (command.equalsIgnoreCase("createIndexes")) refuseChangedExpiry(channel, databaseName, query);
        LeadingMatch match = LeadingMatch.of(databaseName, command, query);
        Document response = match == null
            ? answered(channel, databaseName, command, query)
            : leadingMatches.during(match, () -> super.handleCommand(channel, databaseName, command, match.command()));
        if (response != null && Double.valueOf(1.0).equals(toDouble(response.get("ok")))) {
            changes.commandSucceeded(databaseName, command, query);
            if (command.equalsIgnoreCase("aggregate") && query.get(command) instanceof Number) {
                nameDatabaseWideCursor(databaseName, response);
            }
        }
        return response;
    }

    /** A {@code find} is answered with copies of the documents (see {@link IndexedMemoryCollection#answeringFind}). */
    private Document answered(Channel channel, String databaseName, String command, Document query) {
        return command.equalsIgnoreCase("find")
            ? IndexedMemoryCollection.answeringFind(() -> super.handleCommand(channel, databaseName, command, query))
            : super.handleCommand(channel, databaseName, command, query);
    }

    /**
     * A database-wide aggregate's cursor is in namespace "db.$cmd.aggregate" on MongoDB, which its getMores then
     * name as their collection; the library says "db.1".
     */
    private static void nameDatabaseWideCursor(String databaseName, Document response) {
        if (response.get("cursor") instanceof Document cursor) {
            cursor.put("ns", databaseName + "." + DatabaseChangeStream.CURSOR_COLLECTION);
        }
    }

    /**
     * MongoDB refuses to make an index again under its name with another {@code expireAfterSeconds}
     * (IndexOptionsConflict, code 85), where the library would add a second index of that name.
     */
    private void refuseChangedExpiry(Channel channel, String databaseName, Document query) {
        String collection = (String) query.get("createIndexes");
        @SuppressWarnings("unchecked")
        List<Document> wanted = (List<Document>) query.get("indexes");
        if (wanted == null) return;
        for (Document existing : indexesOf(channel, databaseName, collection)) {
            for (Document index : wanted) {
                if (!existing.get("name").equals(index.get("name"))) continue;
                Object was = existing.get("expireAfterSeconds");
                Object now = index.get("expireAfterSeconds");
                boolean same = was == null ? now == null : now != null && toDouble(was).equals(toDouble(now));
                if (!same) {
                    throw new MongoServerError(85, "IndexOptionsConflict",
                        "An existing index has the same name as the requested index with different options: " + index.get("name"));
                }
            }
        }
    }

    private List<Document> indexesOf(Channel channel, String databaseName, String collection) {
        Document listed;
        try {
            listed = super.handleCommand(channel, databaseName, "listIndexes", new Document("listIndexes", collection));
        } catch (MongoServerException noCollection) {
            return List.of();
        }
        if (listed == null || !(listed.get("cursor") instanceof Document)) return List.of();
        Document cursor = (Document) listed.get("cursor");
        @SuppressWarnings("unchecked")
        List<Document> indexes = (List<Document>) cursor.get("firstBatch");
        return indexes;
    }

    /**
     * {@code collMod} of a TTL index's {@code expireAfterSeconds}, which the library answers without changing the
     * index consistently: the index is made again, under its name and key, with the new period, through the
     * commands the journal records.
     */
    private Document changeExpiry(Channel channel, String databaseName, Document query, Document change) {
        String collection = (String) query.get("collMod");
        String name = (String) change.get("name");
        Document spec = indexesOf(channel, databaseName, collection).stream().filter(index -> name.equals(index.get("name"))).findFirst()
            .orElseThrow(() -> new MongoServerException("cannot find index " + name + " for ns " + databaseName + "." + collection));
        Object previous = spec.get("expireAfterSeconds");
        Document changed = new Document("key", spec.get("key")).append("name", name).append("expireAfterSeconds", change.get("expireAfterSeconds"));
        handleCommand(channel, databaseName, "dropIndexes", new Document("dropIndexes", collection).append("index", name));
        handleCommand(channel, databaseName, "createIndexes", new Document("createIndexes", collection).append("indexes", List.of(changed)));
        return new Document("expireAfterSeconds_old", previous).append("expireAfterSeconds_new", change.get("expireAfterSeconds")).append("ok", 1.0);
    }

    @Override
    public Document handleMessage(MongoMessage message) {
        Channel channel = message.getChannel();
        Document query = message.getDocument();
        String command = query.isEmpty() ? "" : query.keySet().iterator().next();
        if (!command.equalsIgnoreCase("getMore") || channel == null || !channel.eventLoop().inEventLoop()
            || changeStreamCursor(query.get(command)) == null) {
            return super.handleMessage(message);
        }
        return getMores.handle(message, command, () -> super.handleMessage(message));
    }

    /** A change-stream getMore reads the oplog from its cursor's position on (see {@code OplogCollection}). */
    @Override
    protected Document handleGetMore(String databaseName, String command, Document query) {
        OplogCursor cursor = changeStreamCursor(query.get(command));
        if (cursor == null) {
            return super.handleGetMore(databaseName, command, query);
        }
        OplogRead read = new OplogRead(LibraryInternals.changeStreamPosition(cursor), databaseName + "." + query.get("collection"));
        return oplogReads.during(read, () -> super.handleGetMore(databaseName, command, query));
    }

    @Override
    protected Document handleKillCursors(Document query) {
        Document response = super.handleKillCursors(query);
        getMores.cursorsClosed(query.get("cursors"));
        return response;
    }

    @Override
    public void closeCursors(List<Long> cursorIds) {
        super.closeCursors(cursorIds);
        getMores.cursorsClosed(cursorIds);
    }

    @Override
    public void handleClose(Channel channel) {
        super.handleClose(channel);
        getMores.channelClosed(channel);
    }

    /** The change-stream cursor with this id, or null for any other cursor or none. */
    private OplogCursor changeStreamCursor(Object cursorId) {
        if (!(cursorId instanceof Number number)) {
            return null;
        }
        try {
            Cursor cursor = getCursorRegistry().getCursor(number.longValue());
            return cursor instanceof OplogCursor oplogCursor ? oplogCursor : null;
        } catch (MongoServerException e) { // CursorNotFound: let the library report it
            return null;
        }
    }

    private static Double toDouble(Object value) {
        return value instanceof Number number ? number.doubleValue() : null;
    }

    /**
     * The library's memory database, making this stand-in's collections and unique indexes instead of its own.
     *
     * <p>An inner class on purpose: the library's database constructor already creates a collection
     * ({@code system.namespaces}), before a subclass's own fields are set, and javac sets an inner class's
     * reference to its outer instance before that constructor runs. So the collections reach the backend's
     * parts through it, where fields passed to this class's constructor would still be null.
     */
    private final class StandInDatabase extends MemoryDatabase {
        StandInDatabase(String databaseName, CursorRegistry cursorRegistry) {
            super(databaseName, cursorRegistry);
        }

        @Override
        protected MemoryCollection openOrCreateCollection(String collectionName, CollectionOptions options) {
            if (getDatabaseName().equals("local") && collectionName.equals("oplog.rs")) {
                return new OplogCollection(this, collectionName, options, cursorRegistry, oplogReads);
            }
            return new IndexedMemoryCollection(this, collectionName, options, cursorRegistry, changes, leadingMatches,
                () -> oplog);
        }

        @Override
        protected Index<Integer> openOrCreateUniqueIndex(String collectionName, String indexName, List<IndexKey> keys,
                                                         boolean sparse) {
            return new MultikeySafeUniqueIndex(indexName, keys, sparse);
        }
    }
}
