package feed.standin.query;

import java.util.BitSet;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import de.bwaldvogel.mongo.backend.Missing;
import de.bwaldvogel.mongo.bson.Document;
import feed.standin.internals.LibraryInternals;

/**
 * Positions of documents by the values at one path, following the library's matcher
 * ({@code DefaultQueryMatcher}) so that every document the matcher could find equal to a value (or {@code $in}
 * one of several) is listed under that value:
 * <ul>
 *   <li>an array met on the way is entered element by element (nested arrays too), with the same remaining
 *       path;</li>
 *   <li>at the end, an array contributes each element (and, a superset, the elements of nested arrays);</li>
 *   <li>a missing field, a null, or a path that runs into a scalar give the null key (the matcher compares those
 *       as missing, and {@code null} equals missing);</li>
 *   <li>keys are the library's own normalised values ({@code Utils.normalizeValue}: every number as a double
 *       unless a long would lose precision, documents field-order-sensitive), so a hash lookup finds exactly the
 *       values the matcher's {@code nullAwareEquals} calls equal.</li>
 * </ul>
 * A document whose path met no array and ended in a non-array value is "simple": there the matcher's result for
 * an equality/{@code $in} predicate on this path is exactly "its key is one of the queried keys".
 */
final class FieldIndex {
    private static final Object NULL_KEY = new Object() {
        @Override
        public String toString() {
            return "null/missing";
        }
    };
    private static final Object NO_KEYS = new Object[0];

    private final String[] segments;
    private final Map<Object, Set<Integer>> positionsByKey = new HashMap<>();
    /** Position → its key (Object) or keys (Object[]), as indexed. */
    private final Map<Integer, Object> keysByPosition = new HashMap<>();
    private final BitSet simple = new BitSet();

    FieldIndex(String path) {
        this.segments = path.split("\\.", -1);
    }

    /** Paths the matcher walks plainly: no empty, numeric or $ segment. */
    static boolean isSupportedPath(String path) {
        for (String segment : path.split("\\.", -1)) {
            if (segment.isEmpty() || segment.startsWith("$") || segment.chars().allMatch(Character::isDigit)) {
                return false;
            }
        }
        return true;
    }

    void add(int position, Document document) {
        KeyCollector keys = new KeyCollector();
        walk(document, 0, keys);
        Object stored;
        if (keys.single != null && keys.more == null) {
            stored = keys.single;
            index(keys.single, position);
        } else if (keys.more != null) {
            stored = keys.more.toArray();
            for (Object key : keys.more) {
                index(key, position);
            }
        } else {
            stored = NO_KEYS;
        }
        keysByPosition.put(position, stored);
        simple.set(position, keys.simple && keys.more == null && keys.single != null);
    }

    void remove(int position) {
        Object stored = keysByPosition.remove(position);
        if (stored instanceof Object[] keys) {
            for (Object key : keys) {
                unindex(key, position);
            }
        } else if (stored != null) {
            unindex(stored, position);
        }
        simple.clear(position);
    }

    private void index(Object key, int position) {
        positionsByKey.computeIfAbsent(key, k -> new HashSet<>(4)).add(position);
    }

    private void unindex(Object key, int position) {
        Set<Integer> positions = positionsByKey.get(key);
        if (positions != null) {
            positions.remove(position);
            if (positions.isEmpty()) {
                positionsByKey.remove(key);
            }
        }
    }

    Plan plan(Document query, String field, List<Object> values) {
        PositionList positions = new PositionList();
        for (Object value : values) {
            Set<Integer> found = positionsByKey.get(key(value));
            if (found != null) {
                positions.addAll(found);
            }
        }
        return new Plan(positions.sortedDistinct(), Plan.without(query, field), simple);
    }

    private void walk(Object value, int depth, KeyCollector keys) {
        if (value instanceof List<?> list) { // the matcher tries each element with the same remaining path
            keys.simple = false;
            for (Object element : list) {
                walk(element, depth, keys);
            }
            return;
        }
        Object child = value instanceof Document document ? document.getOrMissing(segments[depth]) : null;
        if (depth < segments.length - 1) {
            walk(child, depth + 1, keys);
        } else if (child instanceof Collection<?> values) {
            keys.simple = false;
            addElements(values, keys);
        } else {
            keys.add(key(child));
        }
    }

    private static void addElements(Collection<?> values, KeyCollector keys) {
        for (Object element : values) {
            if (element instanceof Collection<?> nested) {
                addElements(nested, keys);
            } else {
                keys.add(key(element));
            }
        }
    }

    static Object key(Object value) {
        return Missing.isNullOrMissing(value) ? NULL_KEY : LibraryInternals.normalizeValue(value);
    }

    /** The keys of one document; most have exactly one, so no set is made for them. */
    private static final class KeyCollector {
        Object single;
        Set<Object> more;
        boolean simple = true;

        void add(Object key) {
            if (single == null) {
                single = key;
            } else if (more != null) {
                more.add(key);
            } else if (!single.equals(key)) {
                more = new LinkedHashSet<>();
                more.add(single);
                more.add(key);
            }
        }
    }
}
