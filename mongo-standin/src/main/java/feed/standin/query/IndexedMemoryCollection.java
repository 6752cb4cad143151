package feed.standin.query;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.ArrayFilters;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.DefaultQueryMatcher;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.QueryMatcher;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.memory.MemoryCollection;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.oplog.Oplog;
import de.bwaldvogel.mongo.wire.bson.BsonEncoder;
import feed.standin.ChangeRecorder;
import feed.standin.index.MultikeySafeUniqueIndex;
import feed.standin.internals.LibraryInternals;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

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
 * The candidates are then filtered with the library's own matcher and the query, in natural (position) order,
 * exactly as a full scan would see them, and sorted, skipped, limited and projected by the library. So results,
 * their order, counts and upserts are the same as with a full scan; only documents that cannot match are skipped.
 * A predicate the index proved for a candidate is left out of its check: re-checking a long {@code $in} list cost
 * (values × candidates), and updates check each document once more for the positional {@code $} element.
 * A query on {@code _id} alone that the library answers through its {@code _id} index keeps that index's positions
 * and order and is not checked again at all. Anything not covered (other operators, regular expressions, unusual
 * value types, queries the validator does not know) takes the library's path unchanged.
 *
 * <p>All methods that touch the field indexes hold this collection's monitor, like the library's own methods
 * ({@link de.bwaldvogel.mongo.backend.AbstractSynchronizedMongoCollection}).
 */
public final class IndexedMemoryCollection extends MemoryCollection {
    private static final String ID = "_id";
    private static final Document EMPTY_QUERY = new Document();

    /** Leading path of an index → its value map. Never "_id" (the library's _id index serves that). */
    private final Map<String, FieldIndex> fieldIndexes = new HashMap<>();
    /** One more than the highest position ever handed out. */
    private int positionLimit;
    private final ChangeRecorder changes;
    private final LeadingMatch.Scope leadingMatches;
    /** Finds the array element an update's positional {@code $} stands for, as the library's own matcher does. */
    private final QueryMatcher positionalMatcher = new DefaultQueryMatcher();

    /** The backend's oplog, null while it is off. */
    private final Supplier<Oplog> oplog;
    /** The documents the findAndModify running on this thread changed, to be written to the oplog after it. */
    private final ThreadLocal<FindAndModifyWrites> findAndModifyWrites = new ThreadLocal<>();

    public IndexedMemoryCollection(MongoDatabase database, String collectionName, CollectionOptions options,
                                   CursorRegistry cursorRegistry, ChangeRecorder changes, LeadingMatch.Scope leadingMatches,
                                   Supplier<Oplog> oplog) {
        super(database, collectionName, options, cursorRegistry);
        this.changes = changes;
        this.leadingMatches = leadingMatches;
        this.oplog = oplog;
    }

    /** What one findAndModify changed: the ids it updated or removed, the document an upsert inserted. */
    private static final class FindAndModifyWrites {
        final List<Object> updated = new ArrayList<>();
        final List<Object> removed = new ArrayList<>();
        final List<Document> inserted = new ArrayList<>();
    }

    /**
     * The library's findAndModify writes nothing to the oplog, so no change stream saw a findOneAndUpdate,
     * findOneAndDelete or findOneAndReplace, where MongoDB's streams see each. The write it makes is noted on the
     * way (every write passes the hooks below) and written to the oplog after it, as the update and delete commands
     * write theirs.
     */
    @Override
    public Document findAndModify(Document query) {
        FindAndModifyWrites writes = new FindAndModifyWrites();
        findAndModifyWrites.set(writes);
        Document response;
        try {
            synchronized (this) { // the library's lock: no update changes the document while it is copied
                response = super.findAndModify(query);
                // The returned document may be the stored one (see createQueryResult).
                if (response.get("value") instanceof Document value) {
                    response.put("value", value.cloneDeeply());
                }
            }
        } finally {
            findAndModifyWrites.remove();
        }
        Oplog log = oplog.get();
        if (log != null) {
            Document selector = query.get("query") instanceof Document filter ? filter : EMPTY_QUERY;
            if (!writes.updated.isEmpty()) log.handleUpdate(getFullName(), selector, (Document) query.get("update"), writes.updated);
            if (!writes.removed.isEmpty()) log.handleDelete(getFullName(), selector, writes.removed);
            if (!writes.inserted.isEmpty()) log.handleInsert(getFullName(), writes.inserted);
        }
        return response;
    }

    /** Set while a client's {@code find} is answered (see {@link #answeringFind}). */
    private static final ThreadLocal<Boolean> answeringFind = new ThreadLocal<>();

    /**
     * Runs a client's {@code find}, whose answer is copied (see {@link #createQueryResult}). The library's own
     * queries (a findAndModify's, an update's, a delete's) change or remove the documents they find, so theirs must
     * stay the stored documents themselves.
     */
    public static <T> T answeringFind(Supplier<T> find) {
        answeringFind.set(Boolean.TRUE);
        try {
            return find.get();
        } finally {
            answeringFind.remove();
        }
    }

    /**
     * A client's query answered with copies. The library hands out the stored documents themselves when no
     * projection is asked for (and their nested documents with one), and the reply is encoded after the
     * collection's lock is let go: an update of the same document meanwhile, which changes it in place, met the
     * encoding (a {@code ConcurrentModificationException}, and no reply) or changed what it read half-way.
     * MongoDB answers from a snapshot. Copied here, under the lock.
     */
    @Override
    protected QueryResult createQueryResult(List<Document> documents, int batchSize) {
        boolean copied = answeringFind.get() != null;
        return super.createQueryResult(copied ? documents.stream().map(Document::cloneDeeply).toList() : documents, batchSize);
    }

    /** An aggregate's source: only the documents its leading {@code $match} keeps (see {@link LeadingMatch}). */
    @Override
    public Stream<Document> queryAllAsStream() {
        Document filter = leadingMatches.takeFilter(getFullName());
        return filter == null ? super.queryAllAsStream() : handleQueryAsStream(filter);
    }

    // ---- index maintenance ----

    @Override
    protected synchronized Integer addDocumentInternal(Document document) {
        Integer position = super.addDocumentInternal(document);
        changes.inserted(this, document);
        FindAndModifyWrites writes = findAndModifyWrites.get();
        if (writes != null) writes.inserted.add(document.cloneDeeply());
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
    public static int encodedSize(Document document) {
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
        Document removed = getDocument(position);
        for (FieldIndex index : fieldIndexes.values()) {
            index.remove(position);
        }
        super.removeDocument(position);
        if (removed != null) {
            changes.removed(this, removed);
            FindAndModifyWrites writes = findAndModifyWrites.get();
            if (writes != null) writes.removed.add(removed.get(ID));
        }
    }

    @Override
    protected synchronized void handleUpdate(Integer position, Document oldDocument, Document newDocument) {
        super.handleUpdate(position, oldDocument, newDocument);
        changes.replaced(this, newDocument);
        FindAndModifyWrites writes = findAndModifyWrites.get();
        if (writes != null) writes.updated.add(newDocument.get(ID));
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
        Stream<Selected> selected = select(query, orderBy);
        if (selected == null) {
            return super.queryDocuments(query, orderBy, numberToSkip, limit, batchSize, fieldSelector);
        }
        Stream<Document> matched = selected
            .filter(candidate -> documentMatchesQuery(candidate.document(), candidate.remainingQuery()))
            .map(Selected::document);
        // Already filtered: the library's stream stage now matches against {} (always true), then sorts,
        // skips, limits and projects exactly as after a full scan, or as after its own index lookup.
        return matchDocumentsFromStream(matched, EMPTY_QUERY, orderBy, numberToSkip, limit, batchSize, fieldSelector);
    }

    /**
     * The library's update loop, except for the query each document's positional {@code $} element is found with:
     * the library matches every updated document against the whole selector again, which re-checks an
     * {@code _id: {$in: [...]}} list value by value (1,000 ids × 1,000 documents per fanout update). Where the
     * index proved a predicate for a document, the rest of the selector is used. A proved predicate never sets the
     * element: the matcher sets it only while it walks through an array, and {@code _id}, or a path an index found
     * no array on, has none. The matched documents, the updates, the counts, the upsert and the oplog entry are the
     * library's; without matches the library's own method runs (it matches nothing again, then upserts or records
     * the empty update).
     */
    @Override
    public synchronized Document updateDocuments(Document selector, Document updateQuery, ArrayFilters arrayFilters,
                                                 boolean isMulti, boolean isUpsert, Oplog oplog) {
        boolean replacement = updateQuery.keySet().stream().anyMatch(key -> !key.startsWith("$"));
        Stream<Selected> selected = isMulti && replacement ? null : select(selector, null);
        if (selected == null) {
            return super.updateDocuments(selector, updateQuery, arrayFilters, isMulti, isUpsert, oplog);
        }
        // All matches first, then the updates, in the library's order (it collects the query's result first).
        List<Selected> matched = selected
            .filter(candidate -> documentMatchesQuery(candidate.document(), candidate.remainingQuery()))
            .toList();
        if (matched.isEmpty()) {
            return super.updateDocuments(selector, updateQuery, arrayFilters, isMulti, isUpsert, oplog);
        }
        int nMatched = 0;
        List<Object> updatedIds = new ArrayList<>();
        for (Selected candidate : matched) {
            Document document = candidate.document();
            Integer positionalElement = positionalMatcher.matchPosition(document, candidate.remainingQuery());
            Document oldDocument = LibraryInternals.updateDocument(this, document, updateQuery, arrayFilters,
                positionalElement);
            if (!LibraryInternals.nullAwareEquals(oldDocument, document)) {
                updatedIds.add(document.get(getIdField()));
            }
            nMatched++;
            if (!isMulti) {
                break;
            }
        }
        oplog.handleUpdate(getFullName(), selector, updateQuery, updatedIds);
        Document result = new Document();
        result.put("n", nMatched);
        result.put("nModified", updatedIds.size());
        return result;
    }

    /** A candidate document and what of the query is left to check for it. */
    private record Selected(Document document, Document remainingQuery) {
    }

    /**
     * The candidates for {@code query} in the order a query without a sort sees them, each with the query minus
     * any predicate an index proved for it; null where the library's own path must run.
     */
    private Stream<Selected> select(Document query, Document orderBy) {
        if (query == null || query.isEmpty()) {
            return null;
        }
        Index<Integer> libraryIndex = null;
        for (Index<Integer> index : getIndexes()) {
            if (index.canHandle(query)) {
                libraryIndex = index;
                break;
            }
        }
        if (libraryIndex != null) {
            return selectByLibraryIdIndex(libraryIndex, query);
        }
        Plan plan = plan(query);
        if (plan == null) {
            return null;
        }
        int[] positions = plan.positions;
        boolean descending = isNaturalDescending(orderBy); // what a full scan does with {$natural: -1}
        return IntStream.range(0, positions.length)
            .map(i -> positions[descending ? positions.length - 1 - i : i])
            .mapToObj(position -> {
                Document document = getDocument(position);
                if (document == null) {
                    return null;
                }
                return new Selected(document, plan.knownTrue(position) ? plan.reducedQuery : query);
            })
            .filter(Objects::nonNull);
    }

    /**
     * A query the library answers through an index itself. When that is the unique {@code _id} index and the
     * predicate is an equality or {@code $in} of plain values (no regular expression, no null), the index's
     * positions, in its order (by value, as MongoDB's {@code _id} index orders them; {@code $natural} is ignored
     * there), are exactly the matching documents: {@code _id} is never an array, and the index finds the values
     * the matcher calls equal. So nothing of the query is left to check, where the library matched every document
     * against the whole list again. Anything else keeps the library's path.
     */
    private Stream<Selected> selectByLibraryIdIndex(Index<Integer> index, Document query) {
        if (!isIdIndex(index) || QueryCheck.equalityValues(query.get(ID), true) == null) {
            return null;
        }
        return StreamSupport.stream(index.getPositions(query).spliterator(), false)
            .map(position -> new Selected(getDocument(position), EMPTY_QUERY));
    }

    private static boolean isIdIndex(Index<Integer> index) {
        List<IndexKey> keys = index.getKeys();
        return index.isUnique() && keys.size() == 1 && keys.get(0).getKey().equals(ID);
    }

    /** Candidates for {@code query} from the {@code _id} index or a field index, or null for a full scan. */
    private Plan plan(Document query) {
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
            if (isIdIndex(index)) {
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
        return new Plan(positions.sortedDistinct(), Plan.without(query, ID), null);
    }
}
