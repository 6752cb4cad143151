package feed.standin.index;

import java.util.List;
import java.util.Set;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.KeyValue;
import de.bwaldvogel.mongo.backend.memory.index.MemoryUniqueIndex;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.exception.KeyConstraintError;

/**
 * The library's unique index, fixed for documents that have no key in it, and updated by the difference of a
 * document's keys.
 *
 * <p>A multikey index over an empty array (say {@code {_u: 1, "_c._id": 1}} on a document with {@code _c: []})
 * yields no key for that document; the library's update check then looks up "the" position of the old document's
 * keys and fails with "Expected one element but got zero", which reached clients as an error without a code, where
 * MongoDB updates the document (or answers E11000 if the new keys belong to another document). Such an update is
 * checked like an insert.
 *
 * <p>The library computes a document's keys about ten times per update (each computation walks the whole array and
 * normalises every value) and removes and re-adds every key. A timeline bucket of fifty entries took that walk on
 * each delivery into it, which made bucket deliveries the stand-in's main cost. Here an update computes the old and
 * the new keys once each and touches only the keys that differ; the result (which keys point to the document, which
 * update is refused as a duplicate) is the same. A refused update still goes through the library's check, so the
 * duplicate-key error is the library's own.
 *
 * <p>One update calls {@code checkUpdate}, then {@code getPosition} of the old document, then {@code updateInPlace},
 * all under the collection's lock and with the same two documents (the old one a fresh copy, neither changed in
 * between): the keys the check computed are kept for the two calls after it, matched by identity, and dropped by
 * {@code updateInPlace} or by the next check.
 *
 * <p>Removal of such a document is fixed in {@code IndexedMemoryCollection.removeDocument}, which owns the loop
 * over the indexes.
 */
public final class MultikeySafeUniqueIndex extends MemoryUniqueIndex {
    public MultikeySafeUniqueIndex(String name, List<IndexKey> keys, boolean sparse) {
        super(name, keys, sparse);
    }

    /** The keys of the update under way, from its check until it is applied. */
    private KeysOf checkedOld;
    private KeysOf checkedNew;

    private record KeysOf(Document document, Set<KeyValue> keys) {
    }

    public boolean holdsNoKeyFor(Document document) {
        return getKeyValues(document).isEmpty();
    }

    private Set<KeyValue> keysOf(Document document, KeysOf checked) {
        return checked != null && checked.document() == document ? checked.keys() : getKeyValues(document);
    }

    @Override
    public synchronized void checkUpdate(Document oldDocument, Document newDocument, MongoCollection<Integer> collection) {
        checkedOld = null;
        checkedNew = null;
        Set<KeyValue> oldKeys = getKeyValues(oldDocument);
        if (oldKeys.isEmpty()) {
            checkAdd(newDocument, collection);
            return;
        }
        if (isSparse()) {
            super.checkUpdate(oldDocument, newDocument, collection);
            return;
        }
        Integer ownPosition = positionOf(oldKeys);
        Set<KeyValue> newKeys = getKeyValues(newDocument);
        for (KeyValue key : newKeys) {
            if (oldKeys.contains(key)) {
                continue;
            }
            Integer position = getPosition(key);
            if (position != null && !position.equals(ownPosition)) {
                // Throws the library's duplicate-key error for the first clashing key.
                super.checkUpdate(oldDocument, newDocument, collection);
                return;
            }
        }
        checkedOld = new KeysOf(oldDocument, oldKeys);
        checkedNew = new KeysOf(newDocument, newKeys);
    }

    @Override
    public synchronized void updateInPlace(Document oldDocument, Document newDocument, Integer position, MongoCollection<Integer> collection)
            throws KeyConstraintError {
        if (isSparse()) {
            super.updateInPlace(oldDocument, newDocument, position, collection);
            return;
        }
        Set<KeyValue> oldKeys = keysOf(oldDocument, checkedOld);
        Set<KeyValue> newKeys = keysOf(newDocument, checkedNew);
        checkedOld = null;
        checkedNew = null;
        for (KeyValue key : oldKeys) {
            if (!newKeys.contains(key)) {
                removeDocument(key);
            }
        }
        for (KeyValue key : newKeys) {
            if (!oldKeys.contains(key) && !putKeyPosition(key, position)) {
                // checkUpdate ran first under the collection's lock: only a broken invariant gets here.
                throw new IllegalStateException("Key " + key + " already exists in index " + getName());
            }
        }
    }

    /** Every key of a document points to the document's one position, so the first key found tells it. */
    @Override
    public synchronized Integer getPosition(Document document) {
        return positionOf(keysOf(document, checkedOld));
    }

    private Integer positionOf(Set<KeyValue> keys) {
        for (KeyValue key : keys) {
            Integer position = getPosition(key);
            if (position != null) {
                return position;
            }
        }
        return null;
    }
}
