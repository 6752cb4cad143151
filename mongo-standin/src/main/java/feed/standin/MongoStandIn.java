package feed.standin;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.MongoVersion;
import feed.standin.internals.LibraryInternals;

/**
 * In-memory MongoDB wire-protocol stand-in (mongo-java-server) for development and tests: the command line and the
 * server's lifecycle. What the server does differently from the library is described in {@link StandInBackend}.
 *
 * <p>Usage: {@code java -jar mongo-standin.jar [--port N] [--host H] [--data-dir DIR] [--ignore-stdin]}
 *
 * <ul>
 *   <li>{@code --port} TCP port, default 0 (ephemeral)</li>
 *   <li>{@code --host} bind address, default 127.0.0.1</li>
 *   <li>{@code --data-dir} keep the data in this directory (see {@link Journal})</li>
 *   <li>{@code --ignore-stdin} do not stop when stdin reaches EOF (for manual/background runs)</li>
 * </ul>
 *
 * <p>Prints exactly one line to stdout once listening: {@code MONGODB_URI=mongodb://127.0.0.1:<port>}.
 * Stops on SIGTERM/SIGINT and when stdin reaches EOF, so that it never outlives its parent process.
 * All logging goes to stderr at WARN level or above.
 *
 * <p>Exit codes: 2 for a bad argument, a failed bind or an unusable data directory; {@value #EXIT_DATA_DIR_IN_USE}
 * when another stand-in holds the data directory, so that a launcher can explain that without parsing stderr.
 */
public final class MongoStandIn {
    static final int EXIT_DATA_DIR_IN_USE = 4;

    /** Reports MongoDB 6.0 (wire version 17); the Node driver 7.x rejects servers below wire version 9. */
    private static final MongoVersion MONGO_6_0 = new MongoVersion() {
        @Override
        public List<Integer> getVersionArray() {
            return List.of(6, 0, 0);
        }

        @Override
        public String toVersionString() {
            return "6.0.0";
        }

        @Override
        public int getWireVersion() {
            return 17;
        }
    };

    private record Options(String host, int port, boolean watchStdin, String dataDir) {
    }

    private MongoStandIn() {
    }

    public static void main(String[] args) {
        configureLogging();
        LibraryInternals.verify(); // a library version without the members this stand-in reads fails here, not mid-query
        Options options = parse(args);

        Journal journal = options.dataDir() == null ? null : openJournal(Path.of(options.dataDir()));
        StandInBackend backend = new StandInBackend(journal == null ? ChangeRecorder.NONE : journal);
        backend.version(MONGO_6_0);
        MongoServer server = new MongoServer(backend);
        server.enableOplog(); // change streams need the oplog
        if (journal != null) {
            restore(journal, backend, options.dataDir());
        }

        try {
            server.bind(options.host(), options.port());
        } catch (Exception e) { // Netty rethrows checked exceptions such as BindException sneakily
            fail("failed to listen on " + options.host() + ":" + options.port() + ": " + e);
        }
        QuietDisconnects.installOnAccept(LibraryInternals.serverChannel(server));

        AtomicBoolean stopped = new AtomicBoolean(false);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> stop(server, journal, stopped), "mongo-standin-shutdown"));
        announce(server, options.host());

        if (options.watchStdin()) {
            // Block until the parent closes our stdin (or dies), then exit; the shutdown hook stops the server.
            waitForEof(System.in);
            System.exit(0);
        }
        // Otherwise Netty's non-daemon event loop threads keep the JVM alive until a signal arrives.
    }

    private static Options parse(String[] args) {
        String host = "127.0.0.1";
        int port = 0;
        boolean watchStdin = true;
        String dataDir = null;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            switch (arg) {
                case "--port" -> port = parsePort(requireValue(args, ++i, arg));
                case "--data-dir" -> dataDir = requireValue(args, ++i, arg);
                case "--host" -> host = requireValue(args, ++i, arg);
                case "--ignore-stdin" -> watchStdin = false;
                case "--help", "-h" -> {
                    System.err.println("usage: java -jar mongo-standin.jar [--port N] [--host H] [--data-dir DIR] [--ignore-stdin]");
                    System.exit(0);
                }
                default -> {
                    if (arg.startsWith("--port=")) {
                        port = parsePort(arg.substring("--port=".length()));
                    } else if (arg.startsWith("--host=")) {
                        host = arg.substring("--host=".length());
                    } else {
                        fail("unknown argument: " + arg);
                    }
                }
            }
        }
        return new Options(host, port, watchStdin, dataDir);
    }

    private static Journal openJournal(Path dataDir) {
        try {
            return Journal.open(dataDir);
        } catch (Journal.InUseException e) {
            System.err.println("mongo-standin: " + e.getMessage());
            System.exit(EXIT_DATA_DIR_IN_USE);
        } catch (IOException e) {
            fail("cannot use the data directory: " + e.getMessage());
        }
        return null; // unreachable
    }

    private static void restore(Journal journal, StandInBackend backend, String dataDir) {
        try {
            int entries = journal.restoreInto(backend);
            System.err.println("mongo-standin: restored " + entries + " journal entries from " + dataDir);
        } catch (IOException e) {
            fail("cannot use the data directory: " + e.getMessage());
        }
    }

    private static void announce(MongoServer server, String host) {
        InetSocketAddress address = server.getLocalAddress();
        String uriHost = isWildcard(host) ? "127.0.0.1" : hostForUri(address.getHostString());
        PrintStream out = System.out;
        out.println("MONGODB_URI=mongodb://" + uriHost + ":" + address.getPort());
        out.flush();
    }

    private static void configureLogging() {
        // slf4j-simple: quiet by default, everything to stderr; -D overrides still win.
        setDefault("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        setDefault("org.slf4j.simpleLogger.logFile", "System.err");
        // "Closing N clients" on shutdown is expected, not a warning for us.
        setDefault("org.slf4j.simpleLogger.log.de.bwaldvogel.mongo.MongoServer", "error");
        // Warns on every createIndex of a non-unique index ("secondary index ... not yet implemented").
        setDefault("org.slf4j.simpleLogger.log.de.bwaldvogel.mongo.backend.AbstractMongoDatabase", "error");
        // Logs a stack trace for every command that fails (duplicate key in findAndModify, unsupported
        // stage, ...). The same error is always returned to the client, so the trace is just noise.
        setDefault("org.slf4j.simpleLogger.log.de.bwaldvogel.mongo.wire.MongoWireProtocolHandler", "off");
        // Clients that disconnect abruptly are silenced by QuietDisconnects, not here: other exceptions stay visible.
    }

    private static void setDefault(String key, String value) {
        if (System.getProperty(key) == null) {
            System.setProperty(key, value);
        }
    }

    private static void waitForEof(InputStream in) {
        byte[] buffer = new byte[256];
        try {
            while (in.read(buffer) != -1) {
                // input is ignored; only EOF matters
            }
        } catch (IOException e) {
            // a broken stdin means the parent is gone as well
        }
    }

    private static void stop(MongoServer server, Journal journal, AtomicBoolean stopped) {
        if (stopped.compareAndSet(false, true)) {
            try {
                server.shutdownNow();
            } catch (RuntimeException e) {
                System.err.println("mongo-standin: error during shutdown: " + e);
            }
            if (journal != null) {
                journal.close();
            }
        }
    }

    private static boolean isWildcard(String host) {
        return host.equals("0.0.0.0") || host.equals("::") || host.equals("[::]");
    }

    private static String hostForUri(String host) {
        return host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
    }

    private static String requireValue(String[] args, int index, String flag) {
        if (index >= args.length) {
            fail("missing value for " + flag);
        }
        return args[index];
    }

    private static int parsePort(String value) {
        try {
            int port = Integer.parseInt(value);
            if (port < 0 || port > 65535) {
                fail("port out of range: " + value);
            }
            return port;
        } catch (NumberFormatException e) {
            fail("invalid port: " + value);
            return -1; // unreachable
        }
    }

    private static void fail(String message) {
        System.err.println("mongo-standin: " + message);
        System.exit(2);
    }
}
