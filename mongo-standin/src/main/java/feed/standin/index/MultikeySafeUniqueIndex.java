package feed.standin.index;

import java.util.List;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.memory.index.MemoryUniqueIndex;
import de.bwaldvogel.mongo.bson.Document;

/**
 * The library's unique index, fixed for documents that have no key in it. A multikey index over an empty array
 * (say {@code {_u: 1, "_c._id": 1}} on a document with {@code _c: []}) yields no key for that document; the
 * library's update check then looks up "the" position of the old document's keys and fails with "Expected one
 * element but got zero", which reached clients as an error without a code, where MongoDB updates the document
 * (or answers E11000 if the new keys belong to another document). Such an update is checked like an insert.
 *
 * <p>Removal of such a document is fixed in {@code IndexedMemoryCollection.removeDocument}, which owns the loop
 * over the indexes.
 */
public final class MultikeySafeUniqueIndex extends MemoryUniqueIndex {
    public MultikeySafeUniqueIndex(String name, List<IndexKey> keys, boolean sparse) {
        super(name, keys, sparse);
    }

    public boolean holdsNoKeyFor(Document document) {
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
