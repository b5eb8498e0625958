#define _DEFAULT_SOURCE /* mmap's MAP_ANONYMOUS and madvise under -std=c99 */
#include "advised_alloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

/* Before each array: how it was allocated and its whole length, so that free needs
 * only the pointer (cffi's allocator calls free with nothing else). One cache line, so
 * the array after it starts on one. */
struct advised_header {
    size_t length; /* bytes mapped or allocated, the header included */
    int mapped;    /* 1: mmap, 0: posix_memalign */
};
#define HEADER_BYTES ((size_t)64)

/* Advises the whole pages inside [block, block + length) for huge pages, from
 * RING_HUGE_PAGES_FROM bytes on (the kernel backs only the 2 MiB-aligned runs inside). */
static void advise_huge_pages(void *block, size_t length)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (length < RING_HUGE_PAGES_FROM)
        return;
    uintptr_t page = 4096, first = ((uintptr_t)block + page - 1) & ~(page - 1);
    uintptr_t end = ((uintptr_t)block + length) & ~(page - 1);
    /* Advice only: refused (EINVAL where huge pages are compiled out), the block is
     * still good, on small pages. */
    if (end > first)
        (void)madvise((void *)first, end - first, MADV_HUGEPAGE);
#else
    (void)block;
    (void)length;
#endif
}

void *ring_advised_alloc(size_t size)
{
    if (size > SIZE_MAX - HEADER_BYTES)
        return NULL;
    size_t length = size + HEADER_BYTES;
    struct advised_header *header = NULL;
    int mapped = 0;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (size >= RING_OWN_MAPPING_FROM) {
        void *mapping = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                             -1, 0);
        if (mapping == MAP_FAILED)
            return NULL;
        advise_huge_pages(mapping, length);
        header = mapping;
        mapped = 1;
    }
#endif
    if (!mapped) {
        void *block = NULL;
        if (posix_memalign(&block, HEADER_BYTES, length) != 0)
            return NULL;
        advise_huge_pages(block, length);
        memset(block, 0, length); /* after the advice: the first write faults the pages in */
        header = block;
    }
    header->length = length;
    header->mapped = mapped;
    return (char *)header + HEADER_BYTES;
}

void ring_advised_free(void *array)
{
    if (array == NULL)
        return;
    struct advised_header *header = (void *)((char *)array - HEADER_BYTES);
#if defined(__linux__)
    if (header->mapped) {
        munmap(header, header->length);
        return;
    }
#endif
    free(header);
}
