package feed.standin;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.bson.Document;

/**
 * Where the backend reports every change as it happens: the {@link Journal} with {@code --data-dir}, else
 * {@link #NONE}, so that the collections need no "is there a journal" checks.
 */
public interface ChangeRecorder {
    ChangeRecorder NONE = new ChangeRecorder() {
    };

    default void inserted(MongoCollection<?> collection, Document document) {
    }

    default void replaced(MongoCollection<?> collection, Document document) {
    }

    default void removed(MongoCollection<?> collection, Document document) {
    }

    /** A command that answered ok; only schema commands matter to a recorder. */
    default void commandSucceeded(String database, String command, Document query) {
    }
}
