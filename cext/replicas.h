/* ring-harness C core: the preference list of every point of a ring, for
 * replication (harness/core/replicas.py, through its binding
 * harness/core/native/replicas.py). */
#ifndef RING_HARNESS_REPLICAS_H
#define RING_HARNESS_REPLICAS_H

#include <stddef.h>
#include <stdint.h>

/* The most copies a preference list may hold (the scenario allows at most this). */
#define REPLICAS_MAX_COPIES 64

/* cffi:begin */
/* For each point i of a ring of n points (sorted by position), the owners of the
 * first `copies` points with distinct labels met walking clockwise from i
 * (i itself first, wrapping past the last point): table[i * copies + c].
 * labels[i] is what must differ (the owner itself, or the owner's zone).
 * The ring must hold at least `copies` distinct labels, and
 * 1 <= copies <= REPLICAS_MAX_COPIES; the caller checks both.
 * One sweep counter-clockwise over two turns keeps the first `copies` distinct labels
 * met from the current point in a move-to-front list: O(copies) per point. */
void replica_start_table(const uint16_t *labels, const uint16_t *owners, size_t n,
                         uint32_t copies, uint16_t *table);
/* cffi:end */

#endif
