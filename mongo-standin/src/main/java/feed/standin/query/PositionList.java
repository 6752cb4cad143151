package feed.standin.query;

import java.util.Arrays;
import java.util.Collection;

/** A growable int list, so candidate positions are not boxed. */
final class PositionList {
    private int[] values = new int[8];
    private int size;

    void add(int value) {
        if (size == values.length) {
            values = Arrays.copyOf(values, size * 2);
        }
        values[size++] = value;
    }

    void addAll(Collection<Integer> more) {
        for (Integer value : more) {
            add(value);
        }
    }

    int[] sortedDistinct() {
        int[] sorted = Arrays.copyOf(values, size);
        Arrays.sort(sorted);
        int distinct = 0;
        for (int i = 0; i < sorted.length; i++) {
            if (i == 0 || sorted[i] != sorted[i - 1]) {
                sorted[distinct++] = sorted[i];
            }
        }
        return Arrays.copyOf(sorted, distinct);
    }
}
