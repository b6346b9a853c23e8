/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The compiler of unwind tables (common/unwind/unwind-table.c) on real files: the rules it gives the forms
 * of CFI that GCC and glibc write, on the fixtures built by GCC without frame pointers (tests/fixtures,
 * fixture-unwind.c, and its copies without CFI or with a damaged .eh_frame) and on this system's libc and
 * python3.11; the table's invariants; and the property that matters to the BPF program: at every byte of the
 * fixtures' code and at 100,000 addresses of libc, the table's rule is the rule of the row the interpreter
 * finds there (unwind-table-check.h); and the digest that keys a shared table (eh_frame_digest()): the same
 * for the same CFI, another for other CFI of the same build-id. Hand-made CFI: test-unwind-table-cfi.c. */
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <gnu/libc-version.h>
#include <libelf.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "check-main.h"
#include "test-util.h"
#include "unwind-table-check.h"

/* From the command line: fixture-unwind, its library, its copy without CFI, and the two damaged copies. */
static const char *arg_prog, *arg_lib, *arg_nocfi, *arg_garbage, *arg_truncated;

/* ---- ELF files, read with libelf apart from the code under test ---- */

typedef struct ElfSym {
        uint64_t value, size;
} ElfSym;

static Elf *elf_open_path(const char *path, int *ret_fd)
{
        Elf *elf;

        ck_assert(elf_version(EV_CURRENT) != EV_NONE);
        *ret_fd = open(path, O_RDONLY | O_CLOEXEC);
        ck_assert_msg(*ret_fd >= 0, "%s: %m", path);
        elf = elf_begin(*ret_fd, ELF_C_READ, NULL);
        ck_assert_ptr_nonnull(elf);
        return elf;
}

/* A function of .symtab or .dynsym; false when there is none of that name. */
static bool elf_function(const char *path, const char *name, ElfSym *ret)
{
        Elf_Scn *scn = NULL;
        bool found = false;
        int fd;
        Elf *elf = elf_open_path(path, &fd);

        while (!found && (scn = elf_nextscn(elf, scn))) {
                GElf_Shdr shdr;
                Elf_Data *data;

                if (!gelf_getshdr(scn, &shdr) || !IN_SET(shdr.sh_type, SHT_SYMTAB, SHT_DYNSYM) ||
                    shdr.sh_entsize == 0 || !(data = elf_getdata(scn, NULL)))
                        continue;
                for (size_t i = 0; i < shdr.sh_size / shdr.sh_entsize; i++) {
                        GElf_Sym sym;
                        const char *s;

                        if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
                            sym.st_value == 0)
                                continue;
                        s = elf_strptr(elf, shdr.sh_link, sym.st_name);
                        if (s && strcmp(s, name) == 0) {
                                *ret = (ElfSym) { .value = sym.st_value, .size = sym.st_size };
                                found = true;
                                break;
                        }
                }
        }
        elf_end(elf);
        close(fd);
        return found;
}

static ElfSym function(const char *path, const char *name)
{
        ElfSym sym;

        ck_assert_msg(elf_function(path, name, &sym), "%s: no function %s", path, name);
        return sym;
}

/* A section's address and size, and optionally a copy of its bytes; false when there is none. */
static bool elf_section(const char *path, const char *name, uint64_t *ret_addr, uint64_t *ret_size,
                        uint8_t **ret_copy)
{
        Elf_Scn *scn = NULL;
        bool found = false;
        size_t shstrndx;
        int fd;
        Elf *elf = elf_open_path(path, &fd);

        ck_assert_int_eq(elf_getshdrstrndx(elf, &shstrndx), 0);
        while (!found && (scn = elf_nextscn(elf, scn))) {
                GElf_Shdr shdr;
                const char *s;

                if (!gelf_getshdr(scn, &shdr) || !(s = elf_strptr(elf, shstrndx, shdr.sh_name)) ||
                    strcmp(s, name) != 0)
                        continue;
                *ret_addr = shdr.sh_addr;
                *ret_size = shdr.sh_size;
                if (ret_copy) {
                        Elf_Data *data = elf_rawdata(scn, NULL);

                        ck_assert(data && data->d_size == shdr.sh_size);
                        *ret_copy = malloc(data->d_size);
                        ck_assert_ptr_nonnull(*ret_copy);
                        memcpy(*ret_copy, data->d_buf, data->d_size);
                }
                found = true;
        }
        elf_end(elf);
        close(fd);
        return found;
}

static EhFrame *load(const char *path)
{
        EhFrame *e = NULL;

        ck_assert_int_eq(eh_frame_load_path(path, &e), 0);
        return e;
}

/* Every byte of a section of the file. */
static void check_section_property(const char *path, const EhFrame *e, const UnwindTable *t, const char *name)
{
        uint64_t addr, size;

        if (!elf_section(path, name, &addr, &size, NULL))
                return;
        for (uint64_t pc = addr; pc < addr + size; pc++)
                check_pc(t, e, pc);
}

/* The rule at a function's byte off, checked against the interpreter on the way. */
static uint32_t rule_in(const UnwindTable *t, const EhFrame *e, ElfSym fn, uint64_t off)
{
        ck_assert_uint_lt(off, fn.size);
        check_pc(t, e, fn.value + off);
        return rule_at(t, fn.value + off);
}

/* Whether some byte of the function has the rule, and where. */
static bool function_has(const UnwindTable *t, ElfSym fn, bool (*match)(uint32_t rule), uint64_t *ret_at)
{
        for (uint64_t off = 0; off < fn.size; off++)
                if (match(rule_at(t, fn.value + off))) {
                        if (ret_at)
                                *ret_at = fn.value + off;
                        return true;
                }
        return false;
}

static bool is_frame_pointer(uint32_t rule)
{
        return rule == RULE(CFA_RBP, RBP_CFA(-2), 16);
}

static bool is_drap(uint32_t rule)
{
        /* CFA = *(rbp - 8k), the caller's rbp at [rbp]. */
        return VPROF_UNWIND_RULE_KIND(rule) == VPROF_UNWIND_DEREF_RBP && VPROF_UNWIND_RULE_DEREF_A(rule) < 0 &&
               VPROF_UNWIND_RULE_DEREF_A(rule) % 8 == 0 && VPROF_UNWIND_RULE_DEREF_B(rule) == 0 &&
               VPROF_UNWIND_RULE_RBP_FROM_RBP(rule) && VPROF_UNWIND_RULE_RBP_WORDS(rule) == 0;
}

static bool is_drap_register(uint32_t rule)
{
        /* Before the frame is set up and after it is torn down: CFA = r10 (the DRAP register) + 0. */
        return VPROF_UNWIND_RULE_KIND(rule) == VPROF_UNWIND_REG_LEAF && VPROF_UNWIND_RULE_OFF(rule) == 0;
}

static bool is_big_frame(uint32_t rule)
{
        return VPROF_UNWIND_RULE_KIND(rule) == VPROF_UNWIND_CFA_RSP && VPROF_UNWIND_RULE_OFF(rule) > 70000;
}

static bool is_pushed(uint32_t rule)
{
        return VPROF_UNWIND_RULE_KIND(rule) == VPROF_UNWIND_CFA_RSP && VPROF_UNWIND_RULE_OFF(rule) > 8;
}

static bool is_not_leaf_rule(uint32_t rule)
{
        return rule != RULE(CFA_RSP, 0, 8);
}

/* ---- The fixtures ---- */

START_TEST(test_fixture_kinds)
{
        _cleanup_(eh_frame_freep) EhFrame *e = load(arg_prog);
        _cleanup_(unwind_table_freep) UnwindTable *t = compile(e);
        ElfSym fn;
        uint64_t at, plt, plt_size;
        _cleanup_free_ uint8_t *text = NULL;
        uint64_t text_addr, text_size;

        check_invariants(t);
        check_slices(e, t);
        ck_assert_uint_eq(t->stats.fdes_skipped, 0);
        ck_assert_uint_eq(t->stats.fdes_bad, 0);

        /* At every function's first byte: the return address on top of the stack. */
        static const char *const functions[] = { "unwind_leaf",       "unwind_recurse",   "unwind_plt",
                                                 "unwind_callback",   "unwind_alloca",    "unwind_tail",
                                                 "unwind_tail_target", "unwind_drap",      "unwind_big_frame",
                                                 "unwind_escape",     "unwind_noreturn",  "unwind_round",
                                                 "main" };
        for (size_t i = 0; i < ELEMENTSOF(functions); i++)
                assert_rule(rule_in(t, e, function(arg_prog, functions[i]), 0), RULE(CFA_RSP, 0, 8),
                            function(arg_prog, functions[i]).value);

        /* A leaf and a tail-calling function without a frame: the entry's rule throughout. */
        ck_assert(!function_has(t, function(arg_prog, "unwind_leaf"), is_not_leaf_rule, NULL));
        ck_assert(!function_has(t, function(arg_prog, "unwind_tail"), is_not_leaf_rule, NULL));
        /* Pushes. */
        ck_assert(function_has(t, function(arg_prog, "unwind_recurse"), is_pushed, NULL));
        /* alloca: a frame pointer, the caller's rbp saved at CFA - 16. */
        ck_assert(function_has(t, function(arg_prog, "unwind_alloca"), is_frame_pointer, NULL));
        /* A realigned stack: the DRAP register, then the CFA through the frame. */
        ck_assert(function_has(t, function(arg_prog, "unwind_drap"), is_drap, NULL));
        ck_assert(function_has(t, function(arg_prog, "unwind_drap"), is_drap_register, &at));
        ck_assert_uint_eq(VPROF_UNWIND_RULE_REG(rule_at(t, at)), 10);
        ck_assert(function_has(t, function(arg_prog, "unwind_big_frame"), is_big_frame, NULL));

        /* The noreturn call is the last instruction: its return address is the first byte after the
         * function, which a lookup takes one byte back, in the call. */
        fn = function(arg_prog, "unwind_noreturn");
        ck_assert(elf_section(arg_prog, ".text", &text_addr, &text_size, &text));
        ck_assert_uint_ge(fn.value, text_addr + 5);
        ck_assert_uint_le(fn.value + fn.size, text_addr + text_size);
        ck_assert_uint_eq(text[fn.value + fn.size - 5 - text_addr], 0xe8);
        assert_rule(rule_in(t, e, fn, fn.size - 1), RULE(CFA_RSP, 0, 16), fn.value + fn.size - 1);

        /* _start: the end of the stack. */
        fn = function(arg_prog, "_start");
        assert_rule(rule_in(t, e, fn, 0), RULE(END, 0, 0), fn.value);
        assert_rule(rule_in(t, e, fn, fn.size - 1), RULE(END, 0, 0), fn.value + fn.size - 1);

        /* The PLT: its first entry pushes, then every entry's CFA is the expression. */
        ck_assert(elf_section(arg_prog, ".plt", &plt, &plt_size, NULL));
        ck_assert_uint_ge(plt_size, 32);
        assert_rule(rule_at(t, plt), RULE(CFA_RSP, 0, 16), plt);
        assert_rule(rule_at(t, plt + 6), RULE(CFA_RSP, 0, 24), plt + 6);
        for (uint64_t pc = plt + 16; pc < plt + plt_size; pc++)
                assert_rule(rule_at(t, pc), RULE(PLT, 0, 11), pc);

        /* Past the last function: nothing. */
        ck_assert_uint_eq(rule_at(t, t->end), GAP_RULE);
        ck_assert_uint_eq(rule_at(t, t->end + 4096), GAP_RULE);
        ck_assert_uint_ge(t->stats.by_kind[VPROF_UNWIND_GAP], 2);
}
END_TEST

START_TEST(test_fixture_library)
{
        _cleanup_(eh_frame_freep) EhFrame *e = load(arg_lib);
        _cleanup_(unwind_table_freep) UnwindTable *t = compile(e);
        ElfSym fn = function(arg_lib, "vprof_unwind_lib_call");
        uint64_t plt, plt_size;

        check_invariants(t);
        check_slices(e, t);
        assert_rule(rule_in(t, e, fn, 0), RULE(CFA_RSP, 0, 8), fn.value);
        ck_assert(function_has(t, fn, is_pushed, NULL));
        fn = function(arg_lib, "vprof_unwind_lib_work");
        ck_assert(!function_has(t, fn, is_not_leaf_rule, NULL));
        if (elf_section(arg_lib, ".plt", &plt, &plt_size, NULL) && plt_size > 16)
                assert_rule(rule_at(t, plt + 16), RULE(PLT, 0, 11), plt + 16);
}
END_TEST

/* Every byte of the fixtures' code, as the interpreter finds it. */
START_TEST(test_fixture_property)
{
        const char *const paths[] = { arg_prog, arg_lib, arg_nocfi, arg_truncated };

        for (size_t i = 0; i < ELEMENTSOF(paths); i++) {
                _cleanup_(eh_frame_freep) EhFrame *e = load(paths[i]);
                _cleanup_(unwind_table_freep) UnwindTable *t = compile(e);

                check_invariants(t);
                check_section_property(paths[i], e, t, ".init");
                check_section_property(paths[i], e, t, ".plt");
                check_section_property(paths[i], e, t, ".plt.got");
                check_section_property(paths[i], e, t, ".text");
                check_section_property(paths[i], e, t, ".fini");
        }
}
END_TEST

START_TEST(test_fixture_without_cfi)
{
        _cleanup_(eh_frame_freep) EhFrame *e = load(arg_nocfi), *full = load(arg_prog);
        _cleanup_(unwind_table_freep) UnwindTable *t = compile(e);
        ElfSym fn = function(arg_nocfi, "unwind_recurse");

        /* The C runtime's functions alone: ours have no row. */
        check_invariants(t);
        ck_assert_uint_lt(t->stats.fdes, eh_frame_count(full));
        for (uint64_t pc = fn.value; pc < fn.value + fn.size; pc++)
                ck_assert_uint_eq(rule_at(t, pc), GAP_RULE);
        fn = function(arg_nocfi, "_start");
        assert_rule(rule_at(t, fn.value), RULE(END, 0, 0), fn.value);
}
END_TEST

/* A section's offset in the file. */
static uint64_t section_offset(const char *path, const char *name)
{
        Elf_Scn *scn = NULL;
        uint64_t offset = 0;
        size_t shstrndx;
        int fd;
        Elf *elf = elf_open_path(path, &fd);

        ck_assert_int_eq(elf_getshdrstrndx(elf, &shstrndx), 0);
        while (offset == 0 && (scn = elf_nextscn(elf, scn))) {
                GElf_Shdr shdr;
                const char *s;

                if (gelf_getshdr(scn, &shdr) && (s = elf_strptr(elf, shstrndx, shdr.sh_name)) &&
                    strcmp(s, name) == 0)
                        offset = shdr.sh_offset;
        }
        elf_end(elf);
        close(fd);
        ck_assert_uint_gt(offset, 0);
        return offset;
}

static bool same_digest(const EhFrame *a, const EhFrame *b)
{
        return memcmp(eh_frame_digest(a), eh_frame_digest(b), EH_FRAME_DIGEST_SIZE) == 0;
}

static void assert_same_table(const UnwindTable *a, const UnwindTable *b)
{
        ck_assert_uint_eq(a->base, b->base);
        ck_assert_uint_eq(a->n_index, b->n_index);
        ck_assert_uint_eq(a->n_rows, b->n_rows);
        ck_assert_int_eq(memcmp(a->index, b->index, a->n_index * sizeof(*a->index)), 0);
        ck_assert_int_eq(memcmp(a->rows, b->rows, a->n_rows * sizeof(*a->rows)), 0);
}

/* The key of a shared table: the same for a copy of the file (another inode, the same CFI), which compiles
 * to the same table; another for each change of the CFI with the build-id kept (the damaged copies, one byte
 * of .eh_frame, the same bytes at another address). */
START_TEST(test_digest_key)
{
        _cleanup_(eh_frame_freep) EhFrame *prog = load(arg_prog), *again = load(arg_prog), *copy = NULL,
                                          *truncated = load(arg_truncated), *garbage = NULL, *flipped = NULL,
                                          *at = NULL, *moved = NULL, *at_again = NULL;
        _cleanup_(unwind_table_freep) UnwindTable *t_prog = NULL, *t_copy = NULL;
        _cleanup_free_ char *copy_path = test_copy_temp(arg_prog, "copy"),
                            *flipped_path = test_copy_temp(arg_prog, "flipped");
        _cleanup_free_ uint8_t *eh = NULL, *id = NULL, *id_truncated = NULL, *id_garbage = NULL;
        uint64_t offset, size, addr, id_size, id_addr;
        uint8_t *data;
        uint8_t byte, digest[EH_FRAME_DIGEST_SIZE];
        int fd, r;

        /* The damaged copies keep the build-id: only the CFI tells them apart. */
        ck_assert(elf_section(arg_prog, ".note.gnu.build-id", &id_addr, &id_size, &data));
        id = data;
        ck_assert(elf_section(arg_truncated, ".note.gnu.build-id", &id_addr, &id_size, &data));
        id_truncated = data;
        ck_assert(elf_section(arg_garbage, ".note.gnu.build-id", &id_addr, &id_size, &data));
        id_garbage = data;
        ck_assert_int_eq(memcmp(id, id_truncated, id_size), 0);
        ck_assert_int_eq(memcmp(id, id_garbage, id_size), 0);

        ck_assert(same_digest(prog, again));
        ck_assert_uint_gt(eh_frame_digest_compute(prog, digest), 0);
        ck_assert_int_eq(memcmp(digest, eh_frame_digest(prog), EH_FRAME_DIGEST_SIZE), 0);
        copy = load(copy_path);
        ck_assert(same_digest(prog, copy));
        t_prog = compile(prog);
        t_copy = compile(copy);
        assert_same_table(t_prog, t_copy);

        ck_assert(!same_digest(prog, truncated));
        r = eh_frame_load_path(arg_garbage, &garbage);
        ck_assert_msg(IN_SET(r, 0, -ENOENT), "%d", r);
        if (r == 0)
                ck_assert(!same_digest(prog, garbage));

        /* One byte of .eh_frame's first CIE: its code alignment factor. */
        offset = section_offset(flipped_path, ".eh_frame");
        fd = open(flipped_path, O_RDWR | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(pread(fd, &byte, 1, (off_t)offset + 10), 1);
        byte ^= 0x02;
        ck_assert_int_eq(pwrite(fd, &byte, 1, (off_t)offset + 10), 1);
        close(fd);
        flipped = load(flipped_path);
        ck_assert(!same_digest(prog, flipped));

        /* The same bytes elsewhere: pc-relative pointers name other functions. */
        ck_assert(elf_section(arg_prog, ".eh_frame", &addr, &size, &data));
        eh = data;
        ck_assert_int_eq(eh_frame_new(eh, size, addr, NULL, 0, 0, &at), 0);
        ck_assert_int_eq(eh_frame_new(eh, size, addr, NULL, 0, 0, &at_again), 0);
        ck_assert_int_eq(eh_frame_new(eh, size, addr + 4096, NULL, 0, 0, &moved), 0);
        ck_assert(same_digest(at, at_again));
        ck_assert(!same_digest(at, moved));

        unlink(copy_path);
        unlink(flipped_path);
}
END_TEST

START_TEST(test_fixture_damaged)
{
        _cleanup_(eh_frame_freep) EhFrame *garbage = NULL, *truncated = load(arg_truncated),
                                         *full = load(arg_prog);
        _cleanup_(unwind_table_freep) UnwindTable *t = NULL, *whole = compile(full);
        int r;

        /* Garbage: nothing to compile, or a table that holds together. */
        r = eh_frame_load_path(arg_garbage, &garbage);
        ck_assert_msg(IN_SET(r, 0, -ENOENT), "%d", r);
        if (r == 0) {
                r = compile_sliced(garbage, 3, &t);
                ck_assert_msg(IN_SET(r, 0, -ENOENT), "%d", r);
                if (r == 0) {
                        check_invariants(t);
                        check_section_property(arg_garbage, garbage, t, ".text");
                        t = unwind_table_free(t);
                }
        }

        /* Cut in the middle: the functions before the cut. */
        t = compile(truncated);
        check_invariants(t);
        ck_assert_uint_gt(t->stats.fdes, 0);
        ck_assert_uint_lt(t->stats.fdes, whole->stats.fdes);
}
END_TEST

/* ---- libc and python3.11 ---- */

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

/* The file holding addr and its load bias. */
static const char *module_of(const void *addr, uint64_t *ret_bias)
{
        struct link_map *lm = NULL;
        Dl_info info;

        ck_assert(dladdr1(addr, &info, (void **)&lm, RTLD_DL_LINKMAP) != 0);
        ck_assert_ptr_nonnull(lm);
        *ret_bias = lm->l_addr;
        return info.dli_fname;
}

static void noop_handler(int sig)
{
        (void)sig;
}

/* Where the kernel returns from a signal handler: libc's __restore_rt, which libc's sigaction() installs
 * as the restorer, read back from the kernel. */
static uint64_t restore_rt(void)
{
        struct kernel_sigaction {
                void *handler;
                unsigned long flags;
                void *restorer;
                uint64_t mask;
        } k = {};
        int (*libc_sigaction)(int, const struct sigaction *, struct sigaction *) = libc_function("sigaction");
        struct sigaction sa = { .sa_handler = noop_handler }, old;

        sigemptyset(&sa.sa_mask);
        ck_assert_int_eq(libc_sigaction(SIGUSR2, &sa, &old), 0);
        ck_assert_int_eq(syscall(SYS_rt_sigaction, SIGUSR2, NULL, &k, sizeof(k.mask)), 0);
        ck_assert_int_eq(libc_sigaction(SIGUSR2, &old, NULL), 0);
        ck_assert_ptr_nonnull(k.restorer);
        return (uint64_t)(uintptr_t)k.restorer;
}

/* The END rows in [lo, hi). */
static size_t end_rows_in(const UnwindTable *t, uint64_t lo, uint64_t hi)
{
        size_t n = 0;

        for (size_t i = 0; i < t->n_rows; i++)
                if (t->rows[i].b == RULE(END, 0, 0) && t->base + t->rows[i].a >= lo && t->base + t->rows[i].a < hi)
                        n++;
        return n;
}

START_TEST(test_libc)
{
        uint64_t bias, restorer = restore_rt(), clone3 = 0;
        const char *path = module_of((void *)(uintptr_t)restorer, &bias);
        _cleanup_(eh_frame_freep) EhFrame *e = load(path);
        _cleanup_(unwind_table_freep) UnwindTable *t = compile(e);
        _cleanup_free_ uint8_t *text = NULL;
        uint64_t text_addr, text_size;
        ElfSym clone;

        ck_assert_msg(strstr(path, "libc.so"), "__restore_rt in %s", path);
        check_invariants(t);
        check_slices(e, t);
        printf("%s: FDEs %u, CFA rows %u, rows %u, index %u: %zu bytes\n", path, t->stats.fdes, t->stats.cfa_rows,
               t->n_rows, t->n_index, unwind_table_size(t));

        /* The signal trampoline, from one byte before it (the unwinders' return address - 1). */
        assert_rule(rule_at(t, restorer - bias), RULE(SIGNAL, 0, 0), restorer - bias);
        assert_rule(rule_at(t, restorer - bias - 1), RULE(SIGNAL, 0, 0), restorer - bias - 1);
        ck_assert_uint_eq(t->stats.by_kind[VPROF_UNWIND_SIGNAL], 1);

        /* clone's child, and clone3's (not exported: found by its system call, mov $435,%eax). */
        ck_assert(elf_function(path, "clone", &clone));
        ck_assert_uint_eq(end_rows_in(t, clone.value, clone.value + clone.size), 1);
        ck_assert(elf_section(path, ".text", &text_addr, &text_size, &text));
        for (size_t i = 0; i < t->n_rows && !clone3; i++) {
                uint64_t at = t->base + t->rows[i].a;

                if (t->rows[i].b != RULE(END, 0, 0) || at < text_addr + 64 || at >= text_addr + text_size ||
                    (at >= clone.value && at < clone.value + clone.size))
                        continue;
                for (uint64_t p = at - 64; p < at; p++)
                        if (memcmp(text + (p - text_addr), "\xb8\xb3\x01\x00\x00\x0f\x05", 7) == 0)
                                clone3 = at;
        }
        ck_assert_msg(clone3 != 0, "no END row after clone3's system call");
        ck_assert_uint_ge(t->stats.by_kind[VPROF_UNWIND_END], 2);
        ck_assert_uint_ge(t->stats.by_kind[VPROF_UNWIND_PLT], 1);
        /* A few hand-written functions: __longjmp (CFA in rdi, the return address in rdx), setcontext, vfork. */
        ck_assert_uint_le(t->stats.by_kind[VPROF_UNWIND_UNSUPPORTED], 10);

        /* Debian 12's libc as the design measured it: 3,713 FDEs, 25,212 CFA rows, 23,330 rows. */
        if (strcmp(gnu_get_libc_version(), "2.36") == 0 && strcmp(path, "/lib/x86_64-linux-gnu/libc.so.6") == 0) {
                ck_assert_uint_eq(t->stats.fdes, 3713);
                ck_assert_uint_eq(t->stats.cfa_rows, 25212);
                ck_assert_uint_ge(t->n_rows, 23000);
                ck_assert_uint_le(t->n_rows, 23700);
                ck_assert_uint_le(unwind_table_size(t), 200 * 1024);
        } else {
                ck_assert_uint_ge(t->n_rows, 10000);
                ck_assert_uint_lt(t->n_rows, t->stats.cfa_rows);
        }
}
END_TEST

/* At least 100,000 addresses of libc, in windows of 1 KiB at random and around every rule that is not a plain
 * CFA = rsp/rbp + n: the table against the interpreter. */
START_TEST(test_libc_property)
{
        uint64_t bias;
        const char *path = module_of(libc_function("read"), &bias);
        _cleanup_(eh_frame_freep) EhFrame *e = load(path);
        _cleanup_(unwind_table_freep) UnwindTable *t = compile(e);
        uint64_t seed = 15, checked = 0, span = t->end - t->base;

        for (unsigned w = 0; w < 104; w++) {
                uint64_t start;

                seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                start = t->base + (seed >> 16) % (span - 1024);
                for (uint64_t pc = start; pc < start + 1024; pc++, checked++)
                        check_pc(t, e, pc);
        }
        for (size_t i = 0; i < t->n_rows; i++) {
                uint64_t at = t->base + t->rows[i].a;

                if (IN_SET(VPROF_UNWIND_RULE_KIND(t->rows[i].b), VPROF_UNWIND_CFA_RSP, VPROF_UNWIND_CFA_RBP))
                        continue;
                for (uint64_t pc = at >= t->base + 32 ? at - 32 : t->base; pc < at + 32; pc++, checked++)
                        check_pc(t, e, pc);
        }
        ck_assert_uint_ge(checked, 100000);
}
END_TEST

START_TEST(test_python)
{
        static const char path[] = "/usr/bin/python3.11";
        _cleanup_(eh_frame_freep) EhFrame *e = NULL;
        _cleanup_(unwind_table_freep) UnwindTable *t = NULL;

        if (access(path, R_OK) < 0) {
                printf("%s: absent, not checked\n", path);
                return;
        }
        e = load(path);
        t = compile(e);
        check_invariants(t);
        printf("%s: FDEs %u, CFA rows %u, rows %u, index %u: %zu bytes\n", path, t->stats.fdes, t->stats.cfa_rows,
               t->n_rows, t->n_index, unwind_table_size(t));
        ck_assert_uint_ge(t->stats.by_kind[VPROF_UNWIND_END], 1);
        ck_assert_uint_lt(t->n_rows, t->stats.cfa_rows);
}
END_TEST

int main(int argc, char *argv[])
{
        Suite *s = suite_create("unwind-table");
        TCase *tc = tcase_create("core");

        if (argc != 6) {
                fprintf(stderr, "usage: %s FIXTURE LIB NOCFI GARBAGE TRUNCATED\n", argv[0]);
                return 2;
        }
        arg_prog = argv[1];
        arg_lib = argv[2];
        arg_nocfi = argv[3];
        arg_garbage = argv[4];
        arg_truncated = argv[5];

        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_fixture_kinds);
        tcase_add_test(tc, test_fixture_library);
        tcase_add_test(tc, test_fixture_property);
        tcase_add_test(tc, test_fixture_without_cfi);
        tcase_add_test(tc, test_fixture_damaged);
        tcase_add_test(tc, test_digest_key);
        tcase_add_test(tc, test_libc);
        tcase_add_test(tc, test_libc_property);
        tcase_add_test(tc, test_python);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
