/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>

#include "compressed-section.h"
#include "eh-frame-internal.h"
#include "eh-frame.h"
#include "elf-util.h"
#include "log.h"

/* The CFI sections of ELF files, for eh_frame_new_sections(): .eh_frame and .eh_frame_hdr by their section
 * headers or by the loader's program headers, .debug_frame by its section header, in the file or in its
 * separate debug file. */

typedef struct FileSections {
        Elf_Data *eh_frame, *hdr, *debug_frame;
        uint64_t eh_frame_vaddr, hdr_vaddr;
} FileSections;

/* The register numbers and the 8-byte stack words are those of x86-64. */
static bool is_x86_64(const ElfFile *f)
{
        return f->ehdr.e_ident[EI_CLASS] == ELFCLASS64 && f->ehdr.e_ident[EI_DATA] == ELFDATA2LSB &&
               f->ehdr.e_machine == EM_X86_64;
}

/* .debug_frame, inflated if need be (.zdebug_frame: the older GNU form of a compressed one). Its errors
 * leave it out, as the file's .eh_frame stands without it, but -EIO: the file changed. */
static int read_debug_frame(ElfFile *f, Elf_Scn *scn, bool gnu, Elf_Data **ret)
{
        int r;

        r = compressed_section_read(f, scn, gnu, EH_FRAME_MAX, ret);
        if (r == -EIO)
                return r;
        if (r < 0)
                log_debug_errno(r, "Cannot read .debug_frame, left out: %m");
        return 0;
}

/* The CFI sections that f's section headers name: .eh_frame and .eh_frame_hdr when eh_frame is set, and
 * .debug_frame. The first of each name. 0, or -EFBIG, -EIO. */
static int find_sections(ElfFile *f, bool eh_frame, FileSections *s)
{
        Elf_Scn *scn = NULL;
        size_t shstrndx;
        int r;

        r = elf_file_section_names(f, &shstrndx);
        if (r <= 0)
                return r;
        while ((scn = elf_nextscn(f->elf, scn))) {
                GElf_Shdr shdr;
                const char *name;

                /* SHT_NOBITS: a separate debug file, whose sections are placeholders. */
                if (!gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS)
                        continue;
                name = elf_strptr(f->elf, shstrndx, shdr.sh_name);
                if (!name)
                        continue;
                if (eh_frame && !s->eh_frame && strcmp(name, ".eh_frame") == 0) {
                        s->eh_frame_vaddr = shdr.sh_addr;
                        r = elf_file_section(f, scn, EH_FRAME_MAX, true, &s->eh_frame);
                } else if (eh_frame && !s->hdr && strcmp(name, ".eh_frame_hdr") == 0) {
                        s->hdr_vaddr = shdr.sh_addr;
                        r = elf_file_section(f, scn, EH_FRAME_MAX, true, &s->hdr);
                } else if (!s->debug_frame && strcmp(name, ".debug_frame") == 0)
                        r = read_debug_frame(f, scn, false, &s->debug_frame);
                else if (!s->debug_frame && strcmp(name, ".zdebug_frame") == 0)
                        r = read_debug_frame(f, scn, true, &s->debug_frame);
                else
                        continue;
                if (IN_SET(r, -EFBIG, -EIO))
                        return r;
        }
        return 0;
}

/* A file without section headers still has the loader's PT_GNU_EH_FRAME: 0 and *ret (NULL when there is
 * none), or -EFBIG, -EIO. */
static int find_hdr_segment(ElfFile *f, Elf_Data **ret, uint64_t *ret_vaddr)
{
        size_t n;
        int r;

        if (elf_getphdrnum(f->elf, &n) < 0)
                return 0;
        for (size_t i = 0; i < n; i++) {
                GElf_Phdr phdr;

                if (!gelf_getphdr(f->elf, (int)i, &phdr) || phdr.p_type != PT_GNU_EH_FRAME)
                        continue;
                r = elf_file_chunk(f, phdr.p_offset, phdr.p_filesz, ELF_T_BYTE, EH_FRAME_MAX, ret);
                if (IN_SET(r, -EFBIG, -EIO))
                        return r;
                if (r >= 0)
                        *ret_vaddr = phdr.p_vaddr;
                return 0;
        }
        return 0;
}

/* .eh_frame found through the header's pointer, when there are no section headers: it runs to the end of
 * its segment at most (or EH_FRAME_MAX), eh_frame_new() finds its terminator. 0 and *ret (NULL when there is
 * none), or -EIO. */
static int find_eh_frame_from_hdr(ElfFile *f, const Elf_Data *hdr, uint64_t hdr_vaddr, Elf_Data **ret,
                                  uint64_t *ret_vaddr)
{
        uint64_t vaddr;
        size_t n;
        int r;

        if (eh_frame_hdr_target(hdr->d_buf, hdr->d_size, hdr_vaddr, &vaddr) < 0 ||
            elf_getphdrnum(f->elf, &n) < 0)
                return 0;
        for (size_t i = 0; i < n; i++) {
                GElf_Phdr phdr;
                uint64_t delta;

                if (!gelf_getphdr(f->elf, (int)i, &phdr) || phdr.p_type != PT_LOAD || vaddr < phdr.p_vaddr ||
                    vaddr - phdr.p_vaddr >= phdr.p_filesz)
                        continue;
                delta = vaddr - phdr.p_vaddr;
                if (phdr.p_offset > UINT64_MAX - delta)
                        return 0;
                r = elf_file_chunk(f, phdr.p_offset + delta, MIN(phdr.p_filesz - delta, EH_FRAME_MAX),
                                   ELF_T_BYTE, EH_FRAME_MAX, ret);
                if (r == -EIO)
                        return r;
                if (r >= 0)
                        *ret_vaddr = vaddr;
                return 0;
        }
        return 0;
}

/* The .debug_frame of the separate debug file open at fd: 0 and *ret, held by *ret_file (both NULL when it
 * has none), or -ENOMEM. A debug file that cannot be used is left out: the binary's own CFI stands. */
static int find_debug_file_sections(int fd, ElfFile **ret_file, Elf_Data **ret)
{
        _cleanup_(elf_file_freep) ElfFile *f = NULL;
        FileSections s = {};
        int r;

        r = elf_file_open(fd, &f);
        if (r >= 0 && !is_x86_64(f))
                r = -EOPNOTSUPP;
        if (r >= 0)
                r = find_sections(f, false, &s);
        /* What was read of a debug file that changed meanwhile may be another build's. */
        if (r >= 0 && s.debug_frame)
                r = elf_file_check(f);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                log_debug_errno(r, "Separate debug file left out of the CFI: %m");
                return 0;
        }
        if (s.debug_frame) {
                *ret_file = TAKE_PTR(f);
                *ret = s.debug_frame;
        }
        return 0;
}

int eh_frame_load_fds(int fd, int debug_fd, EhFrame **ret)
{
        /* The sections' data is the files', valid until they are freed, after eh_frame_new_sections(). */
        _cleanup_(elf_file_freep) ElfFile *f = NULL, *debug = NULL;
        FileSections s = {};
        int r;

        assert(ret);

        r = elf_file_open(fd, &f);
        if (r < 0)
                return r;
        if (!is_x86_64(f))
                return -EOPNOTSUPP;

        r = find_sections(f, true, &s);
        if (r < 0)
                return r;
        if (!s.hdr) {
                r = find_hdr_segment(f, &s.hdr, &s.hdr_vaddr);
                if (r < 0)
                        return r;
        }
        if (!s.eh_frame && s.hdr) {
                r = find_eh_frame_from_hdr(f, s.hdr, s.hdr_vaddr, &s.eh_frame, &s.eh_frame_vaddr);
                if (r < 0)
                        return r;
        }
        /* The debug file's addresses are the binary's: its sections keep their addresses. */
        if (!s.debug_frame && debug_fd >= 0) {
                r = find_debug_file_sections(debug_fd, &debug, &s.debug_frame);
                if (r < 0)
                        return r;
        }
        if (!s.eh_frame && !s.debug_frame)
                return -ENOENT;
        /* CFI read from a file that changed meanwhile may be another file's. */
        r = elf_file_check(f);
        if (r < 0)
                return r;

        return eh_frame_new_sections(
                &(CfiSections) {
                        .eh_frame = s.eh_frame ? s.eh_frame->d_buf : NULL,
                        .eh_frame_size = s.eh_frame ? s.eh_frame->d_size : 0,
                        .eh_frame_vaddr = s.eh_frame_vaddr,
                        .hdr = s.hdr ? s.hdr->d_buf : NULL,
                        .hdr_size = s.hdr ? s.hdr->d_size : 0,
                        .hdr_vaddr = s.hdr_vaddr,
                        .debug_frame = s.debug_frame ? s.debug_frame->d_buf : NULL,
                        .debug_frame_size = s.debug_frame ? s.debug_frame->d_size : 0,
                },
                ret);
}

int eh_frame_load_fd(int fd, EhFrame **ret)
{
        return eh_frame_load_fds(fd, -1, ret);
}

int eh_frame_load_path(const char *path, EhFrame **ret)
{
        _cleanup_close_ int fd = -1;

        assert(path);
        assert(ret);

        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        return eh_frame_load_fd(fd, ret);
}
