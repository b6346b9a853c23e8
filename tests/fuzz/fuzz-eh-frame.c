/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The CFI reader (eh-frame.c, eh-frame-record.c, eh-frame-load.c, compressed-section.c, cfa-program.c,
 * dwarf-cursor.c): an input that starts like an ELF file is loaded as one (a memfd, eh_frame_load_fd()), and again
 * as the separate debug file of a binary without CFI of its own (eh_frame_load_fds(): its .debug_frame, compressed
 * or not); any other is raw section contents after a header of its own (RawHeader): where .eh_frame and
 * .eh_frame_hdr lie, how long .eh_frame is (the header's bytes follow it when flags bit 0 is set, .debug_frame's
 * when bit 1 is), where code starts. Then unwind steps at many pcs, from a stack window the input fills. Seeds: the
 * fixtures (run-fuzz.py, with .debug_frame and compressed debug files among them), and this process's vDSO, whole
 * and as its raw .eh_frame and .eh_frame_hdr, and that .eh_frame as .debug_frame records. */
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

#include "eh-frame.h"
#include "fuzz-input.h"
#include "macros.h"

#define WINDOW_WORDS 16

typedef struct __attribute__((packed)) RawHeader {
        uint8_t flags;
        uint32_t eh_frame_vaddr, hdr_vaddr, eh_frame_size, code_start;
} RawHeader;

static void unwind(const EhFrame *e, uint64_t code_start, const uint8_t *data, size_t size)
{
        uint64_t window[WINDOW_WORDS];
        UnwindRegs regs, caller;

        for (size_t i = 0; i < WINDOW_WORDS; i++)
                window[i] = fuzz_word(data, size, i);
        regs = (UnwindRegs) { .sp = UINT64_C(0x7ffd0000), .bp = UINT64_C(0x7ffd0040) };
        /* Over the code that .eh_frame usually describes, at a step that lands inside prologues... */
        for (uint64_t pc = code_start; pc < code_start + 0x8000; pc += 97) {
                regs.ip = pc;
                (void)eh_frame_unwind_step(e, 0, &regs, window, WINDOW_WORDS, &caller);
        }
        /* ...and at pcs the input holds, with their neighbours: an FDE's start when the fuzzer copied
         * one. */
        for (size_t i = 0; i < 8; i++)
                for (uint64_t d = 0; d < 3; d++) {
                        regs.ip = fuzz_word(data, size, i) + d;
                        (void)eh_frame_unwind_step(e, 0, &regs, window, WINDOW_WORDS, &caller);
                        (void)eh_frame_unwind_step(e, 0, &regs, window, 2, &caller);
                }
        (void)eh_frame_count(e);
        (void)eh_frame_memory(e);
}

/* An x86-64 ELF file with no sections: the binary whose separate debug file the input is. */
static int bare_elf(void)
{
        Elf64_Ehdr h = {
                .e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB, EV_CURRENT },
                .e_type = ET_DYN,
                .e_machine = EM_X86_64,
                .e_version = EV_CURRENT,
                .e_ehsize = sizeof(Elf64_Ehdr),
        };

        return fuzz_memfd((const uint8_t *)&h, sizeof(h));
}

static void load_elf(const uint8_t *data, size_t size)
{
        _cleanup_(eh_frame_freep) EhFrame *e = NULL, *d = NULL;
        _cleanup_close_ int fd = fuzz_memfd(data, size), bare = bare_elf();

        if (fd < 0)
                return;
        if (eh_frame_load_fd(fd, &e) >= 0)
                unwind(e, 0, data, size);
        if (bare >= 0 && eh_frame_load_fds(bare, fd, &d) >= 0)
                unwind(d, 0, data, size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_(eh_frame_freep) EhFrame *e = NULL;
        const uint8_t *p;
        size_t left, n;
        RawHeader h;
        int r;

        if (size >= 4 && memcmp(data, ELFMAG, SELFMAG) == 0) {
                load_elf(data, size);
                return 0;
        }
        if (size < sizeof(RawHeader))
                return 0;
        p = data + sizeof(RawHeader);
        left = size - sizeof(RawHeader);
        memcpy(&h, data, sizeof(h));
        n = MIN((size_t)h.eh_frame_size, left);
        if (h.flags & 2)
                r = eh_frame_new_sections(&(CfiSections) { .eh_frame = p,
                                                           .eh_frame_size = n,
                                                           .eh_frame_vaddr = h.eh_frame_vaddr,
                                                           .debug_frame = p + n,
                                                           .debug_frame_size = left - n },
                                          &e);
        else if (h.flags & 1)
                r = eh_frame_new(p, n, h.eh_frame_vaddr, p + n, left - n, h.hdr_vaddr, &e);
        else
                r = eh_frame_new(p, left, h.eh_frame_vaddr, NULL, 0, 0, &e);
        if (r >= 0)
                unwind(e, h.code_start, data, size);
        return 0;
}

/* The contents and address of the named section. */
static int section_of(Elf *elf, const char *name, Elf_Data **ret, uint64_t *ret_vaddr)
{
        Elf_Scn *scn = NULL;
        size_t shstrndx;
        GElf_Shdr shdr;

        if (elf_getshdrstrndx(elf, &shstrndx) < 0)
                return -1;
        while ((scn = elf_nextscn(elf, scn)))
                if (gelf_getshdr(scn, &shdr) &&
                    strcmp(elf_strptr(elf, shstrndx, shdr.sh_name) ?: "", name) == 0) {
                        *ret = elf_rawdata(scn, NULL);
                        *ret_vaddr = shdr.sh_addr;
                        return *ret && (*ret)->d_buf ? 0 : -1;
                }
        return -1;
}

static void elf_endp_local(Elf **e)
{
        if (*e)
                elf_end(*e);
}

/* The vDSO, and its raw .eh_frame alone and with its .eh_frame_hdr, where they lie: small, and made by a
 * compiler. */
static int write_seeds(const char *dir)
{
        _cleanup_free_ uint8_t *buf = NULL, *image = NULL;
        /* After image: ends before it is freed. */
        _cleanup_(elf_endp_local) Elf *elf = NULL;
        Elf_Data *eh_frame, *hdr, *text;
        uint64_t eh_frame_vaddr, hdr_vaddr, text_vaddr;
        uint8_t debug_frame[512];
        const uint8_t *vdso;
        size_t size, n;
        RawHeader h;

        vdso = fuzz_vdso(&size);
        if (!vdso)
                return 0;
        if (fuzz_write_file(dir, "vdso.so", vdso, size) < 0 || elf_version(EV_CURRENT) == EV_NONE)
                return -1;
        image = malloc(size);
        if (!image)
                return -1;
        memcpy(image, vdso, size);
        elf = elf_memory((char *)image, size);
        if (!elf || section_of(elf, ".eh_frame", &eh_frame, &eh_frame_vaddr) < 0 ||
            section_of(elf, ".eh_frame_hdr", &hdr, &hdr_vaddr) < 0 ||
            section_of(elf, ".text", &text, &text_vaddr) < 0 ||
            eh_frame_vaddr > UINT32_MAX || hdr_vaddr > UINT32_MAX || text_vaddr > UINT32_MAX)
                return -1;
        buf = malloc(sizeof(h) + eh_frame->d_size + MAX(hdr->d_size, sizeof(debug_frame)));
        if (!buf)
                return -1;
        h = (RawHeader) { .flags = 0,
                          .eh_frame_vaddr = (uint32_t)eh_frame_vaddr,
                          .hdr_vaddr = (uint32_t)hdr_vaddr,
                          .eh_frame_size = (uint32_t)eh_frame->d_size,
                          .code_start = (uint32_t)text_vaddr };
        memcpy(buf, &h, sizeof(h));
        memcpy(buf + sizeof(h), eh_frame->d_buf, eh_frame->d_size);
        if (fuzz_write_file(dir, "eh-frame.raw", buf, sizeof(h) + eh_frame->d_size) < 0)
                return -1;
        h.flags = 1;
        memcpy(buf, &h, sizeof(h));
        memcpy(buf + sizeof(h) + eh_frame->d_size, hdr->d_buf, hdr->d_size);
        if (fuzz_write_file(dir, "eh-frame-hdr.raw", buf, sizeof(h) + eh_frame->d_size + hdr->d_size) < 0)
                return -1;
        /* With .debug_frame for code past the vDSO's, where the steps above go. */
        h.flags = 2;
        memcpy(buf, &h, sizeof(h));
        n = fuzz_debug_frame(debug_frame, sizeof(debug_frame), text_vaddr + 0x4000);
        if (n == 0)
                return -1;
        memcpy(buf + sizeof(h) + eh_frame->d_size, debug_frame, n);
        return fuzz_write_file(dir, "eh-frame-debug-frame.raw", buf, sizeof(h) + eh_frame->d_size + n);
}

int LLVMFuzzerInitialize(int *argc _unused_, char ***argv _unused_)
{
        return fuzz_seeds_main(write_seeds);
}
