/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bpf_array_write() on a real BPF array (BPF_F_MMAPABLE, as the unwind arena): bytes written at offsets that are
 * not page-aligned and across its slices read back as written through the map's own lookup, the rest of the map
 * untouched, a write past the end refused; and no page of the map stays in the process's RSS after a write, as a
 * mapping kept for the map's life would have it. Root only (exit 77 otherwise). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpf-array-write.h"

#define VALUE_SIZE 8
#define N_ENTRIES ((4u << 20) / VALUE_SIZE) /* 4 MiB: 16 slices */

static int failures;

#define CHECK(cond, ...)                                                                                       \
        do {                                                                                                   \
                if (!(cond)) {                                                                                 \
                        fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                   \
                        fprintf(stderr, __VA_ARGS__);                                                          \
                        fputc('\n', stderr);                                                                   \
                        failures++;                                                                            \
                }                                                                                              \
        } while (0)

static long rss_kib(void)
{
        FILE *f = fopen("/proc/self/status", "re");
        char line[256];
        long kib = -1;

        if (!f)
                return -1;
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
                        break;
        fclose(f);
        return kib;
}

/* The byte at offset i of a write: not a multiple of a page or a slice anywhere. */
static uint8_t pattern(size_t i)
{
        return (uint8_t)(i * 7 + 3);
}

int main(void)
{
        LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_MMAPABLE);
        size_t map_bytes = (size_t)N_ENTRIES * VALUE_SIZE;
        size_t offset = 3 * 4096 + 1000, n = 3 * BPF_ARRAY_WRITE_SLICE + 12345;
        uint8_t *src, value[VALUE_SIZE];
        long before, after;
        int fd, r;

        if (geteuid() != 0) {
                printf("SKIP: needs root for BPF\n");
                return 77;
        }
        fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "array_write", 4, VALUE_SIZE, N_ENTRIES, &opts);
        if (fd < 0) {
                printf("SKIP: cannot create a mappable BPF array: %s\n", strerror(errno));
                return 77;
        }
        src = malloc(n);
        if (!src)
                return 1;
        for (size_t i = 0; i < n; i++)
                src[i] = pattern(i);

        before = rss_kib();
        r = bpf_array_write(fd, map_bytes, offset, src, n);
        after = rss_kib();
        CHECK(r == 0, "write: %d", r);
        /* The map is 4 MiB: mapped for good, all of it would be in the RSS. */
        CHECK(after - before < 1024, "RSS %ld -> %ld KiB after the write", before, after);

        /* Every entry the write touched, and one on each side of it. */
        for (uint32_t key = offset / VALUE_SIZE - 1; key <= (offset + n) / VALUE_SIZE + 1; key++) {
                CHECK(bpf_map_lookup_elem(fd, &key, value) == 0, "lookup %u", key);
                for (size_t b = 0; b < VALUE_SIZE; b++) {
                        size_t at = (size_t)key * VALUE_SIZE + b;
                        uint8_t want = at >= offset && at < offset + n ? pattern(at - offset) : 0;
                        if (value[b] != want) {
                                CHECK(false, "byte %zu: %u, not %u", at, value[b], want);
                                key = UINT32_MAX - 1; /* one report is enough */
                                break;
                        }
                }
        }

        /* Up to the last byte, and not one past it. */
        CHECK(bpf_array_write(fd, map_bytes, map_bytes - 5, src, 5) == 0, "write at the end");
        CHECK(bpf_array_write(fd, map_bytes, map_bytes - 5, src, 6) == -ERANGE, "write past the end");
        CHECK(bpf_array_write(fd, map_bytes, map_bytes + 1, src, 0) == -ERANGE, "write after the end");
        {
                uint32_t key = N_ENTRIES - 1;
                CHECK(bpf_map_lookup_elem(fd, &key, value) == 0 && memcmp(value + 3, src, 5) == 0,
                      "the last entry's bytes");
        }

        free(src);
        close(fd);
        if (failures == 0)
                printf("bpf-array-write: %zu bytes at offset %zu read back; RSS %ld -> %ld KiB\n", n, offset, before,
                       after);
        return failures ? 1 : 0;
}
