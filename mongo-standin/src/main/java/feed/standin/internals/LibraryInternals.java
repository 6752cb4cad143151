package feed.standin.internals;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.reflect.Field;
import java.lang.reflect.Method;

import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.AbstractMongoCollection;
import de.bwaldvogel.mongo.backend.ArrayFilters;
import de.bwaldvogel.mongo.backend.Utils;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.bson.BsonTimestamp;
import de.bwaldvogel.mongo.oplog.OplogCursor;
import de.bwaldvogel.mongo.oplog.OplogPosition;
import io.netty.channel.Channel;

/**
 * Every use of mongo-java-server's private or package-private members, kept in one place so that a library upgrade
 * has one file to check. All are resolved when this class loads, which {@link #verify()} forces at start: a library
 * version without them fails then, not later in the middle of a query.
 */
public final class LibraryInternals {
    // A change stream's position is not exposed: the oplog read needs it (see OplogCollection), and a database-wide
    // stream moves it past the entries its filter dropped (see DatabaseChangeStream).
    private static final Field CURSOR_POSITION = accessibleField(OplogCursor.class, "position");
    private static final Field POSITION_TIMESTAMP = accessibleField(OplogPosition.class, "timestamp");
    // The field indexes must call values equal exactly when the library's matcher does, so they use its normalisation.
    private static final MethodHandle NORMALIZE_VALUE = accessibleMethod(Utils.class, "normalizeValue", Object.class);
    // An update counts as a modification exactly when the library's equality says the document changed.
    private static final MethodHandle NULL_AWARE_EQUALS = accessibleMethod(Utils.class, "nullAwareEquals", Object.class, Object.class);

    // One matched document's update (apply, check and update the indexes, store), so that a collection can choose
    // the query its positional `$` element comes from and still update exactly as the library does.
    private static final MethodHandle UPDATE_DOCUMENT = accessibleMethod(AbstractMongoCollection.class, "updateDocument",
        Document.class, Document.class, ArrayFilters.class, Integer.class);

    // Read only: the listening channel, where each accepted connection can be given a handler before the library's.
    private static final Field SERVER_CHANNEL = accessibleField(MongoServer.class, "channel");

    private LibraryInternals() {
    }

    /** Loads this class, and so checks every member above. */
    public static void verify() {
    }

    /** The oplog timestamp a change-stream cursor has read up to. */
    public static long changeStreamPosition(OplogCursor cursor) {
        try {
            OplogPosition position = (OplogPosition) CURSOR_POSITION.get(cursor);
            return ((BsonTimestamp) POSITION_TIMESTAMP.get(position)).getValue();
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Moves a change-stream cursor on to {@code position}: its next read starts after it. */
    public static void moveChangeStream(OplogCursor cursor, OplogPosition position) {
        try {
            CURSOR_POSITION.set(cursor, position);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The channel a bound server accepts connections on. */
    public static Channel serverChannel(MongoServer server) {
        try {
            return (Channel) SERVER_CHANNEL.get(server);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The library's {@code Utils.normalizeValue}. */
    public static Object normalizeValue(Object value) {
        try {
            return NORMALIZE_VALUE.invoke(value);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The library's {@code AbstractMongoCollection.updateDocument}: applies {@code update} to {@code document} in place
     * ({@code positionalElement} is the array index the positional {@code $} stands for) and returns the document as it
     * was before. Its exceptions (duplicate keys, invalid updates) arrive unchanged.
     */
    public static Document updateDocument(AbstractMongoCollection<?> collection, Document document, Document update,
                                          ArrayFilters arrayFilters, Integer positionalElement) {
        try {
            return (Document) UPDATE_DOCUMENT.invoke(collection, document, update, arrayFilters, positionalElement);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }

    /** The library's {@code Utils.nullAwareEquals}. */
    public static boolean nullAwareEquals(Object a, Object b) {
        try {
            return (boolean) NULL_AWARE_EQUALS.invoke(a, b);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }

    private static Field accessibleField(Class<?> type, String name) {
        try {
            Field field = type.getDeclaredField(name);
            field.setAccessible(true);
            return field;
        } catch (NoSuchFieldException e) {
            throw changed(type, name, e);
        }
    }

    private static MethodHandle accessibleMethod(Class<?> type, String name, Class<?>... parameters) {
        try {
            Method method = type.getDeclaredMethod(name, parameters);
            method.setAccessible(true);
            return MethodHandles.lookup().unreflect(method);
        } catch (ReflectiveOperationException e) {
            throw changed(type, name, e);
        }
    }

    private static IllegalStateException changed(Class<?> type, String name, Exception cause) {
        return new IllegalStateException("mongo-java-server changed: " + type.getName() + "." + name + " is gone", cause);
    }
}
