package feed.standin.oplog;

import java.util.concurrent.ConcurrentSkipListMap;
import java.util.stream.Stream;

import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import feed.standin.query.IndexedMemoryCollection;
import de.bwaldvogel.mongo.backend.memory.MemoryCollection;
import de.bwaldvogel.mongo.bson.BsonTimestamp;
import de.bwaldvogel.mongo.bson.Document;

/**
 * The oplog's collection ({@code local.oplog.rs}), also indexed by timestamp. The library answers every change-stream
 * getMore by streaming the whole oplog (through the query machinery, one copy per entry), filtering it by namespace
 * and position and sorting it; under write load with a few streams open that cost the stand-in most of a core. While
 * the backend runs a change-stream getMore inside {@link OplogRead.Scope#during}, the stream holds only the entries
 * from the cursor's position on for that collection or its database's commands: a superset of what the library's
 * filters keep, so its answer is unchanged. Every other reader (a stream's opening aggregate, trimming) still gets
 * every entry.
 */
public final class OplogCollection extends MemoryCollection {
    private final ConcurrentSkipListMap<Long, Document> byTimestamp = new ConcurrentSkipListMap<>();
    private final OplogRead.Scope reads;

    public OplogCollection(MongoDatabase database, String collectionName, CollectionOptions options,
                           CursorRegistry cursorRegistry, OplogRead.Scope reads) {
        super(database, collectionName, options, cursorRegistry);
        this.reads = reads;
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

    /**
     * The library keeps a running data size, encoding every entry when it is added and again when trimming drops it:
     * a quarter of the stand-in's time under a write-heavy load, for a figure only collection statistics read. They
     * add the entries up when asked.
     */
    @Override
    protected boolean tracksDataSize() {
        return false;
    }

    @Override
    protected synchronized int getDataSize() {
        return byTimestamp.values().stream().mapToInt(IndexedMemoryCollection::encodedSize).sum();
    }

    @Override
    public Stream<Document> queryAllAsStream() {
        OplogRead read = reads.current();
        if (read == null) {
            return super.queryAllAsStream();
        }
        // Copies, as the library's query path hands out; only of the entries the stream can use.
        return byTimestamp.tailMap(read.from(), true).values().stream().filter(read::concerns).map(Document::cloneDeeply);
    }

    /** The newest entry's timestamp, 0 when there is none: where a stream opened now starts. */
    synchronized long newestTimestamp() {
        return byTimestamp.isEmpty() ? 0 : byTimestamp.lastKey();
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
