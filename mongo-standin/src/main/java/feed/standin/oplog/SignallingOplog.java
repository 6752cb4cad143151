package feed.standin.oplog;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Supplier;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.backend.Cursor;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.Utils;
import de.bwaldvogel.mongo.backend.aggregation.Aggregation;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.oplog.Oplog;

/**
 * Delegates to the library's oplog and reports every write once it is visible, so that parked change-stream
 * getMores wake up. Writes take this object's lock from the entry's timestamp to its place in the oplog, so a
 * read under the same lock (a database-wide stream's, see {@link DatabaseChangeStream}) sees every entry older
 * than the newest it sees: one being written cannot appear later behind it.
 *
 * <p>Also keeps the oplog to its newest {@value #KEPT_ENTRIES} entries, as MongoDB caps its own: the library
 * keeps every entry forever and scans them all for every change-stream {@code getMore}, so an idle change
 * stream grew more expensive with every write the server had ever taken. A stream resuming from a trimmed
 * position gets what MongoDB answers then (its history is lost), which clients must handle anyway.
 */
public final class SignallingOplog implements Oplog {
    static final int KEPT_ENTRIES = 10_000;
    /** Trimming scans the oplog once: done every this many writes, so its cost per write stays small. */
    static final int TRIM_EVERY = 1_000;

    private final Oplog delegate;
    /** Receives "db.collection", or "db.$cmd" for a drop (which ends every stream on the database). */
    private final Consumer<String> written;
    private final Supplier<MongoCollection<?>> oplogCollection;
    private final CursorRegistry cursors;
    private final AtomicLong writesSinceTrim = new AtomicLong();

    public SignallingOplog(Oplog delegate, Consumer<String> written, Supplier<MongoCollection<?>> oplogCollection,
                           CursorRegistry cursors) {
        this.delegate = delegate;
        this.written = written;
        this.oplogCollection = oplogCollection;
        this.cursors = cursors;
    }

    @Override
    public synchronized void handleInsert(String namespace, List<Document> documents) {
        delegate.handleInsert(namespace, documents);
        written.accept(namespace);
        trimNow(documents.size());
    }

    @Override
    public synchronized void handleUpdate(String namespace, Document selector, Document query, List<Object> modifiedIds) {
        delegate.handleUpdate(namespace, selector, query, modifiedIds);
        if (!modifiedIds.isEmpty()) { // nothing was written to the oplog otherwise
            written.accept(namespace);
            trimNow(modifiedIds.size());
        }
    }

    @Override
    public synchronized void handleDelete(String namespace, Document query, List<Object> deletedIds) {
        delegate.handleDelete(namespace, query, deletedIds);
        if (!deletedIds.isEmpty()) {
            written.accept(namespace);
            trimNow(deletedIds.size());
        }
    }

    @Override
    public synchronized void handleDropCollection(String namespace) {
        delegate.handleDropCollection(namespace);
        written.accept(Utils.getDatabaseNameFromFullName(namespace) + ".$cmd");
    }

    @Override
    public Cursor createCursor(Document changeStreamDocument, String namespace, Aggregation aggregation) {
        if (DatabaseChangeStream.isDatabaseWide(namespace)) {
            return DatabaseChangeStream.open(changeStreamDocument, namespace, aggregation, cursors, oplogCollection, this);
        }
        return delegate.createCursor(changeStreamDocument, namespace, aggregation);
    }

    private void trimNow(int writes) {
        if (writesSinceTrim.addAndGet(writes) < TRIM_EVERY) {
            return;
        }
        writesSinceTrim.set(0);
        if (oplogCollection.get() instanceof OplogCollection oplog) {
            oplog.keepNewest(KEPT_ENTRIES);
        }
    }
}
