/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <limits.h>
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
