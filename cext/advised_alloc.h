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
 * (AMD EPYC). So an array from here of 4 MiB or more is advised before it is written,
 * and from 32 MiB on it is a fresh mapping of its own, whatever the heap holds. Below
 * 32 MiB it comes from malloc, advised: glibc serves blocks under its largest mmap
 * threshold (32 MiB) from the heap once a large block has been freed, and a mapping of
 * our own there would make every build fault in fresh pages that the heap had ready (a
 * ring of 1M entries built in 1.5 ms instead of 1.1); at 32 MiB and more glibc maps a
 * block afresh anyway unless a freed heap block fits, so the own mapping costs no
 * faults that were not paid before, and makes the rings and the memory floor of 10M
 * entries (40 to 80 MB) sure of their huge pages. Bound in Python by
 * harness/core/native/_c.py (large_array), which the C layouts' entries and the floor's
 * array come from.
 */
#ifndef RING_HARNESS_ADVISED_ALLOC_H
#define RING_HARNESS_ADVISED_ALLOC_H

#include <stddef.h>

/* Arrays of this many bytes and more are advised for huge pages (4 MiB, as numpy's). */
#define RING_HUGE_PAGES_FROM ((size_t)1 << 22)
/* Arrays of this many bytes and more get a fresh mapping of their own (32 MiB: glibc's
 * largest mmap threshold on 64-bit systems). */
#define RING_OWN_MAPPING_FROM ((size_t)1 << 25)

/* cffi:begin */
/* `size` zeroed bytes, 64-byte aligned, or NULL: from posix_memalign, advised for huge
 * pages before they are written from RING_HUGE_PAGES_FROM on; from RING_OWN_MAPPING_FROM
 * on, a fresh anonymous mapping, advised. The advice counts where the kernel allows it
 * (with transparent huge pages "never", or off Linux, the pages are small, as before).
 * Both are seen by allocator profilers (memray records mmap as it records malloc). */
void *ring_advised_alloc(size_t size);
/* Frees what ring_advised_alloc returned (NULL is ignored). */
void ring_advised_free(void *array);
/* cffi:end */

#endif
