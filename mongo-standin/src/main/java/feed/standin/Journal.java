package feed.standin;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.ArrayFilters;
import de.bwaldvogel.mongo.oplog.NoopOplog;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.wire.bson.BsonDecoder;
import de.bwaldvogel.mongo.wire.bson.BsonEncoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;

/**
 * Keeps the stand-in's data in a directory, so that {@code npm start} keeps accounts and posts across restarts.
 *
 * <p>The memory backend stays the store (with every customization of this stand-in); this class appends each change
 * to {@code journal.bson} as it happens, before the reply to the client is written: a document inserted, replaced or
 * removed (its full new state, by {@code _id}), or a command that changes the schema (create, createIndexes, drop,
 * dropIndexes, dropDatabase, renameCollection). Each entry is one {@code write(2)}, so an acknowledged change is in the
 * operating system's hands: a {@code kill -9} of the stand-in loses nothing acknowledged; a power cut can lose what the
 * system had not yet flushed (there is no {@code fsync} per write).
 *
 * <p>At start the journal is replayed into the empty backend, then compacted: rewritten as the current state (one
 * schema command and one insert per document), into a new file that replaces the old one atomically, so the journal
 * grows only until the next start. A torn last entry (the process died mid-write) is dropped. The {@code local}
 * database (the oplog behind change streams) is not kept: change streams start afresh after a restart.
 *
 * <p>A lock on {@code journal.lock} keeps a second stand-in from using the same directory.
 *
 * <p>The backend is given the journal when it is made, before the replay: the journal stays muted until
 * {@link #restoreInto} has finished, so replayed and compacted changes are not written twice.
 */
final class Journal implements ChangeRecorder {
    private static final Set<String> SCHEMA_COMMANDS =
        Set.of("create", "createindexes", "drop", "dropindexes", "dropdatabase", "renamecollection");
    private static final String FILE = "journal.bson";

    private final Path directory;
    private final FileChannel lockChannel;
    private final FileLock lock;
    private FileOutputStream out;
    /** True while replaying or compacting: those changes are already in the journal. */
    private boolean muted = true;
    private final EmbeddedChannel replayChannel = new EmbeddedChannel();

    private Journal(Path directory, FileChannel lockChannel, FileLock lock) {
        this.directory = directory;
        this.lockChannel = lockChannel;
        this.lock = lock;
    }

    /** Another stand-in holds the directory's lock. */
    static final class InUseException extends IOException {
        InUseException(Path directory) {
            super(directory + " is in use by another stand-in (journal.lock is held)");
        }
    }

    /** Locks the directory; fails with {@link InUseException} when another stand-in holds it. */
    static Journal open(Path directory) throws IOException {
        Files.createDirectories(directory);
        FileChannel channel = FileChannel.open(directory.resolve("journal.lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        FileLock lock;
        try {
            lock = channel.tryLock();
        } catch (OverlappingFileLockException e) {
            lock = null;
        }
        if (lock == null) {
            channel.close();
            throw new InUseException(directory);
        }
        return new Journal(directory, channel, lock);
    }

    /** Replays the journal into {@code backend}, rewrites it as the current state, and starts recording. */
    synchronized int restoreInto(StandInBackend backend) throws IOException {
        Path file = directory.resolve(FILE);
        int entries = 0;
        if (Files.exists(file)) {
            try (DataInputStream in = new DataInputStream(new BufferedInputStream(Files.newInputStream(file)))) {
                for (Document entry = read(in); entry != null; entry = read(in)) {
                    apply(backend, entry);
                    entries++;
                }
            }
        }
        compact(backend, file);
        muted = false;
        return entries;
    }

    @Override
    public void inserted(MongoCollection<?> collection, Document document) {
        record(collection, "insert", document);
    }

    @Override
    public void replaced(MongoCollection<?> collection, Document document) {
        record(collection, "replace", document);
    }

    @Override
    public void removed(MongoCollection<?> collection, Document document) {
        record(collection, "remove", new Document("_id", document.get("_id")));
    }

    @Override
    public void commandSucceeded(String database, String command, Document query) {
        if (!SCHEMA_COMMANDS.contains(command.toLowerCase()) || isTransient(database)) {
            return;
        }
        Document kept = new Document();
        for (String key : query.keySet()) {
            if (!key.startsWith("$") && !key.equals("lsid") && !key.equals("txnNumber")) {
                kept.put(key, query.get(key));
            }
        }
        append(new Document("op", "command").append("db", database).append("name", command).append("command", kept));
    }

    synchronized void close() {
        try {
            if (out != null) {
                out.close();
            }
            lock.release();
            lockChannel.close();
        } catch (IOException e) {
            System.err.println("mongo-standin: could not close the journal: " + e);
        }
    }

    private void record(MongoCollection<?> collection, String op, Document document) {
        if (isTransient(collection.getDatabaseName()) || collection.getCollectionName().startsWith("system.")) {
            return;
        }
        append(new Document("op", op).append("db", collection.getDatabaseName())
            .append("coll", collection.getCollectionName()).append("doc", document));
    }

    private static boolean isTransient(String database) {
        return database.equals("local") || database.equals("admin") || database.equals("config");
    }

    private synchronized void append(Document entry) {
        if (muted) {
            return;
        }
        try {
            out.write(encode(entry));
        } catch (IOException e) {
            // A change the journal cannot keep must not look kept: stop, as a database whose disk failed does.
            System.err.println("mongo-standin: could not write the journal, stopping: " + e);
            Runtime.getRuntime().halt(3);
        }
    }

    private void apply(StandInBackend backend, Document entry) {
        String op = (String) entry.get("op");
        String database = (String) entry.get("db");
        if (op.equals("command")) {
            backend.handleCommand(replayChannel, database, (String) entry.get("name"), (Document) entry.get("command"));
            return;
        }
        MongoDatabase db = backend.resolveDatabase(database);
        String name = (String) entry.get("coll");
        Document document = (Document) entry.get("doc");
        MongoCollection<?> collection = db.resolveCollection(name, false);
        if (collection == null) {
            if (op.equals("remove")) {
                return;
            }
            collection = db.createCollectionOrThrowIfExists(name);
        }
        Document byId = new Document("_id", document.get("_id"));
        switch (op) {
            case "insert" -> collection.addDocument(document);
            case "replace" -> collection.updateDocuments(byId, document, ArrayFilters.empty(), false, false, NoopOplog.get());
            case "remove" -> collection.deleteDocuments(byId, 1);
            default -> throw new IllegalStateException("unknown journal entry " + entry);
        }
    }

    /** Writes the current state to a new journal and swaps it in; later changes are appended to it. */
    private void compact(StandInBackend backend, Path file) throws IOException {
        Path next = directory.resolve(FILE + ".next");
        try (FileOutputStream snapshot = new FileOutputStream(next.toFile())) {
            for (String database : new ArrayList<>(backend.databaseNames())) {
                if (isTransient(database)) {
                    continue;
                }
                Document collections = backend.handleCommand(replayChannel, database, "listCollections", new Document("listCollections", 1));
                for (Document info : firstBatch(collections)) {
                    String name = (String) info.get("name");
                    if (name.startsWith("system.")) {
                        continue;
                    }
                    snapshot.write(encode(new Document("op", "command").append("db", database).append("name", "create")
                        .append("command", new Document("create", name))));
                    Document indexes = backend.handleCommand(replayChannel, database, "listIndexes", new Document("listIndexes", name));
                    List<Document> specs = new ArrayList<>();
                    for (Document index : firstBatch(indexes)) {
                        if (!"_id_".equals(index.get("name"))) {
                            Document spec = new Document(index);
                            spec.remove("v");
                            spec.remove("ns");
                            specs.add(spec);
                        }
                    }
                    if (!specs.isEmpty()) {
                        snapshot.write(encode(new Document("op", "command").append("db", database).append("name", "createIndexes")
                            .append("command", new Document("createIndexes", name).append("indexes", specs))));
                    }
                    MongoCollection<?> collection = backend.resolveDatabase(database).resolveCollection(name, false);
                    for (Document document : collection.queryAll()) {
                        snapshot.write(encode(new Document("op", "insert").append("db", database).append("coll", name).append("doc", document)));
                    }
                }
            }
            snapshot.getFD().sync();
        }
        Files.move(next, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        out = new FileOutputStream(file.toFile(), true);
    }

    @SuppressWarnings("unchecked")
    private static List<Document> firstBatch(Document response) {
        Document cursor = (Document) response.get("cursor");
        return cursor == null ? List.of() : (List<Document>) cursor.get("firstBatch");
    }

    private static byte[] encode(Document document) throws IOException {
        ByteBuf buffer = Unpooled.buffer();
        try {
            BsonEncoder.encodeDocument(document, buffer);
            byte[] bytes = new byte[buffer.readableBytes()];
            buffer.readBytes(bytes);
            return bytes;
        } finally {
            buffer.release();
        }
    }

    /** The next entry, or null at the end, including after a torn last entry. */
    private static Document read(DataInputStream in) throws IOException {
        byte[] header = new byte[4];
        try {
            in.readFully(header);
        } catch (EOFException e) {
            return null;
        }
        int length = (header[0] & 0xff) | (header[1] & 0xff) << 8 | (header[2] & 0xff) << 16 | (header[3] & 0xff) << 24;
        if (length < 5) {
            return null;
        }
        byte[] entry = new byte[length];
        System.arraycopy(header, 0, entry, 0, 4);
        try {
            in.readFully(entry, 4, length - 4);
        } catch (EOFException e) {
            return null;
        }
        ByteBuf buffer = Unpooled.wrappedBuffer(entry);
        try {
            return BsonDecoder.decodeBson(buffer);
        } finally {
            buffer.release();
        }
    }
}
