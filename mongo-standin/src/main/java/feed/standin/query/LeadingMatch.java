package feed.standin.query;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

import de.bwaldvogel.mongo.bson.Document;

/**
 * The {@code $match} an {@code aggregate} command starts with, and the collection it reads. The library
 * runs every pipeline over the whole collection ({@code queryAllAsStream}), so a {@code countDocuments}
 * (an aggregate of {@code $match}, {@code $limit}, {@code $group}) by {@code _id} examined every document;
 * the fanout path counts one post by id per sub-task. {@link IndexedMemoryCollection#queryAllAsStream}
 * answers the pipeline's source with the documents the filter matches, found through the indexes like a
 * find; the {@code $match} stage then keeps them all, so the result is the library's. Filters with
 * {@code $expr} or variables are left to the library, whose query path does not know a pipeline's variables.
 */
public record LeadingMatch(String namespace, Document filter, Document command) {

    /** The leading match of this command, or null when it is not an aggregate that starts with a plain one. */
    public static LeadingMatch of(String databaseName, String command, Document query) {
        if (!command.equalsIgnoreCase("aggregate") || !(query.get(command) instanceof String collection)
            || !(query.get("pipeline") instanceof List<?> pipeline) || pipeline.isEmpty()
            || !(pipeline.get(0) instanceof Document first) || first.size() != 1
            || !(first.get("$match") instanceof Document filter) || filter.toString().contains("$expr")
            || filter.toString().contains("$$")
            // the collection's query entry point reads these keys as a wrapped query, not as fields
            || filter.containsKey("query") || filter.containsKey("$query")) {
            return null;
        }
        return new LeadingMatch(databaseName + "." + collection, filter,
            databaseName.equals("local") ? query : withoutProvedId(query, pipeline, filter));
    }

    /**
     * The command the library runs: the {@code $match} stage only sees documents the source already matched with
     * the whole filter, so it need not check an {@code _id} equality or {@code $in} of plain values again, which it
     * did value by value for every document (a {@code countDocuments} of 1,000 ids compared about a million
     * pairs). The rest of the filter stays, so the stage still keeps exactly what it kept. Every collection but
     * {@code local}'s oplog is an {@link IndexedMemoryCollection}, which answers the source through the filter.
     */
    private static Document withoutProvedId(Document query, List<?> pipeline, Document filter) {
        if (!filter.containsKey("_id") || QueryCheck.equalityValues(filter.get("_id"), true) == null) {
            return query;
        }
        List<Object> stages = new ArrayList<>(pipeline);
        stages.set(0, new Document("$match", Plan.without(filter, "_id")));
        Document command = new Document(query);
        command.put("pipeline", stages);
        return command;
    }

    /**
     * The aggregate running on the current thread. The library's aggregation asks the collection for its documents
     * with no parameter the filter could travel in, so the backend hands it over here around the command and the
     * collection takes it back on the same thread. One instance per backend, given to collections through their
     * constructors.
     */
    public static final class Scope {
        private final ThreadLocal<LeadingMatch> current = new ThreadLocal<>();

        public <T> T during(LeadingMatch match, Supplier<T> command) {
            current.set(match);
            try {
                return command.get();
            } finally {
                current.remove();
            }
        }

        /**
         * The filter if the running aggregate's source is {@code namespace}, else null. Taken once: a later stage
         * ({@code $lookup}, {@code $unionWith}) reading the same collection must see all of it.
         */
        Document takeFilter(String namespace) {
            LeadingMatch match = current.get();
            if (match == null || !match.namespace().equals(namespace)) {
                return null;
            }
            current.remove();
            return match.filter();
        }
    }
}
