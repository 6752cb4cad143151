package feed.standin.query;

import java.util.BitSet;
import java.util.Map;

import de.bwaldvogel.mongo.bson.Document;

/** Candidate positions (ascending, distinct) and how to check them. */
final class Plan {
    final int[] positions;
    /** The query without the predicate the candidates came from. */
    final Document reducedQuery;
    /** Positions at which that predicate is known to hold (null: all), so {@link #reducedQuery} suffices. */
    private final BitSet knownTrue;

    Plan(int[] positions, Document reducedQuery, BitSet knownTrue) {
        this.positions = positions;
        this.reducedQuery = reducedQuery;
        this.knownTrue = knownTrue;
    }

    boolean knownTrue(int position) {
        return knownTrue == null || knownTrue.get(position);
    }

    static Document without(Document query, String field) {
        Document reduced = new Document();
        for (Map.Entry<String, Object> entry : query.entrySet()) {
            if (!entry.getKey().equals(field)) {
                reduced.put(entry.getKey(), entry.getValue());
            }
        }
        return reduced;
    }
}
