/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz-input.h"
#include "macros.h"

int fuzz_seeds_main(int (*write_seeds)(const char *dir))
{
        const char *dir = getenv("VPROF_FUZZ_WRITE_SEEDS");

        if (!dir || !*dir)
                return 0;
        exit(write_seeds(dir) < 0 ? EXIT_FAILURE : EXIT_SUCCESS);
}

static int write_all(int fd, const void *data, size_t size)
{
        const uint8_t *p = data;

        while (size > 0) {
                ssize_t n = write(fd, p, size);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return n < 0 ? negative_errno() : -EIO;
                p += n;
                size -= (size_t)n;
        }
        return 0;
}

int fuzz_write_file(const char *dir, const char *name, const void *data, size_t size)
{
        _cleanup_close_ int fd = -1;
        char path[PATH_MAX];
        int r;

        if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
                return -ENAMETOOLONG;
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return negative_errno();
        r = write_all(fd, data, size);
        if (r < 0)
                fprintf(stderr, "Cannot write %s: %s\n", path, strerror(-r));
        return r;
}

int fuzz_copy_file(const char *path, size_t max, const char *dir, const char *name)
{
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        _cleanup_free_ char *buf = NULL;
        size_t size = 0, allocated = 0;

        if (!f)
                return negative_errno();
        for (;;) {
                size_t n;

                if (size == allocated) {
                        char *b;

                        allocated = MAX(allocated * 2, (size_t)65536);
                        b = realloc(buf, allocated);
                        if (!b)
                                return -ENOMEM;
                        buf = b;
                }
                n = fread(buf + size, 1, allocated - size, f);
                if (n == 0)
                        break;
                size += n;
                if (max > 0 && size >= max) {
                        size = max;
                        break;
                }
        }
        return fuzz_write_file(dir, name, buf, size);
}

const uint8_t *fuzz_vdso(size_t *ret_size)
{
        const uint8_t *vdso = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
        const ElfW(Ehdr) *ehdr = (const ElfW(Ehdr) *)vdso;
        size_t size = 0;

        if (!vdso)
                return NULL;
        for (unsigned i = 0; i < ehdr->e_phnum; i++) {
                const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(vdso + ehdr->e_phoff) + i;

                if (ph->p_type == PT_LOAD)
                        size = MAX(size, (size_t)(ph->p_offset + ph->p_filesz));
        }
        /* The section headers come after the segment, in the same page. */
        size = MAX(size, (size_t)(ehdr->e_shoff + (size_t)ehdr->e_shnum * ehdr->e_shentsize));
        *ret_size = size;
        return size > 0 ? vdso : NULL;
}

int fuzz_memfd(const uint8_t *data, size_t size)
{
        int fd = memfd_create("fuzz-input", MFD_CLOEXEC);

        if (fd < 0)
                return -1;
        if (write_all(fd, data, size) < 0) {
                close(fd);
                return -1;
        }
        return fd;
}

uint64_t fuzz_word(const uint8_t *data, size_t size, size_t i)
{
        uint64_t v = 0;

        if (size < 8 * (i + 1))
                return 0;
        memcpy(&v, data + size - 8 * (i + 1), sizeof(v));
        return v;
}

typedef struct Writer {
        uint8_t *buf;
        size_t size, n;
} Writer;

static void put(Writer *w, const void *p, size_t n)
{
        if (n > 0 && n <= w->size && w->n <= w->size - n)
                memcpy(w->buf + w->n, p, n);
        w->n += n;
}

static void put_le(Writer *w, uint64_t v, size_t n)
{
        for (size_t i = 0; i < n; i++)
                put(w, &(uint8_t) { (uint8_t)(v >> (8 * i)) }, 1);
}

static void patch_le(Writer *w, size_t at, uint64_t v, size_t n)
{
        for (size_t i = 0; i < n && at + i < w->size; i++)
                w->buf[at + i] = (uint8_t)(v >> (8 * i));
}

/* A record's length and id (a CIE's all ones, an FDE's the offset of its CIE); the offset of its id field.
 */
static size_t record(Writer *w, bool dwarf64, uint64_t id)
{
        if (dwarf64)
                put_le(w, UINT32_MAX, 4);
        put_le(w, 0, dwarf64 ? 8 : 4);
        put_le(w, id, dwarf64 ? 8 : 4);
        return w->n - (dwarf64 ? 8 : 4);
}

static void record_end(Writer *w, bool dwarf64, size_t id_at)
{
        size_t len_at = id_at - (dwarf64 ? 8 : 4);

        patch_le(w, len_at, w->n - id_at, dwarf64 ? 8 : 4);
}

static size_t cie(Writer *w, bool dwarf64)
{
        /* Code alignment 1, data alignment -8, the return address in column 16 at CFA - 8, CFA = rsp + 8. */
        static const uint8_t body[] = { 1, 0x78, 16, 0x0c, 0x07, 0x08, 0x90, 0x01 };
        size_t id_at = record(w, dwarf64, dwarf64 ? UINT64_MAX : UINT32_MAX);

        put(w, dwarf64 ? (const uint8_t[]) { 4, 0, 8, 0 } : (const uint8_t[]) { 1, 0 }, dwarf64 ? 4 : 2);
        put(w, body, sizeof(body));
        record_end(w, dwarf64, id_at);
        return id_at - (dwarf64 ? 12 : 4);
}

static size_t fde(Writer *w, bool dwarf64, uint64_t cie_at, uint64_t pc, uint64_t range,
                  const uint8_t *insns, size_t n)
{
        size_t id_at = record(w, dwarf64, cie_at);

        put_le(w, pc, 8);
        put_le(w, range, 8);
        put(w, insns, n);
        record_end(w, dwarf64, id_at);
        return id_at;
}

size_t fuzz_debug_frame(uint8_t *buf, size_t size, uint64_t code_start)
{
        /* push %rbp; mov %rsp,%rbp; ...; leave: CFA = rbp + 16, then rsp + 8. */
        static const uint8_t frame_pointer[] = { 0x41, 0x0e, 0x10, 0x86, 0x02, 0x43,
                                                0x0d, 0x06, 0x70, 0x0c, 0x07, 0x08 };
        /* An epilogue in the middle: remember, pop, restore. */
        static const uint8_t epilogue[] = { 0x44, 0x0e, 0x40, 0x0a, 0x48, 0x0e, 0x08, 0x41, 0x0b };
        /* CFA = *(rsp + 16) + 8: a realigned frame's. */
        static const uint8_t deref[] = { 0x0f, 0x05, 0x77, 0x10, 0x06, 0x23, 0x08 };
        Writer w = { .buf = buf, .size = size };
        size_t cie32, cie64, forward;

        cie32 = cie(&w, false);
        fde(&w, false, cie32, code_start, 0x40, frame_pointer, sizeof(frame_pointer));
        fde(&w, false, cie32, 0, 0x10, NULL, 0);
        forward = fde(&w, true, 0, code_start + 0x80, 0x40, epilogue, sizeof(epilogue));
        cie64 = cie(&w, true);
        patch_le(&w, forward, cie64, 8);
        fde(&w, true, cie64, code_start + 0x100, 0x20, deref, sizeof(deref));
        return w.n <= size ? w.n : 0;
}
