#include "replicas.h"

void replica_start_table(const uint16_t *labels, const uint16_t *owners, size_t n,
                         uint32_t copies, uint16_t *table) {
    /* Nearest first: the labels of the first `size` distinct labels met clockwise from
     * the point last swept, and the owner met first in each. */
    uint16_t front_label[REPLICAS_MAX_COPIES];
    uint16_t front_owner[REPLICAS_MAX_COPIES];
    uint32_t size = 0;
    /* The first turn (steps n .. 2n-1) only fills the list: once a whole turn is swept,
     * every label of the ring has been met. */
    for (size_t step = 2 * n; step-- > 0;) {
        size_t i = step % n;
        uint16_t label = labels[i];
        uint32_t p = 0;
        while (p < size && front_label[p] != label) {
            p++;
        }
        if (p == size) { /* a label not in the list: it grows, or its last entry drops */
            if (size < copies) {
                size++;
            }
            p = size - 1;
        }
        for (uint32_t q = p; q > 0; q--) {
            front_label[q] = front_label[q - 1];
            front_owner[q] = front_owner[q - 1];
        }
        front_label[0] = label;
        front_owner[0] = owners[i];
        if (step < n) {
            for (uint32_t q = 0; q < copies; q++) {
                table[i * copies + q] = front_owner[q];
            }
        }
    }
}
