/* ring-harness C core: large arrays on pages the kernel may back with huge pages.
 *
 * A ring of millions of entries is read at random, one entry a key: with 4 KiB pages
 * nearly every such read also misses the TLB and walks the page table; with 2 MiB pages
 * nearly none does. Linux backs anonymous memory with transparent huge pages where it
 * was advised (madvise(MADV_HUGEPAGE)) before it was first written, and numpy gives that
 * advice for each array of 4 MiB or more. But malloc often carves a large block from
 * heap pages written before, which are small pages already, so whether a ring or the
 * memory floor got huge pages depended on what the process had allocated and freed
 * earlier: the floor's 40 MB array read at 11 ns a key in one run and 18 ns in the next
 * (AMD EPYC). An array from here of 4 MiB or more is always a fresh mapping of its own,
 * advised before it is written. Bound in Python by harness/core/native/_c.py
 * (large_array), which the C layouts' entries and the floor's array come from.
 */
#ifndef RING_HARNESS_ADVISED_ALLOC_H
#define RING_HARNESS_ADVISED_ALLOC_H

#include <stddef.h>

/* Arrays of this many bytes and more get a mapping of their own, advised (4 MiB, as
 * numpy's advice). */
#define RING_HUGE_PAGES_FROM ((size_t)1 << 22)

/* `size` zeroed bytes, 64-byte aligned, or NULL. From RING_HUGE_PAGES_FROM on, a fresh
 * anonymous mapping advised for huge pages (where the kernel allows it: with transparent
 * huge pages "never", or off Linux, they are small pages, as before); below it, from
 * posix_memalign.
 * Both are seen by allocator profilers (memray records mmap as it records malloc). */
void *ring_advised_alloc(size_t size);
/* Frees what ring_advised_alloc returned (NULL is ignored). */
void ring_advised_free(void *array);

#endif
