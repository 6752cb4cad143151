package feed.standin.oplog;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.Supplier;
import java.util.stream.Stream;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.backend.Cursor;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.aggregation.Aggregation;
import de.bwaldvogel.mongo.bson.BsonTimestamp;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.oplog.OplogCursor;
import de.bwaldvogel.mongo.oplog.OplogPosition;
import feed.standin.internals.LibraryInternals;

/**
 * A change stream over a whole database ({@code db.watch()}: an {@code aggregate: 1} whose first stage is
 * {@code $changeStream}), which the library answers with nothing: it filters every stream to one collection, and
 * takes the database's {@code 1} for a collection of that name. Here such a stream reads every entry of the
 * database, in oplog order, and each event names its collection in {@code ns} as MongoDB's do, so one stream can
 * carry the writes of several collections in the order they were made.
 *
 * <p>The cursor is the library's {@link OplogCursor}, so the backend's change-stream getMore handling (waiting, the
 * position-bounded oplog read of {@link OplogRead}) applies to it unchanged. Events carry what the library's
 * collection streams carry: the inserted document, an update's changed and removed fields, a deleted
 * document's key; {@code fullDocument: "updateLookup"} is not supported.
 */
public final class DatabaseChangeStream {
    /** The collection name the library gives a database-wide aggregate. */
    static final String DATABASE_WIDE = "1";
    /** The namespace MongoDB gives a database-wide aggregate's cursor, which its getMores name. */
    public static final String CURSOR_COLLECTION = "$cmd.aggregate";

    private DatabaseChangeStream() {
    }

    /** Whether {@code namespace} is a database-wide aggregate's: "db.1" as the library names it, or its cursor's. */
    public static boolean isDatabaseWide(String namespace) {
        return namespace.endsWith("." + DATABASE_WIDE) || namespace.endsWith("." + CURSOR_COLLECTION);
    }

    /** The database of a database-wide aggregate's namespace. */
    static String databaseOf(String namespace) {
        return namespace.substring(0, namespace.indexOf('.'));
    }

    /** {@code writes}: the lock oplog writes hold (see {@link SignallingOplog}), which a read takes too. */
    static Cursor open(Document changeStream, String namespace, Aggregation aggregation, CursorRegistry cursors,
                       Supplier<MongoCollection<?>> oplog, Object writes) {
        String database = databaseOf(namespace);
        Scan scan = new Scan(writes);
        OplogCursor cursor = new OplogCursor(cursors.generateCursorId(),
            position -> aggregation.runStagesAsStream(scan.events(oplog.get(), database, position)),
            startOf(changeStream, oplog.get())) {
            /**
             * A read whose filter dropped every entry moves the stream past them, as MongoDB's post-batch position
             * does: the library moves it only to the last event returned, so every write of the database would
             * otherwise have the next read copy again every entry since the stream's last event.
             */
            @Override
            public List<Document> takeDocuments(int numberToReturn) {
                List<Document> events = super.takeDocuments(numberToReturn);
                if (events.isEmpty() && scan.newest != null) {
                    LibraryInternals.moveChangeStream(this, scan.newest);
                }
                return events;
            }
        };
        cursors.add(cursor);
        return cursor;
    }

    /**
     * One cursor's reads, and the newest entry the last one saw. Each reads under the oplog writes' lock: every
     * entry older than the newest it sees is there, so the stream may move past them all.
     */
    private static final class Scan {
        private final Object writes;
        private OplogPosition newest;

        Scan(Object writes) {
            this.writes = writes;
        }

        Stream<Document> events(MongoCollection<?> oplog, String database, OplogPosition position) {
            String prefix = database + ".";
            ArrayList<Document> entries = new ArrayList<>();
            synchronized (writes) {
                oplog.queryAllAsStream()
                    .filter(entry -> ((String) entry.get("ns")).startsWith(prefix))
                    .filter(entry -> new OplogPosition((BsonTimestamp) entry.get("ts")).isAfter(position))
                    .forEach(entries::add);
            }
            entries.sort(Comparator.comparingLong(DatabaseChangeStream::timestampOf));
            newest = entries.isEmpty() ? null : new OplogPosition((BsonTimestamp) entries.get(entries.size() - 1).get("ts"));
            return entries.stream().map(entry -> toEvent(entry, database));
        }
    }

    private static OplogPosition startOf(Document changeStream, MongoCollection<?> oplog) {
        for (String option : new String[] {"startAfter", "resumeAfter"}) {
            if (changeStream.get(option) instanceof Document token) {
                return OplogPosition.fromDocument(token);
            }
        }
        if (changeStream.get("startAtOperationTime") instanceof BsonTimestamp time) {
            return new OplogPosition(time).inclusive();
        }
        // From now: after the newest entry.
        long newest = oplog instanceof OplogCollection entries ? entries.newestTimestamp()
            : oplog.queryAllAsStream().mapToLong(DatabaseChangeStream::timestampOf).max().orElse(0);
        return new OplogPosition(new BsonTimestamp(newest));
    }

    /** An oplog entry as MongoDB reports it to a database-wide change stream. */
    private static Document toEvent(Document entry, String database) {
        BsonTimestamp time = (BsonTimestamp) entry.get("ts");
        String collection = ((String) entry.get("ns")).substring(database.length() + 1);
        Document o = (Document) entry.get("o");
        Document event = new Document("_id", new Document("_data", new OplogPosition(time).toHexString()));
        switch ((String) entry.get("op")) {
            case "i" -> event.append("operationType", "insert")
                .append("clusterTime", time)
                .append("ns", namespace(database, collection))
                .append("documentKey", new Document("_id", o.get("_id")))
                .append("fullDocument", o);
            case "u" -> event.append("operationType", "update")
                .append("clusterTime", time)
                .append("ns", namespace(database, collection))
                .append("documentKey", entry.get("o2"))
                .append("updateDescription", new Document("updatedFields", fieldsOf(o, "$set"))
                    .append("removedFields", new ArrayList<>(fieldsOf(o, "$unset").keySet())));
            case "d" -> event.append("operationType", "delete")
                .append("clusterTime", time)
                .append("ns", namespace(database, collection))
                .append("documentKey", o);
            default -> { // a command: the library writes one for a dropped collection
                String dropped = (String) o.get("drop");
                event.append("operationType", dropped != null ? "drop" : o.keySet().iterator().next())
                    .append("clusterTime", time)
                    .append("ns", dropped != null ? namespace(database, dropped) : new Document("db", database));
            }
        }
        return event;
    }

    private static Document namespace(String database, String collection) {
        return new Document("db", database).append("coll", collection);
    }

    private static Document fieldsOf(Document update, String operator) {
        return update.get(operator) instanceof Document fields ? fields : new Document();
    }

    private static long timestampOf(Document entry) {
        return ((BsonTimestamp) entry.get("ts")).getValue();
    }
}
