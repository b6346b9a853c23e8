/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf-util.h"
#include "log.h"
#include "macros.h"

static pthread_once_t elf_once = PTHREAD_ONCE_INIT;
static bool elf_ok;

static void elf_init(void)
{
        elf_ok = elf_version(EV_CURRENT) != EV_NONE;
}

/* size bytes of the file at offset into the same place of the image. -EIO when the file ends first: it
 * shrank since it was opened, or the disk failed. */
static int load_range(ElfFile *f, uint64_t offset, uint64_t size)
{
        if (offset > f->size || size > f->size - offset)
                return -EBADMSG;
        if (f->fd < 0)
                return 0;
        while (size > 0) {
                ssize_t n = pread(f->fd, f->image + offset, MIN(size, (uint64_t)SSIZE_MAX), (off_t)offset);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        log_debug_errno(n < 0 ? negative_errno() : -EIO,
                                        "Short read of an ELF file at %llu: %m", (unsigned long long)offset);
                        return -EIO;
                }
                offset += (uint64_t)n;
                size -= (uint64_t)n;
        }
        return 0;
}

/* An n-byte field of the header at p, in the file's byte order. */
static uint64_t get_field(const uint8_t *p, size_t n, bool msb)
{
        uint64_t v = 0;

        for (size_t i = 0; i < n; i++)
                v |= (uint64_t)p[msb ? n - 1 - i : i] << (8 * i);
        return v;
}

/* Read the ELF header, and the section and program header tables it points to, into the image, after
 * checking how many there are: libelf allocates for each. Tables that do not fit in the file are left to
 * libelf to refuse. */
static int load_headers(ElfFile *f)
{
        const uint8_t *h = f->image;
        uint64_t shoff, phoff, shnum, phnum;
        size_t ehdr_size, shdr_size, phdr_size;
        bool is64, msb;
        int r;

        if (f->size < EI_NIDENT)
                return -ENOEXEC;
        r = load_range(f, 0, MIN(f->size, (size_t)sizeof(Elf64_Ehdr)));
        if (r < 0)
                return r;
        if (memcmp(h, ELFMAG, SELFMAG) != 0 || !IN_SET(h[EI_CLASS], ELFCLASS32, ELFCLASS64) ||
            !IN_SET(h[EI_DATA], ELFDATA2LSB, ELFDATA2MSB))
                return -ENOEXEC;
        is64 = h[EI_CLASS] == ELFCLASS64;
        msb = h[EI_DATA] == ELFDATA2MSB;
        ehdr_size = is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
        shdr_size = is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
        phdr_size = is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
        if (f->size < ehdr_size)
                return -ENOEXEC;

        phoff = is64 ? get_field(h + offsetof(Elf64_Ehdr, e_phoff), 8, msb)
                     : get_field(h + offsetof(Elf32_Ehdr, e_phoff), 4, msb);
        shoff = is64 ? get_field(h + offsetof(Elf64_Ehdr, e_shoff), 8, msb)
                     : get_field(h + offsetof(Elf32_Ehdr, e_shoff), 4, msb);
        phnum = is64 ? get_field(h + offsetof(Elf64_Ehdr, e_phnum), 2, msb)
                     : get_field(h + offsetof(Elf32_Ehdr, e_phnum), 2, msb);
        shnum = is64 ? get_field(h + offsetof(Elf64_Ehdr, e_shnum), 2, msb)
                     : get_field(h + offsetof(Elf32_Ehdr, e_shnum), 2, msb);

        /* Counts too large for the header are in section 0: sh_size for sections, sh_info for segments. */
        if (shoff != 0 && (shnum == 0 || phnum == PN_XNUM) && shoff <= f->size &&
            f->size - shoff >= shdr_size) {
                const uint8_t *s0 = f->image + shoff;

                r = load_range(f, shoff, shdr_size);
                if (r < 0)
                        return r;
                if (shnum == 0)
                        shnum = is64 ? get_field(s0 + offsetof(Elf64_Shdr, sh_size), 8, msb)
                                     : get_field(s0 + offsetof(Elf32_Shdr, sh_size), 4, msb);
                if (phnum == PN_XNUM)
                        phnum = is64 ? get_field(s0 + offsetof(Elf64_Shdr, sh_info), 4, msb)
                                     : get_field(s0 + offsetof(Elf32_Shdr, sh_info), 4, msb);
        }
        if (shnum > ELF_HEADERS_MAX || phnum > ELF_HEADERS_MAX) {
                log_debug("ELF file with %llu sections and %llu program headers refused",
                          (unsigned long long)shnum, (unsigned long long)phnum);
                return -EFBIG;
        }

        if (shoff != 0 && shoff <= f->size && f->size - shoff >= shnum * shdr_size) {
                r = load_range(f, shoff, shnum * shdr_size);
                if (r < 0)
                        return r;
        }
        if (phoff != 0 && phoff <= f->size && f->size - phoff >= phnum * phdr_size) {
                r = load_range(f, phoff, phnum * phdr_size);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int elf_file_begin(ElfFile *f)
{
        size_t n;

        pthread_once(&elf_once, elf_init);
        if (!elf_ok)
                return -EOPNOTSUPP;
        f->elf = elf_memory((char *)f->image, f->size);
        if (!f->elf || elf_kind(f->elf) != ELF_K_ELF || !gelf_getehdr(f->elf, &f->ehdr)) {
                log_debug("Not an ELF file: %s", elf_errmsg(-1));
                return -ENOEXEC;
        }
        if (elf_getshdrnum(f->elf, &n) < 0)
                n = 0;
        f->loaded = calloc(MAX(n, (size_t)1), sizeof(bool));
        if (!f->loaded)
                return -ENOMEM;
        f->n_loaded = n;
        return 0;
}

int elf_file_open(int fd, ElfFile **ret)
{
        _cleanup_(elf_file_freep) ElfFile *f = NULL;
        int r;

        assert(ret);

        if (fd < 0)
                return -EINVAL;
        f = calloc(1, sizeof(*f));
        if (!f)
                return -ENOMEM;
        f->fd = fd;
        if (fstat(fd, &f->st) < 0)
                return negative_errno();
        /* A device or a FIFO is not a binary. */
        if (!S_ISREG(f->st.st_mode) || f->st.st_size <= 0)
                return -ENOEXEC;
        if ((uint64_t)f->st.st_size > ELF_FILE_MAX)
                return -EFBIG;
        f->size = (size_t)f->st.st_size;
        /* MAP_NORESERVE: only the pages read into count, whatever the size. */
        f->image = mmap(NULL, f->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                        -1, 0);
        if (f->image == MAP_FAILED) {
                f->image = NULL;
                return -ENOMEM;
        }

        r = load_headers(f);
        if (r < 0)
                return r;
        r = elf_file_begin(f);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(f);
        return 0;
}

int elf_file_memory(void *image, size_t size, ElfFile **ret)
{
        _cleanup_(elf_file_freep) ElfFile *f = NULL;
        int r;

        assert(image);
        assert(ret);

        f = calloc(1, sizeof(*f));
        if (!f)
                return -ENOMEM;
        f->fd = -1;
        f->image = image;
        f->size = size;
        r = elf_file_begin(f);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(f);
        return 0;
}

ElfFile *elf_file_free(ElfFile *f)
{
        if (!f)
                return NULL;
        if (f->elf)
                elf_end(f->elf);
        if (f->fd >= 0 && f->image)
                munmap(f->image, f->size);
        free(f->loaded);
        free(f);
        return NULL;
}

/* Read section scn into the image, once. */
static int load_section(ElfFile *f, Elf_Scn *scn, const GElf_Shdr *shdr, uint64_t max)
{
        size_t ndx = elf_ndxscn(scn);
        int r;

        if (shdr->sh_type == SHT_NOBITS || shdr->sh_size == 0)
                return -ENODATA;
        if (shdr->sh_size > max)
                return -EFBIG;
        if (ndx < f->n_loaded && f->loaded[ndx])
                return 0;
        r = load_range(f, shdr->sh_offset, shdr->sh_size);
        if (r < 0)
                return r;
        if (ndx < f->n_loaded)
                f->loaded[ndx] = true;
        return 0;
}

int elf_file_section(ElfFile *f, Elf_Scn *scn, uint64_t max, bool raw, Elf_Data **ret)
{
        GElf_Shdr shdr;
        Elf_Data *data;
        int r;

        assert(f);
        assert(ret);

        if (!scn)
                return -EINVAL;
        if (!gelf_getshdr(scn, &shdr))
                return -EBADMSG;
        r = load_section(f, scn, &shdr, max);
        if (r < 0)
                return r;
        data = raw ? elf_rawdata(scn, NULL) : elf_getdata(scn, NULL);
        if (!data || !data->d_buf) {
                log_debug("Cannot read an ELF section: %s", elf_errmsg(-1));
                return -EBADMSG;
        }
        *ret = data;
        return 0;
}

int elf_file_section_names(ElfFile *f, size_t *ret_shstrndx)
{
        size_t shstrndx;
        int r;

        if (elf_getshdrstrndx(f->elf, &shstrndx) < 0)
                return 0;
        r = elf_file_strings(f, shstrndx, ELF_SECTION_NAMES_MAX);
        if (r == -EIO)
                return r;
        if (r < 0)
                return 0;
        *ret_shstrndx = shstrndx;
        return 1;
}

int elf_file_strings(ElfFile *f, size_t ndx, uint64_t max)
{
        Elf_Scn *scn;
        GElf_Shdr shdr;

        assert(f);

        scn = elf_getscn(f->elf, ndx);
        if (!scn || !gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_STRTAB ||
            (shdr.sh_flags & SHF_COMPRESSED))
                return -EBADMSG;
        return load_section(f, scn, &shdr, max);
}

int elf_file_chunk(ElfFile *f, uint64_t offset, uint64_t size, Elf_Type type, uint64_t max, Elf_Data **ret)
{
        Elf_Data *data;
        int r;

        assert(f);
        assert(ret);

        if (size == 0)
                return -ENODATA;
        if (size > max)
                return -EFBIG;
        if (offset > INT64_MAX)
                return -EBADMSG;
        r = load_range(f, offset, size);
        if (r < 0)
                return r;
        data = elf_getdata_rawchunk(f->elf, (int64_t)offset, size, type);
        if (!data || !data->d_buf) {
                log_debug("Cannot read %llu bytes of an ELF file at %llu: %s", (unsigned long long)size,
                          (unsigned long long)offset, elf_errmsg(-1));
                return -EBADMSG;
        }
        *ret = data;
        return 0;
}

int elf_file_check(const ElfFile *f)
{
        struct stat st;

        assert(f);

        if (f->fd < 0)
                return 0;
        if (fstat(f->fd, &st) < 0)
                return -EIO;
        /* ctime too: the owner can set mtime back, not ctime. */
        if (st.st_dev != f->st.st_dev || st.st_ino != f->st.st_ino || st.st_size != f->st.st_size ||
            st.st_mtim.tv_sec != f->st.st_mtim.tv_sec || st.st_mtim.tv_nsec != f->st.st_mtim.tv_nsec ||
            st.st_ctim.tv_sec != f->st.st_ctim.tv_sec || st.st_ctim.tv_nsec != f->st.st_ctim.tv_nsec) {
                log_debug("ELF file changed while it was read (size %lld, now %lld)",
                          (long long)f->st.st_size, (long long)st.st_size);
                return -EIO;
        }
        return 0;
}
