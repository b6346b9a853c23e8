/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>

#include "address-space.h"
#include "check-main.h"
#include "eh-frame.h"
#include "fixture-util.h"
#include "macros.h"
#include "pread-hook.h"
#include "proc-maps.h"
#include "symbolizer.h"
#include "test-util.h"
#include "unwinder.h"
#include "vprof-abi.h"

#define WINDOW_WORDS VPROF_STACK_WINDOW_WORDS

/* From the command line: the fixture library built in tests/fixtures, and its stripped copy. */
static const char *arg_lib, *arg_lib_stripped;

/* A stack as the BPF program would copy it: distinct words, to tell which one a step read. */
static void fill_window(uint64_t *window, size_t n)
{
        for (size_t i = 0; i < n; i++)
                window[i] = UINT64_C(0x5a5a000000000000) + i;
}

static bool allowed_error(int r)
{
        return r == 0 || IN_SET(r, -ENOENT, -ERANGE, -EOPNOTSUPP, -EBADMSG);
}

/* The file holding addr and its load bias, as the dynamic linker has them. */
static const char *module_of(const void *addr, uint64_t *ret_bias)
{
        struct link_map *lm = NULL;
        Dl_info info;

        ck_assert(dladdr1(addr, &info, (void **)&lm, RTLD_DL_LINKMAP) != 0);
        ck_assert_ptr_nonnull(lm);
        *ret_bias = lm->l_addr;
        return info.dli_fname;
}

/* libc's own function, not a sanitizer's interceptor of the same name. */
static void *libc_function(const char *name)
{
        void *handle = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD), *fn;

        ck_assert_ptr_nonnull(handle);
        fn = dlsym(handle, name);
        ck_assert_msg(fn, "no %s in libc", name);
        dlclose(handle);
        return fn;
}

static void *fixture_function(const char *name)
{
        void *handle = dlopen(arg_lib, RTLD_NOW), *fn;

        ck_assert_msg(handle, "dlopen: %s", dlerror());
        fn = dlsym(handle, name);
        ck_assert_ptr_nonnull(fn);
        /* The handle stays open: the test needs the code mapped. */
        return fn;
}

/* ---- Hand-made CFI, for every instruction and failure of the CFA program ---- */

#define FAKE_PC UINT64_C(0x1000)
#define FAKE_RANGE 0x100
#define FAKE_EH_FRAME_VADDR UINT64_C(0x4000)
#define FAKE_HDR_VADDR UINT64_C(0x3f00)
#define FAKE_SP UINT64_C(0x7ffc0000)

typedef struct Buf {
        uint8_t data[1024];
        size_t n;
} Buf;

static void put(Buf *b, const void *p, size_t n)
{
        if (n == 0)
                return;
        ck_assert_uint_le(b->n + n, sizeof(b->data));
        memcpy(b->data + b->n, p, n);
        b->n += n;
}

static void put_u8(Buf *b, uint8_t v)
{
        put(b, &v, 1);
}

static void put_u32_at(Buf *b, size_t at, uint32_t v)
{
        for (size_t i = 0; i < 4; i++)
                b->data[at + i] = (uint8_t)(v >> (8 * i));
}

static void put_u32(Buf *b, uint32_t v)
{
        b->n += 4;
        ck_assert_uint_le(b->n, sizeof(b->data));
        put_u32_at(b, b->n - 4, v);
}

/* A CIE ("zR", udata4 pointers, code alignment 1, data alignment -8, return address in column 16, CFA = rsp +
 * 8, return address at CFA - 8, as GCC writes them) and one FDE for [FAKE_PC, FAKE_PC + FAKE_RANGE) with the
 * given instructions, then the terminator. Returns the offset of the FDE. */
static size_t build_cfi(Buf *b, const uint8_t *insns, size_t n_insns)
{
        static const uint8_t cie_body[] = {
                0, 0, 0, 0,       /* CIE id */
                1,                /* version */
                'z', 'R', 0,      /* augmentation */
                1,                /* code alignment */
                0x78,             /* data alignment: -8 */
                16,               /* return address column */
                1, 0x03,          /* augmentation data: FDE pointers are udata4 */
                0x0c, 0x07, 0x08, /* DW_CFA_def_cfa: rsp + 8 */
                0x90, 0x01,       /* DW_CFA_offset: r16 at CFA - 8 */
        };
        size_t fde, len_at;

        *b = (Buf) {};
        put_u32(b, sizeof(cie_body));
        put(b, cie_body, sizeof(cie_body));

        fde = b->n;
        len_at = b->n;
        put_u32(b, 0);
        put_u32(b, (uint32_t)b->n); /* back to the CIE at 0 */
        put_u32(b, (uint32_t)FAKE_PC);
        put_u32(b, FAKE_RANGE);
        put_u8(b, 0); /* no augmentation data */
        put(b, insns, n_insns);
        put_u32_at(b, len_at, (uint32_t)(b->n - len_at - 4));
        put_u32(b, 0);
        return fde;
}

/* An .eh_frame_hdr for the single FDE of build_cfi(). */
static void build_hdr(Buf *h, size_t fde)
{
        *h = (Buf) {};
        put_u8(h, 1);    /* version */
        put_u8(h, 0x1b); /* eh_frame_ptr: pcrel sdata4 */
        put_u8(h, 0x03); /* fde_count: udata4 */
        put_u8(h, 0x3b); /* table: datarel sdata4 */
        put_u32(h, (uint32_t)(FAKE_EH_FRAME_VADDR - (FAKE_HDR_VADDR + 4)));
        put_u32(h, 1);
        put_u32(h, (uint32_t)(FAKE_PC - FAKE_HDR_VADDR));
        put_u32(h, (uint32_t)(FAKE_EH_FRAME_VADDR + fde - FAKE_HDR_VADDR));
}

static int fake_step(const uint8_t *insns, size_t n_insns, uint64_t pc, uint64_t bp, UnwindRegs *ret)
{
        _cleanup_(eh_frame_freep) EhFrame *e = NULL;
        uint64_t window[WINDOW_WORDS];
        Buf b;

        fill_window(window, WINDOW_WORDS);
        build_cfi(&b, insns, n_insns);
        ck_assert_int_eq(eh_frame_new(b.data, b.n, FAKE_EH_FRAME_VADDR, NULL, 0, 0, &e), 0);
        ck_assert_uint_eq(eh_frame_count(e), 1);
        /* A bias of 0x10000: the code runs there, linked at FAKE_PC. */
        return eh_frame_unwind_step(e, 0x10000,
                                    &(UnwindRegs) { .ip = pc + 0x10000, .sp = FAKE_SP, .bp = bp }, window,
                                    WINDOW_WORDS, ret);
}

static void check_step(const uint8_t *insns, size_t n_insns, uint64_t pc, uint64_t bp, uint64_t ip_word,
                       uint64_t cfa, uint64_t caller_bp)
{
        UnwindRegs caller = {};
        int r;

        r = fake_step(insns, n_insns, pc, bp, &caller);
        ck_assert_msg(r == 0, "step at %#llx: %s", (unsigned long long)pc, strerror(-r));
        ck_assert_uint_eq(caller.ip, UINT64_C(0x5a5a000000000000) + ip_word);
        ck_assert_uint_eq(caller.sp, cfa);
        ck_assert_uint_eq(caller.bp, caller_bp);
}

START_TEST(test_cie_rules)
{
        UnwindRegs caller = { .ip = 1, .sp = 2, .bp = 3 };

        /* What the CIE alone says: the state at a function's first instruction. */
        check_step(NULL, 0, FAKE_PC, 0x1234, 0, FAKE_SP + 8, 0x1234);
        check_step(NULL, 0, FAKE_PC + FAKE_RANGE - 1, 0x1234, 0, FAKE_SP + 8, 0x1234);
        /* Outside the FDE; the output stays untouched. */
        ck_assert_int_eq(fake_step(NULL, 0, FAKE_PC + FAKE_RANGE, 0, &caller), -ENOENT);
        ck_assert_int_eq(fake_step(NULL, 0, FAKE_PC - 1, 0, &caller), -ENOENT);
        ck_assert_int_eq(fake_step(NULL, 0, 0, 0, &caller), -ENOENT);
        ck_assert_uint_eq(caller.ip, 1);
        ck_assert_uint_eq(caller.sp, 2);
        ck_assert_uint_eq(caller.bp, 3);
}
END_TEST

/* A GCC prologue and epilogue with remember/restore_state. */
static const uint8_t prologue_insns[] = {
        0x41,             /* advance 1: after push %rbp */
        0x0e, 0x10,       /* def_cfa_offset 16 */
        0x86, 0x02,       /* offset rbp at CFA - 16 */
        0x43,             /* advance 3: after mov %rsp,%rbp */
        0x0d, 0x06,       /* def_cfa_register rbp */
        0x02, 0x10,       /* advance_loc1 16: the epilogue */
        0x0a,             /* remember_state */
        0x0c, 0x07, 0x08, /* def_cfa rsp + 8: after pop %rbp */
        0xc6,             /* restore rbp */
        0x41,             /* advance 1: after ret, the code of another path */
        0x0b,             /* restore_state */
};

START_TEST(test_prologue_epilogue)
{
        const uint64_t bp = FAKE_SP + 16;

        check_step(prologue_insns, sizeof(prologue_insns), FAKE_PC, bp, 0, FAKE_SP + 8, bp);
        /* After the push: the return address above the saved rbp. */
        check_step(prologue_insns, sizeof(prologue_insns), FAKE_PC + 1, bp, 1, FAKE_SP + 16, 0x5a5a000000000000);
        check_step(prologue_insns, sizeof(prologue_insns), FAKE_PC + 3, bp, 1, FAKE_SP + 16, 0x5a5a000000000000);
        /* Frame set up: relative to rbp, 16 bytes above sp here. */
        check_step(prologue_insns, sizeof(prologue_insns), FAKE_PC + 4, bp, 3, bp + 16, 0x5a5a000000000002);
        check_step(prologue_insns, sizeof(prologue_insns), FAKE_PC + 19, bp, 3, bp + 16, 0x5a5a000000000002);
        /* After the pop: back to the entry state. */
        check_step(prologue_insns, sizeof(prologue_insns), FAKE_PC + 20, 0x1234, 0, FAKE_SP + 8, 0x1234);
        /* And the remembered state back after the ret. */
        check_step(prologue_insns, sizeof(prologue_insns), FAKE_PC + 21, bp, 3, bp + 16, 0x5a5a000000000002);
        check_step(prologue_insns, sizeof(prologue_insns), FAKE_PC + FAKE_RANGE - 1, bp, 3, bp + 16,
                   0x5a5a000000000002);
}
END_TEST

START_TEST(test_other_instructions)
{
        /* Larger advances and set_loc; the skipped rows must not count. */
        static const uint8_t advances[] = {
                0x03, 0x10, 0x00,             /* advance_loc2 16 */
                0x0e, 0x18,                   /* def_cfa_offset 24 */
                0x04, 0x10, 0x00, 0x00, 0x00, /* advance_loc4 16 */
                0x0e, 0x20,                   /* def_cfa_offset 32 */
                0x01, 0x40, 0x10, 0x00, 0x00, /* set_loc 0x1040 */
                0x13, 0x7d,                   /* def_cfa_offset_sf -3, factored: 24 */
        };
        static const uint8_t sf[] = {
                0x12, 0x06, 0x7e,       /* def_cfa_sf rbp, -2 * -8 = 16 */
                0x11, 0x06, 0x02,       /* offset_extended_sf rbp at 2 * -8 = CFA - 16 */
                0x05, 0x10, 0x01,       /* offset_extended r16 at CFA - 8 */
                0x2e, 0x20,             /* GNU_args_size 32: nothing to do here */
                0x00,                   /* nop */
        };
        static const uint8_t val[] = {
                0x14, 0x06, 0x02, /* val_offset rbp = CFA - 16 */
        };
        static const uint8_t reg[] = {
                0x09, 0x10, 0x06, /* register: the return address is in rbp */
                0x08, 0x06,       /* same_value rbp */
        };
        static const uint8_t negative[] = {
                0x0e, 0x20,       /* def_cfa_offset 32 */
                0x2f, 0x10, 0x03, /* GNU_negative_offset_extended r16 at CFA - 3 * -8 = CFA + 24 */
        };
        static const uint8_t ignored_expression[] = {
                0x10, 0x03, 0x02, 0x77, 0x08, /* expression for rbx: not needed */
                0x16, 0x11, 0x01, 0x96,       /* val_expression for xmm0: not needed */
        };
        static const uint8_t undefined_rbp[] = {
                0x07, 0x06, /* undefined rbp */
        };
        const uint64_t bp = FAKE_SP + 32;
        UnwindRegs caller;

        check_step(advances, sizeof(advances), FAKE_PC + 15, 0, 0, FAKE_SP + 8, 0);
        check_step(advances, sizeof(advances), FAKE_PC + 16, 0, 2, FAKE_SP + 24, 0);
        check_step(advances, sizeof(advances), FAKE_PC + 32, 0, 3, FAKE_SP + 32, 0);
        check_step(advances, sizeof(advances), FAKE_PC + 0x40, 0, 2, FAKE_SP + 24, 0);

        check_step(sf, sizeof(sf), FAKE_PC, bp, 5, bp + 16, 0x5a5a000000000004);
        check_step(val, sizeof(val), FAKE_PC, bp, 0, FAKE_SP + 8, FAKE_SP - 8);
        ck_assert_int_eq(fake_step(reg, sizeof(reg), FAKE_PC, bp, &caller), 0);
        ck_assert_uint_eq(caller.ip, bp);
        ck_assert_uint_eq(caller.bp, bp);
        check_step(negative, sizeof(negative), FAKE_PC, bp, 7, FAKE_SP + 32, bp);
        check_step(ignored_expression, sizeof(ignored_expression), FAKE_PC, bp, 0, FAKE_SP + 8, bp);
        check_step(undefined_rbp, sizeof(undefined_rbp), FAKE_PC, bp, 0, FAKE_SP + 8, 0);
}
END_TEST

START_TEST(test_unsupported_and_malformed_programs)
{
        static const uint8_t cfa_expression[] = { 0x0f, 0x02, 0x77, 0x08 };
        static const uint8_t ra_expression[] = { 0x10, 0x10, 0x02, 0x77, 0x08 };
        static const uint8_t cfa_r10[] = { 0x0c, 0x0a, 0x08 };
        static const uint8_t ra_in_rbx[] = { 0x09, 0x10, 0x03 };
        static const uint8_t ra_undefined[] = { 0x07, 0x10 };
        static const uint8_t ra_same[] = { 0x08, 0x10 };
        static const uint8_t outside_window[] = { 0x0e, 0x90, 0x01 }; /* def_cfa_offset 144 */
        static const uint8_t below_sp[] = { 0x0e, 0x00 };             /* CFA = sp: the return address below */
        static const uint8_t restore_empty[] = { 0x0b };
        static const uint8_t unknown_opcode[] = { 0x20 };
        static const uint8_t truncated[] = { 0x0c, 0x07 };
        static const uint8_t truncated_block[] = { 0x0f, 0x7f, 0x00 };
        static const uint8_t backwards[] = { 0x41, 0x01, 0x00, 0x10, 0x00, 0x00 };
        uint8_t deep[300];
        UnwindRegs caller;

        ck_assert_int_eq(fake_step(cfa_expression, sizeof(cfa_expression), FAKE_PC, 0, &caller), -EOPNOTSUPP);
        ck_assert_int_eq(fake_step(ra_expression, sizeof(ra_expression), FAKE_PC, 0, &caller), -EOPNOTSUPP);
        ck_assert_int_eq(fake_step(cfa_r10, sizeof(cfa_r10), FAKE_PC, 0, &caller), -EOPNOTSUPP);
        ck_assert_int_eq(fake_step(ra_in_rbx, sizeof(ra_in_rbx), FAKE_PC, 0, &caller), -EOPNOTSUPP);
        ck_assert_int_eq(fake_step(ra_undefined, sizeof(ra_undefined), FAKE_PC, 0, &caller), -ENOENT);
        ck_assert_int_eq(fake_step(ra_same, sizeof(ra_same), FAKE_PC, 0, &caller), -EBADMSG);
        ck_assert_int_eq(fake_step(outside_window, sizeof(outside_window), FAKE_PC, 0, &caller), -ERANGE);
        ck_assert_int_eq(fake_step(below_sp, sizeof(below_sp), FAKE_PC, 0, &caller), -ERANGE);
        ck_assert_int_eq(fake_step(restore_empty, sizeof(restore_empty), FAKE_PC, 0, &caller), -EBADMSG);
        ck_assert_int_eq(fake_step(unknown_opcode, sizeof(unknown_opcode), FAKE_PC, 0, &caller), -EBADMSG);
        ck_assert_int_eq(fake_step(truncated, sizeof(truncated), FAKE_PC, 0, &caller), -EBADMSG);
        ck_assert_int_eq(fake_step(truncated_block, sizeof(truncated_block), FAKE_PC, 0, &caller), -EBADMSG);
        ck_assert_int_eq(fake_step(backwards, sizeof(backwards), FAKE_PC + 1, 0, &caller), -EBADMSG);
        /* Instructions past the row of pc are not even read. */
        ck_assert_int_eq(fake_step((const uint8_t[]) { 0x41, 0x20 }, 2, FAKE_PC, 0, &caller), 0);

        /* remember_state nests, but not without bound. */
        memset(deep, 0x0a, sizeof(deep));
        ck_assert_int_eq(fake_step(deep, 8, FAKE_PC, 0, &caller), 0);
        ck_assert_int_eq(fake_step(deep, sizeof(deep), FAKE_PC, 0, &caller), -EBADMSG);
}
END_TEST

START_TEST(test_hdr_table)
{
        _cleanup_(eh_frame_freep) EhFrame *e = NULL, *fallback = NULL;
        uint64_t window[WINDOW_WORDS];
        UnwindRegs caller;
        size_t fde;
        Buf b, h;

        fill_window(window, WINDOW_WORDS);
        fde = build_cfi(&b, prologue_insns, sizeof(prologue_insns));
        build_hdr(&h, fde);
        ck_assert_int_eq(eh_frame_new(b.data, b.n, FAKE_EH_FRAME_VADDR, h.data, h.n, FAKE_HDR_VADDR, &e), 0);
        ck_assert_uint_eq(eh_frame_count(e), 1);
        ck_assert_int_eq(eh_frame_unwind_step(e, 0, &(UnwindRegs) { .ip = FAKE_PC + 1, .sp = FAKE_SP }, window,
                                              WINDOW_WORDS, &caller),
                         0);
        ck_assert_uint_eq(caller.sp, FAKE_SP + 16);
        ck_assert_uint_eq(caller.ip, window[1]);

        /* A table pointing outside .eh_frame, or a count beyond the header: .eh_frame is scanned instead. */
        put_u32_at(&h, 16, 0x7fffffff);
        ck_assert_int_eq(eh_frame_new(b.data, b.n, FAKE_EH_FRAME_VADDR, h.data, h.n, FAKE_HDR_VADDR, &fallback),
                         0);
        ck_assert_uint_eq(eh_frame_count(fallback), 1);
        fallback = eh_frame_free(fallback);
        build_hdr(&h, fde);
        put_u32_at(&h, 8, 1000000);
        ck_assert_int_eq(eh_frame_new(b.data, b.n, FAKE_EH_FRAME_VADDR, h.data, h.n, FAKE_HDR_VADDR, &fallback),
                         0);
        ck_assert_uint_eq(eh_frame_count(fallback), 1);
        ck_assert_int_eq(eh_frame_unwind_step(fallback, 0, &(UnwindRegs) { .ip = FAKE_PC + 1, .sp = FAKE_SP },
                                              window, WINDOW_WORDS, &caller),
                         0);
        ck_assert_uint_eq(caller.ip, window[1]);
}
END_TEST

START_TEST(test_empty_and_garbage)
{
        _cleanup_(eh_frame_freep) EhFrame *e = NULL;
        EhFrame *sentinel = (EhFrame *)0x1, *none = sentinel;
        uint8_t junk[4096];
        uint64_t window[WINDOW_WORDS];
        uint32_t seed = 12345;
        int r;

        ck_assert_int_eq(eh_frame_new(NULL, 0, 0, NULL, 0, 0, &none), -ENOENT);
        ck_assert_int_eq(eh_frame_new((const uint8_t[4]) {}, 4, 0, NULL, 0, 0, &none), -ENOENT);
        ck_assert_ptr_eq(none, sentinel);

        fill_window(window, WINDOW_WORDS);
        for (unsigned round = 0; round < 200; round++) {
                for (size_t i = 0; i < sizeof(junk); i++) {
                        seed = seed * 1103515245 + 12345;
                        junk[i] = (uint8_t)(seed >> 16);
                        /* Small lengths now and then, so that some records parse. */
                        if (i % 64 == 0 && round % 2 == 0)
                                junk[i] = (uint8_t)(junk[i] & 0x1f);
                }
                r = eh_frame_new(junk, sizeof(junk), 0, round % 3 == 0 ? junk : NULL, round % 3 == 0 ? 64 : 0,
                                 0, &e);
                ck_assert_msg(r == 0 || r == -ENOENT, "%d", r);
                if (r < 0)
                        continue;
                for (uint64_t ip = 0; ip < 0x10000; ip += 97) {
                        UnwindRegs caller;

                        r = eh_frame_unwind_step(e, 0, &(UnwindRegs) { .ip = ip, .sp = 0x1000 }, window,
                                                 WINDOW_WORDS, &caller);
                        ck_assert_msg(allowed_error(r), "%d", r);
                }
                e = eh_frame_free(e);
        }
}
END_TEST

/* ---- Real files ---- */

typedef struct Sections {
        void *eh_frame, *hdr;
        size_t eh_frame_size, hdr_size;
        uint64_t eh_frame_vaddr, hdr_vaddr, text_vaddr, text_size, plt_vaddr, plt_size;
} Sections;

static void sections_done(Sections *s)
{
        free(s->eh_frame);
        free(s->hdr);
}

/* Copies of the sections, read independently of eh_frame_load_fd(). */
static void read_sections(const char *path, Sections *ret)
{
        _cleanup_close_ int fd = -1;
        Elf_Scn *scn = NULL;
        Sections s = {};
        size_t shstrndx;
        Elf *elf;

        ck_assert(elf_version(EV_CURRENT) != EV_NONE);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        elf = elf_begin(fd, ELF_C_READ, NULL);
        ck_assert_ptr_nonnull(elf);
        ck_assert_int_eq(elf_getshdrstrndx(elf, &shstrndx), 0);
        while ((scn = elf_nextscn(elf, scn))) {
                GElf_Shdr shdr;
                Elf_Data *data;
                const char *name;

                ck_assert_ptr_nonnull(gelf_getshdr(scn, &shdr));
                name = elf_strptr(elf, shstrndx, shdr.sh_name);
                if (!name || shdr.sh_type == SHT_NOBITS)
                        continue;
                if (strcmp(name, ".text") == 0) {
                        s.text_vaddr = shdr.sh_addr;
                        s.text_size = shdr.sh_size;
                } else if (strcmp(name, ".plt") == 0) {
                        s.plt_vaddr = shdr.sh_addr;
                        s.plt_size = shdr.sh_size;
                } else if (strcmp(name, ".eh_frame") == 0 || strcmp(name, ".eh_frame_hdr") == 0) {
                        bool hdr = strcmp(name, ".eh_frame_hdr") == 0;
                        void *copy;

                        data = elf_rawdata(scn, NULL);
                        ck_assert_ptr_nonnull(data);
                        copy = malloc(data->d_size);
                        ck_assert_ptr_nonnull(copy);
                        memcpy(copy, data->d_buf, data->d_size);
                        if (hdr) {
                                s.hdr = copy;
                                s.hdr_size = data->d_size;
                                s.hdr_vaddr = shdr.sh_addr;
                        } else {
                                s.eh_frame = copy;
                                s.eh_frame_size = data->d_size;
                                s.eh_frame_vaddr = shdr.sh_addr;
                        }
                }
        }
        elf_end(elf);
        ck_assert_ptr_nonnull(s.eh_frame);
        ck_assert_ptr_nonnull(s.hdr);
        ck_assert_uint_gt(s.text_size, 0);
        *ret = s;
}

/* At a function's first instruction: the return address on top of the stack, rbp untouched. */
static void check_entry(const EhFrame *e, uint64_t bias, uint64_t addr)
{
        uint64_t window[WINDOW_WORDS];
        UnwindRegs caller;
        int r;

        fill_window(window, WINDOW_WORDS);
        r = eh_frame_unwind_step(e, bias, &(UnwindRegs) { .ip = addr, .sp = FAKE_SP, .bp = 0x4242 }, window,
                                 WINDOW_WORDS, &caller);
        ck_assert_msg(r == 0, "step at %#llx: %s", (unsigned long long)(addr - bias), strerror(-r));
        ck_assert_uint_eq(caller.ip, window[0]);
        ck_assert_uint_eq(caller.sp, FAKE_SP + 8);
        ck_assert_uint_eq(caller.bp, 0x4242);
}

START_TEST(test_libc_entry_points)
{
        static const char *const names[] = { "read", "write", "nanosleep", "getppid", "malloc", "qsort" };
        _cleanup_(eh_frame_freep) EhFrame *e = NULL, *scanned = NULL;
        Sections s;
        const char *path;
        uint64_t bias;

        path = module_of(libc_function("read"), &bias);
        ck_assert_int_eq(eh_frame_load_path(path, &e), 0);
        ck_assert_uint_gt(eh_frame_count(e), 100);

        /* The same answers from a scan of .eh_frame as from the header's table. */
        read_sections(path, &s);
        ck_assert_int_eq(eh_frame_new(s.eh_frame, s.eh_frame_size, s.eh_frame_vaddr, NULL, 0, 0, &scanned), 0);
        ck_assert_uint_gt(eh_frame_count(scanned), eh_frame_count(e) * 9 / 10);
        ck_assert_uint_le(eh_frame_count(scanned), eh_frame_count(e));
        sections_done(&s);

        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                uint64_t addr = (uintptr_t)libc_function(names[i]);

                check_entry(e, bias, addr);
                check_entry(scanned, bias, addr);
        }
}
END_TEST

/* The offsets of push %rbp and mov %rsp,%rbp near the start of fn (after an endbr64, if any). */
static void find_prologue(const uint8_t *fn, size_t *ret_push, size_t *ret_mov)
{
        size_t push = SIZE_MAX, mov = SIZE_MAX;

        for (size_t i = 0; i < 16 && mov == SIZE_MAX; i++) {
                if (push == SIZE_MAX && fn[i] == 0x55)
                        push = i;
                else if (push != SIZE_MAX && fn[i] == 0x48 && fn[i + 1] == 0x89 && fn[i + 2] == 0xe5)
                        mov = i;
        }
        ck_assert_msg(push != SIZE_MAX && mov != SIZE_MAX, "no frame set up at the start of the function");
        *ret_push = push;
        *ret_mov = mov;
}

START_TEST(test_fixture_prologue)
{
        _cleanup_(eh_frame_freep) EhFrame *e = NULL;
        const uint8_t *caller_fn = fixture_function("vprof_fixture_lib_leaf_caller");
        uint64_t window[WINDOW_WORDS], bias, ip;
        const uint64_t sp = FAKE_SP, bp = FAKE_SP + 32;
        UnwindRegs caller;
        size_t push, mov;
        Sections s;

        ck_assert_str_eq(base_name(module_of(caller_fn, &bias)), "libvprof-fixture.so");
        ck_assert_int_eq(eh_frame_load_path(arg_lib, &e), 0);
        fill_window(window, WINDOW_WORDS);
        find_prologue(caller_fn, &push, &mov);

        check_entry(e, bias, (uintptr_t)caller_fn);
        check_entry(e, bias, (uintptr_t)fixture_function("vprof_fixture_lib_leaf_spin"));
        check_entry(e, bias, (uintptr_t)fixture_function("vprof_fixture_lib_alpha"));

        /* After the push: CFA = rsp + 16. */
        ip = (uintptr_t)caller_fn + push + 1;
        ck_assert_int_eq(eh_frame_unwind_step(e, bias, &(UnwindRegs) { .ip = ip, .sp = sp, .bp = 7 }, window,
                                              WINDOW_WORDS, &caller),
                         0);
        ck_assert_uint_eq(caller.ip, window[1]);
        ck_assert_uint_eq(caller.sp, sp + 16);
        ck_assert_uint_eq(caller.bp, window[0]);

        /* After the mov: CFA = rbp + 16, wherever sp is; here rbp is 32 bytes above it. */
        ip = (uintptr_t)caller_fn + mov + 3;
        ck_assert_int_eq(eh_frame_unwind_step(e, bias, &(UnwindRegs) { .ip = ip, .sp = sp, .bp = bp }, window,
                                              WINDOW_WORDS, &caller),
                         0);
        ck_assert_uint_eq(caller.ip, window[5]);
        ck_assert_uint_eq(caller.sp, bp + 16);
        ck_assert_uint_eq(caller.bp, window[4]);
        /* Its frame beyond the window. */
        ck_assert_int_eq(eh_frame_unwind_step(e, bias, &(UnwindRegs) { .ip = ip, .sp = sp, .bp = sp + 1024 },
                                              window, WINDOW_WORDS, &caller),
                         -ERANGE);

        /* The PLT's CFA is a DWARF expression. */
        read_sections(arg_lib, &s);
        if (s.plt_size > 16)
                ck_assert_int_eq(eh_frame_unwind_step(e, bias,
                                                      &(UnwindRegs) { .ip = bias + s.plt_vaddr + 16, .sp = sp },
                                                      window, WINDOW_WORDS, &caller),
                                 -EOPNOTSUPP);
        sections_done(&s);
}
END_TEST

/* Every truncation and many corruptions of a real .eh_frame (and its header): errors, never a crash. */
START_TEST(test_corrupted_fixture)
{
        uint64_t window[WINDOW_WORDS];
        uint8_t *eh, *hdr;
        uint32_t seed = 777;
        Sections s;
        int r;

        read_sections(arg_lib, &s);
        fill_window(window, WINDOW_WORDS);
        eh = malloc(s.eh_frame_size);
        hdr = malloc(s.hdr_size);
        ck_assert(eh && hdr);

        for (unsigned round = 0; round < s.eh_frame_size + 1000; round++) {
                _cleanup_(eh_frame_freep) EhFrame *e = NULL;
                size_t eh_size = s.eh_frame_size, hdr_size = s.hdr_size;

                memcpy(eh, s.eh_frame, s.eh_frame_size);
                memcpy(hdr, s.hdr, s.hdr_size);
                if (round < s.eh_frame_size)
                        eh_size = round;
                else
                        for (unsigned k = 0; k < 3; k++) {
                                seed = seed * 1103515245 + 12345;
                                if ((seed >> 8) % 4 == 0)
                                        hdr[(seed >> 12) % s.hdr_size] = (uint8_t)(seed >> 24);
                                else
                                        eh[(seed >> 12) % s.eh_frame_size] = (uint8_t)(seed >> 24);
                        }

                r = eh_frame_new(eh, eh_size, s.eh_frame_vaddr, round % 2 ? hdr : NULL, round % 2 ? hdr_size : 0,
                                 s.hdr_vaddr, &e);
                ck_assert_msg(r == 0 || r == -ENOENT, "%d", r);
                if (r < 0)
                        continue;
                for (uint64_t pc = s.text_vaddr; pc < s.text_vaddr + s.text_size; pc++) {
                        UnwindRegs caller;

                        r = eh_frame_unwind_step(e, 0, &(UnwindRegs) { .ip = pc, .sp = FAKE_SP, .bp = FAKE_SP },
                                                 window, WINDOW_WORDS, &caller);
                        ck_assert_msg(allowed_error(r), "%d", r);
                }
        }
        free(eh);
        free(hdr);
        sections_done(&s);
}
END_TEST

START_TEST(test_load_files)
{
        _cleanup_(eh_frame_freep) EhFrame *e = NULL, *stripped = NULL, *no_sections = NULL;
        _cleanup_free_ char *text = test_write_temp("not an ELF file\n");
        char path[] = "/tmp/vprof-eh-frame-XXXXXX";
        EhFrame *sentinel = (EhFrame *)0x1, *none = sentinel;
        uint8_t buf[65536];
        uint64_t window[WINDOW_WORDS], bias;
        const void *spin = fixture_function("vprof_fixture_lib_leaf_spin");
        UnwindRegs regs, a, b;
        Elf64_Ehdr ehdr;
        int in, out;
        ssize_t n;

        ck_assert_int_eq(eh_frame_load_path(text, &none), -ENOEXEC);
        ck_assert_int_eq(eh_frame_load_path("/", &none), -ENOEXEC);
        ck_assert_int_eq(eh_frame_load_path("/nonexistent/file", &none), -ENOENT);
        ck_assert_ptr_eq(none, sentinel);
        unlink(text);

        ck_assert_int_eq(eh_frame_load_path(arg_lib, &e), 0);
        ck_assert_int_eq(eh_frame_load_path(arg_lib_stripped, &stripped), 0);
        ck_assert_uint_eq(eh_frame_count(e), eh_frame_count(stripped));

        /* A copy without section headers: found through PT_GNU_EH_FRAME, as the loader does. */
        in = open(arg_lib, O_RDONLY | O_CLOEXEC);
        ck_assert_int_ge(in, 0);
        out = mkstemp(path);
        ck_assert_int_ge(out, 0);
        while ((n = read(in, buf, sizeof(buf))) > 0)
                ck_assert_int_eq(write(out, buf, (size_t)n), n);
        close(in);
        ck_assert_int_eq(pread(out, &ehdr, sizeof(ehdr), 0), (ssize_t)sizeof(ehdr));
        ehdr.e_shoff = 0;
        ehdr.e_shnum = 0;
        ehdr.e_shstrndx = 0;
        ck_assert_int_eq(pwrite(out, &ehdr, sizeof(ehdr), 0), (ssize_t)sizeof(ehdr));
        close(out);
        ck_assert_int_eq(eh_frame_load_path(path, &no_sections), 0);
        unlink(path);
        ck_assert_uint_eq(eh_frame_count(no_sections), eh_frame_count(e));

        module_of(spin, &bias);
        regs = (UnwindRegs) { .ip = (uintptr_t)spin + 1, .sp = FAKE_SP };
        fill_window(window, WINDOW_WORDS);
        ck_assert_int_eq(eh_frame_unwind_step(e, bias, &regs, window, WINDOW_WORDS, &a), 0);
        ck_assert_int_eq(eh_frame_unwind_step(no_sections, bias, &regs, window, WINDOW_WORDS, &b), 0);
        ck_assert(a.ip == b.ip && a.sp == b.sp && a.bp == b.bp);
}
END_TEST

/* ---- Real unwinds: registers and stack of a thread interrupted by a signal ---- */

typedef struct Interrupted {
        uint64_t ip, sp, bp;
        uint64_t window[WINDOW_WORDS];
        uint64_t fp_return_address; /* at [bp + 8], where a frame-pointer walk takes the next frame from */
        bool taken;
} Interrupted;

static Interrupted interrupted;
static volatile int spin_stop;

/* Reads of other frames' stack, which the sanitizer would take for overflows. */
__attribute__((no_sanitize("address"))) static void copy_words(uint64_t *dst, uint64_t addr, size_t n)
{
        const volatile uint64_t *src = (const volatile uint64_t *)addr;

        for (size_t i = 0; i < n; i++)
                dst[i] = src[i];
}

static void on_signal(int sig, siginfo_t *si, void *data)
{
        const ucontext_t *uc = data;

        (void)sig;
        (void)si;
        if (interrupted.taken)
                return;
        interrupted.ip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
        interrupted.sp = (uint64_t)uc->uc_mcontext.gregs[REG_RSP];
        interrupted.bp = (uint64_t)uc->uc_mcontext.gregs[REG_RBP];
        copy_words(interrupted.window, interrupted.sp, WINDOW_WORDS);
        if (interrupted.bp != 0)
                copy_words(&interrupted.fp_return_address, interrupted.bp + 8, 1);
        interrupted.taken = true;
        spin_stop = 1;
}

static void arm(int sig, int which, long usec)
{
        struct sigaction sa = { .sa_sigaction = on_signal, .sa_flags = SA_SIGINFO };
        struct itimerval it = { .it_value = { .tv_usec = usec }, .it_interval = { .tv_usec = usec } };

        interrupted = (Interrupted) {};
        spin_stop = 0;
        sigemptyset(&sa.sa_mask);
        ck_assert_int_eq(sigaction(sig, &sa, NULL), 0);
        ck_assert_int_eq(setitimer(which, &it, NULL), 0);
}

static void disarm(int sig, int which)
{
        struct itimerval it = {};

        ck_assert_int_eq(setitimer(which, &it, NULL), 0);
        signal(sig, SIG_DFL);
}

static void check_function(AddressSpace *as, uint64_t addr, bool return_address, const char *function)
{
        Symbol sym;

        ck_assert_int_eq(address_space_resolve(as, addr, return_address, &sym), 0);
        ck_assert_msg(sym.function && strcmp(sym.function, function) == 0, "%#llx is in %s:%s, not %s",
                      (unsigned long long)addr, sym.module, sym.function ?: "?", function);
}

START_TEST(test_unwind_interrupted_leaf)
{
        _cleanup_(symbolizer_freep) Symbolizer *s = NULL;
        _cleanup_(address_space_freep) AddressSpace *as = NULL;
        _cleanup_(eh_frame_freep) EhFrame *e = NULL;
        int (*caller_fn)(volatile int *) = fixture_function("vprof_fixture_lib_leaf_caller");
        uint64_t ra = 0, bias;
        UnwindRegs caller;
        Symbol sym;
        unsigned attempt;

        ck_assert_int_eq(symbolizer_new(&s), 0);
        ck_assert_int_eq(address_space_new(s, getpid(), &as), 0);

        /* The signal may come before the spin starts: then it stops at once, and we try again. */
        for (attempt = 0; attempt < 50; attempt++) {
                arm(SIGPROF, ITIMER_PROF, 2000);
                caller_fn(&spin_stop);
                disarm(SIGPROF, ITIMER_PROF);
                ck_assert(interrupted.taken);
                ck_assert_int_eq(address_space_resolve(as, interrupted.ip, false, &sym), 0);
                if (sym.function && strcmp(sym.function, "vprof_fixture_lib_leaf_spin") == 0)
                        break;
        }
        ck_assert_uint_lt(attempt, 50);

        ck_assert_int_eq(unwinder_leaf(as, interrupted.ip, interrupted.sp, interrupted.bp,
                                       interrupted.window, WINDOW_WORDS, &ra),
                         0);
        check_function(as, ra, true, "vprof_fixture_lib_leaf_caller");
        /* What the frame-pointer walk has instead: the caller's caller, the caller lost. */
        ck_assert_uint_ne(ra, interrupted.fp_return_address);
        ck_assert_int_eq(address_space_resolve(as, interrupted.fp_return_address, true, &sym), 0);
        ck_assert(!sym.function || strcmp(sym.function, "vprof_fixture_lib_leaf_caller") != 0);

        /* The same from the file, with the CFA: a leaf without a frame has it right above the return
         * address. */
        module_of((void *)(uintptr_t)interrupted.ip, &bias);
        ck_assert_int_eq(eh_frame_load_path(arg_lib, &e), 0);
        ck_assert_int_eq(eh_frame_unwind_step(e, bias,
                                              &(UnwindRegs) { .ip = interrupted.ip, .sp = interrupted.sp,
                                                              .bp = interrupted.bp },
                                              interrupted.window, WINDOW_WORDS, &caller),
                         0);
        ck_assert_uint_eq(caller.ip, ra);
        ck_assert_uint_eq(caller.sp, interrupted.sp + 8);
        ck_assert_uint_eq(caller.bp, interrupted.bp);
}
END_TEST

static volatile ssize_t blocked_read_result;

/* Calls libc's read() itself, not a sanitizer's interceptor; the store after the call keeps it a call. */
_noipa_ static void blocked_read(ssize_t (*fn)(int, void *, size_t), int fd)
{
        char c;

        blocked_read_result = fn(fd, &c, 1);
}

START_TEST(test_unwind_blocked_syscall)
{
        _cleanup_(symbolizer_freep) Symbolizer *s = NULL;
        _cleanup_(address_space_freep) AddressSpace *as = NULL;
        ssize_t (*read_fn)(int, void *, size_t) = libc_function("read");
        uint64_t ra = 0;
        Symbol sym;
        int fds[2];

        ck_assert_int_eq(pipe(fds), 0);
        ck_assert_int_eq(symbolizer_new(&s), 0);
        ck_assert_int_eq(address_space_new(s, getpid(), &as), 0);

        /* Nothing is ever written: read() blocks in the kernel until the signal, without SA_RESTART. */
        arm(SIGALRM, ITIMER_REAL, 100000);
        blocked_read(read_fn, fds[0]);
        disarm(SIGALRM, ITIMER_REAL);
        ck_assert_int_eq(blocked_read_result, -1);
        ck_assert(interrupted.taken);
        close(fds[0]);
        close(fds[1]);

        ck_assert_int_eq(address_space_resolve(as, interrupted.ip, false, &sym), 0);
        ck_assert_msg(strncmp(sym.module, "libc.so", 7) == 0, "interrupted in %s", sym.module);
        ck_assert_int_eq(unwinder_leaf(as, interrupted.ip, interrupted.sp, interrupted.bp,
                                       interrupted.window, WINDOW_WORDS, &ra),
                         0);
        check_function(as, ra, true, "blocked_read");
}
END_TEST

START_TEST(test_unwind_leaf_without_file)
{
        _cleanup_(symbolizer_freep) Symbolizer *s = NULL;
        _cleanup_(address_space_freep) AddressSpace *as = NULL;
        _cleanup_(proc_maps_freep) ProcMaps *m = NULL;
        uint64_t window[WINDOW_WORDS], ra = 0x77;
        const size_t size = 4096;
        void *anon;

        fill_window(window, WINDOW_WORDS);
        anon = mmap(NULL, size, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        ck_assert(anon != MAP_FAILED);
        ck_assert_int_eq(symbolizer_new(&s), 0);
        ck_assert_int_eq(address_space_new(s, getpid(), &as), 0);

        ck_assert_int_eq(unwinder_leaf(as, 0x10, FAKE_SP, 0, window, WINDOW_WORDS, &ra), -ENOENT);
        ck_assert_int_eq(unwinder_leaf(as, (uintptr_t)anon + 16, FAKE_SP, 0, window, WINDOW_WORDS,
                                       &ra),
                         -ENOENT);
        ck_assert_int_eq(proc_maps_read(getpid(), &m), 0);
        for (size_t i = 0; i < m->n; i++)
                if (m->maps[i].path && strcmp(m->maps[i].path, "[vdso]") == 0)
                        ck_assert_int_eq(unwinder_leaf(as, m->maps[i].start + 16, FAKE_SP, 0, window,
                                                       WINDOW_WORDS, &ra),
                                         -ENOENT);
        ck_assert_uint_eq(ra, 0x77);
        /* A stack: data, not code. */
        ck_assert_int_eq(unwinder_leaf(as, (uintptr_t)&ra, FAKE_SP, 0, window, WINDOW_WORDS, &ra),
                         -ENOENT);
        munmap(anon, size);
}
END_TEST

/* The file changes while its CFI is read, after its headers: cut short, or rewritten in place. -EIO, and the
 * output stays untouched; a .eh_frame claiming more than the bound is refused. */
START_TEST(test_changed_while_read)
{
        _cleanup_(eh_frame_freep) EhFrame *e = NULL;
        _cleanup_free_ char *path = test_copy_temp(arg_lib, "lib.so");
        EhFrame *sentinel = (EhFrame *)0x1, *none = sentinel;
        struct stat st;

        ck_assert_int_eq(stat(path, &st), 0);
        pread_hook_arm(path, 3, 1024, false);
        ck_assert_int_eq(eh_frame_load_path(path, &none), -EIO);
        ck_assert_ptr_eq(none, sentinel);
        ck_assert_uint_ge(pread_hook.short_reads, 1);

        pread_hook_arm(path, 3, st.st_size, true);
        ck_assert_int_eq(eh_frame_load_path(path, &none), -EIO);
        ck_assert_ptr_eq(none, sentinel);

        pread_hook_disarm();
        ck_assert_int_eq(eh_frame_load_path(path, &e), 0);
        ck_assert_uint_gt(eh_frame_count(e), 0);
        unlink(path);
}
END_TEST

int main(int argc, char *argv[])
{
        Suite *s = suite_create("eh-frame");
        TCase *tc = tcase_create("core");

        if (argc != 3) {
                fprintf(stderr, "usage: %s LIB STRIPPED-LIB\n", argv[0]);
                return 2;
        }
        arg_lib = argv[1];
        arg_lib_stripped = argv[2];

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_cie_rules);
        tcase_add_test(tc, test_prologue_epilogue);
        tcase_add_test(tc, test_other_instructions);
        tcase_add_test(tc, test_unsupported_and_malformed_programs);
        tcase_add_test(tc, test_hdr_table);
        tcase_add_test(tc, test_empty_and_garbage);
        tcase_add_test(tc, test_libc_entry_points);
        tcase_add_test(tc, test_fixture_prologue);
        tcase_add_test(tc, test_corrupted_fixture);
        tcase_add_test(tc, test_load_files);
        tcase_add_test(tc, test_unwind_interrupted_leaf);
        tcase_add_test(tc, test_unwind_blocked_syscall);
        tcase_add_test(tc, test_unwind_leaf_without_file);
        tcase_add_test(tc, test_changed_while_read);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
