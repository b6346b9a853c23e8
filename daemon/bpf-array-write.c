/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bpf-array-write.h"
#include "macros.h"

int bpf_array_write(int map_fd, size_t map_bytes, size_t offset, const void *src, size_t n)
{
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        size_t mappable = (map_bytes + page - 1) / page * page;
        const uint8_t *from = src;

        if (offset > map_bytes || n > map_bytes - offset)
                return -ERANGE;
        while (n > 0) {
                /* The mapping starts on the page of offset: a file offset must be a multiple of the page. */
                size_t start = offset / page * page;
                size_t skip = offset - start;
                size_t len = MIN(n, BPF_ARRAY_WRITE_SLICE - skip);
                size_t map_len = MIN((skip + len + page - 1) / page * page, mappable - start);
                uint8_t *p = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, (off_t)start);

                if (p == MAP_FAILED)
                        return -errno;
                memcpy(p + skip, from, len);
                (void)munmap(p, map_len);
                from += len;
                offset += len;
                n -= len;
        }
        return 0;
}
