package feed.standin.query;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import de.bwaldvogel.mongo.bson.BsonRegularExpression;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.bson.ObjectId;

/** Which filters the index path takes, and the values of an equality predicate. */
final class QueryCheck {
    private QueryCheck() {
    }

    /**
     * The values a top-level predicate requires the field to equal (one of), or null if it is not a plain
     * equality, {@code $eq} or {@code $in} of value types whose equality the index reproduces exactly.
     */
    static List<Object> equalityValues(Object predicate, boolean isId) {
        if (predicate instanceof Document document && !BsonRegularExpression.isRegularExpression(document)) {
            Set<String> operators = document.keySet();
            if (operators.equals(Set.of("$eq"))) {
                Object value = document.get("$eq");
                return isKeyValue(value, isId) ? Collections.singletonList(value) : null;
            }
            if (operators.equals(Set.of("$in"))) {
                if (!(document.get("$in") instanceof List<?> values)) {
                    return null;
                }
                for (Object value : values) {
                    if (!isKeyValue(value, isId)) {
                        return null;
                    }
                }
                return new ArrayList<>(values);
            }
            // {_id: {...}} is document equality; elsewhere the matcher also compares it field by field
            return isId && isPlainDocument(document) ? List.of(document) : null;
        }
        return isKeyValue(predicate, isId) ? Collections.singletonList(predicate) : null;
    }

    /** Scalars with a symmetric equals/hashCode; null (= missing) except for _id; plain documents for _id. */
    private static boolean isKeyValue(Object value, boolean isId) {
        if (value == null) {
            return !isId;
        }
        if (value instanceof Document document) {
            return isId && isPlainDocument(document);
        }
        return isScalar(value);
    }

    private static boolean isScalar(Object value) {
        return value instanceof String || value instanceof Integer || value instanceof Long
            || value instanceof Double || value instanceof Boolean || value instanceof ObjectId
            || value instanceof Instant || value instanceof UUID;
    }

    /**
     * Non-empty, no $ keys, only non-null scalars and plain documents inside: the matcher compares such a value
     * with a non-document field field by field and never finds it equal, and with a document exactly.
     */
    private static boolean isPlainDocument(Document document) {
        if (document.isEmpty()) {
            return false;
        }
        for (Map.Entry<String, Object> entry : document.entrySet()) {
            if (entry.getKey().startsWith("$")) {
                return false;
            }
            Object value = entry.getValue();
            if (value instanceof Document nested ? !isPlainDocument(nested) : value == null || !isScalar(value)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Whether the index path may take this filter. A full scan raises the matcher's errors for malformed
     * filters (unknown operators, {@code $and} without an array, {@code $in} without an array, ...) as soon as a
     * document reaches them; narrowing could skip those documents and hide the error. So only filters made of
     * well-formed, known operators are narrowed; anything else keeps the library's path.
     */
    static boolean isSupportedQuery(Document query) {
        for (Map.Entry<String, Object> entry : query.entrySet()) {
            String key = entry.getKey();
            Object value = entry.getValue();
            if (key.startsWith("$")) {
                switch (key) {
                    case "$and", "$or", "$nor" -> {
                        if (!isQueryList(value)) {
                            return false;
                        }
                    }
                    case "$comment" -> {
                    }
                    default -> {
                        return false; // $expr, $where, $text, unknown
                    }
                }
            } else if (!isSupportedPredicate(value)) {
                return false;
            }
        }
        return true;
    }

    private static boolean isQueryList(Object value) {
        if (!(value instanceof List<?> list) || list.isEmpty()) {
            return false;
        }
        for (Object element : list) {
            if (!(element instanceof Document document) || !isSupportedQuery(document)) {
                return false;
            }
        }
        return true;
    }

    private static boolean isSupportedPredicate(Object value) {
        if (!(value instanceof Document document) || BsonRegularExpression.isRegularExpression(value)) {
            return true;
        }
        for (Map.Entry<String, Object> entry : document.entrySet()) {
            String operator = entry.getKey();
            Object argument = entry.getValue();
            if (!operator.startsWith("$")) {
                if (!isSupportedPredicate(argument)) { // field-by-field comparison of a query document
                    return false;
                }
                continue;
            }
            boolean ok = switch (operator) {
                case "$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$exists" -> true;
                case "$in", "$nin", "$all" -> argument instanceof List<?>;
                case "$size" -> argument instanceof Number;
                case "$elemMatch" -> argument instanceof Document elemMatch && isSupportedElemMatch(elemMatch);
                case "$not" -> argument instanceof BsonRegularExpression
                    || argument instanceof Document not && isSupportedPredicate(not);
                default -> false; // $type, $mod, $regex documents, $ref/$id, geo, unknown
            };
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    /** $elemMatch holds either operators on the element or a query on its fields (or a mix). */
    private static boolean isSupportedElemMatch(Document elemMatch) {
        if (elemMatch.isEmpty()) {
            return false;
        }
        for (Map.Entry<String, Object> entry : elemMatch.entrySet()) {
            String key = entry.getKey();
            Object value = entry.getValue();
            boolean ok;
            if (key.equals("$and") || key.equals("$or") || key.equals("$nor")) {
                ok = isQueryList(value);
            } else if (key.startsWith("$")) {
                ok = isSupportedPredicate(new Document(key, value));
            } else {
                ok = isSupportedPredicate(value);
            }
            if (!ok) {
                return false;
            }
        }
        return true;
    }
}
