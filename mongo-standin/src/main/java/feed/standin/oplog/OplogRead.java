package feed.standin.oplog;

import java.util.function.Supplier;

import de.bwaldvogel.mongo.bson.Document;

/** A change-stream getMore's oplog read: entries from timestamp {@code from} on, of {@code namespace}. */
public record OplogRead(long from, String namespace) {

    /**
     * Entries of the watched collection, and commands (drops) of its database, which also end a stream; every entry
     * of the database for a database-wide stream.
     */
    boolean concerns(Document entry) {
        String entryNamespace = (String) entry.get("ns");
        if (DatabaseChangeStream.isDatabaseWide(namespace)) {
            return entryNamespace != null && entryNamespace.startsWith(DatabaseChangeStream.databaseOf(namespace) + ".");
        }
        return namespace.equals(entryNamespace)
            || (entryNamespace != null && entryNamespace.endsWith(".$cmd")
                && entryNamespace.regionMatches(0, namespace, 0, entryNamespace.length() - "$cmd".length()));
    }

    /**
     * The read in progress on the current thread. The library reaches the oplog collection from deep inside its
     * getMore handling, with no parameter the cursor's position could travel in, so the backend's getMore hands it
     * over here and {@link OplogCollection} reads it back on the same thread. One instance per backend, given to the
     * collection through its constructor.
     */
    public static final class Scope {
        private final ThreadLocal<OplogRead> current = new ThreadLocal<>();

        public <T> T during(OplogRead read, Supplier<T> body) {
            current.set(read);
            try {
                return body.get();
            } finally {
                current.remove();
            }
        }

        OplogRead current() {
            return current.get();
        }
    }
}
