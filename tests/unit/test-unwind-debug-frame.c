/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* .debug_frame as a source of CFI (common/unwind/eh-frame.c, eh-frame-load.c), for code built without unwind
 * tables: on the fixture-unwind program built by GCC with -g twice, with asynchronous unwind tables and
 * without any (the same code byte for byte, tests/fixtures/meson.build), the table compiled from
 * .debug_frame is the table compiled from .eh_frame, row for row; so it is from a separate debug file,
 * compressed either way, found by the symbolizer by .gnu_debuglink or by build-id, and the daemon's
 * interpreter steps with it; the clang build with -gdwarf64 agrees with the interpreter at every byte. Then
 * hand-made .debug_frame: both record formats, CIE versions 1, 3 and 4, what is refused, discarded
 * functions, and which of .eh_frame and .debug_frame describes a function both have. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "address-space.h"
#include "check-main.h"
#include "symbolizer.h"
#include "unwind-table-check.h"
#include "unwinder.h"

/* From the command line, in tests/fixtures: built with .eh_frame; with .debug_frame; its debug file (zlib,
 * SHF_COMPRESSED) and the same compressed the GNU way; stripped with a .gnu_debuglink; stripped of its debug
 * sections only; without .eh_frame; clang's -gdwarf64 build. */
static const char *arg_eh_frame, *arg_debug_frame, *arg_debug_file, *arg_gnu_debug_file, *arg_stripped,
        *arg_symtab, *arg_only, *arg_dwarf64;

/* The code sections of the fixtures. */
static const char *const code_sections[] = { ".init", ".plt", ".plt.got", ".text", ".fini" };

/* ---- ELF files, read with libelf apart from the code under test ---- */

/* A section's address, size and a copy of its bytes (NULL for SHT_NOBITS), and its file offset; false when
 * there is none of that name. */
static bool elf_section(const char *path, const char *name, uint64_t *ret_addr, uint64_t *ret_size,
                        uint8_t **ret_copy, uint64_t *ret_offset)
{
        Elf_Scn *scn = NULL;
        size_t shstrndx;
        bool found = false;
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        Elf *elf;

        ck_assert_msg(fd >= 0, "%s: %m", path);
        ck_assert(elf_version(EV_CURRENT) != EV_NONE);
        elf = elf_begin(fd, ELF_C_READ, NULL);
        ck_assert_ptr_nonnull(elf);
        ck_assert_int_eq(elf_getshdrstrndx(elf, &shstrndx), 0);
        while (!found && (scn = elf_nextscn(elf, scn))) {
                GElf_Shdr shdr;
                const char *s;

                if (!gelf_getshdr(scn, &shdr) || !(s = elf_strptr(elf, shstrndx, shdr.sh_name)) ||
                    strcmp(s, name) != 0)
                        continue;
                *ret_addr = shdr.sh_addr;
                *ret_size = shdr.sh_size;
                if (ret_offset)
                        *ret_offset = shdr.sh_offset;
                if (ret_copy) {
                        Elf_Data *data = shdr.sh_type == SHT_NOBITS ? NULL : elf_rawdata(scn, NULL);

                        *ret_copy = NULL;
                        if (data) {
                                *ret_copy = malloc(data->d_size);
                                ck_assert_ptr_nonnull(*ret_copy);
                                memcpy(*ret_copy, data->d_buf, data->d_size);
                        }
                }
                found = true;
        }
        elf_end(elf);
        close(fd);
        return found;
}

static bool has_section(const char *path, const char *name)
{
        uint64_t addr, size;

        return elf_section(path, name, &addr, &size, NULL, NULL);
}

/* A function of .symtab: its address and size. */
static void elf_function(const char *path, const char *name, uint64_t *ret_addr, uint64_t *ret_size)
{
        Elf_Scn *scn = NULL;
        bool found = false;
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        Elf *elf;

        ck_assert_msg(fd >= 0, "%s: %m", path);
        elf = elf_begin(fd, ELF_C_READ, NULL);
        ck_assert_ptr_nonnull(elf);
        while (!found && (scn = elf_nextscn(elf, scn))) {
                GElf_Shdr shdr;
                Elf_Data *data;

                if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_SYMTAB || shdr.sh_entsize == 0 ||
                    !(data = elf_getdata(scn, NULL)))
                        continue;
                for (size_t i = 0; i < shdr.sh_size / shdr.sh_entsize && !found; i++) {
                        GElf_Sym sym;
                        const char *s;

                        if (gelf_getsym(data, (int)i, &sym) && GELF_ST_TYPE(sym.st_info) == STT_FUNC &&
                            (s = elf_strptr(elf, shdr.sh_link, sym.st_name)) && strcmp(s, name) == 0) {
                                *ret_addr = sym.st_value;
                                *ret_size = sym.st_size;
                                found = true;
                        }
                }
        }
        elf_end(elf);
        close(fd);
        ck_assert_msg(found, "%s: no function %s", path, name);
}

static EhFrame *load(const char *path)
{
        EhFrame *e = NULL;

        ck_assert_int_eq(eh_frame_load_path(path, &e), 0);
        return e;
}

static int open_path(const char *path)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC);

        ck_assert_msg(fd >= 0, "%s: %m", path);
        return fd;
}

/* The file at path with its separate debug file at debug_path (NULL: none). */
static int load_split(const char *path, const char *debug_path, EhFrame **ret)
{
        _cleanup_close_ int fd = open_path(path), debug_fd = debug_path ? open_path(debug_path) : -1;

        return eh_frame_load_fds(fd, debug_fd, ret);
}

static void assert_same_table(const UnwindTable *a, const UnwindTable *b)
{
        ck_assert_uint_eq(a->base, b->base);
        ck_assert_uint_eq(a->end, b->end);
        ck_assert_uint_eq(a->n_index, b->n_index);
        ck_assert_uint_eq(a->n_rows, b->n_rows);
        for (size_t i = 0; i < a->n_rows; i++) {
                ck_assert_uint_eq(a->rows[i].a, b->rows[i].a);
                assert_rule(b->rows[i].b, a->rows[i].b, a->base + a->rows[i].a);
        }
        ck_assert_int_eq(memcmp(a->index, b->index, unwind_table_size(a)), 0);
        ck_assert_uint_eq(a->stats.fdes, b->stats.fdes);
        ck_assert_uint_eq(a->stats.cfa_rows, b->stats.cfa_rows);
        ck_assert_int_eq(memcmp(a->stats.by_kind, b->stats.by_kind, sizeof(a->stats.by_kind)), 0);
}

/* Every byte of the file's code against the interpreter. */
static void check_code_property(const char *path, const EhFrame *e, const UnwindTable *t)
{
        for (size_t i = 0; i < ELEMENTSOF(code_sections); i++) {
                uint64_t addr, size;

                if (!elf_section(path, code_sections[i], &addr, &size, NULL, NULL))
                        continue;
                for (uint64_t pc = addr; pc < addr + size; pc++)
                        check_pc(t, e, pc);
        }
}

/* The table of the build with asynchronous unwind tables, which the others must equal. */
static UnwindTable *eh_frame_table(void)
{
        _cleanup_(eh_frame_freep) EhFrame *e = load(arg_eh_frame);
        UnwindTable *t = compile(e);

        ck_assert_uint_eq(t->stats.fdes_debug_frame, 0);
        return t;
}

/* ---- The fixtures ---- */

/* The premise of the comparison: the two builds differ in their CFI only. */
START_TEST(test_same_code)
{
        ck_assert(has_section(arg_eh_frame, ".eh_frame"));
        ck_assert(!has_section(arg_eh_frame, ".debug_frame"));
        ck_assert(has_section(arg_debug_frame, ".debug_frame"));
        for (size_t i = 0; i < ELEMENTSOF(code_sections); i++) {
                _cleanup_free_ uint8_t *a = NULL, *b = NULL;
                uint64_t addr_a, size_a, addr_b, size_b;
                bool in_a = elf_section(arg_eh_frame, code_sections[i], &addr_a, &size_a, &a, NULL),
                     in_b = elf_section(arg_debug_frame, code_sections[i], &addr_b, &size_b, &b, NULL);

                ck_assert_int_eq(in_a, in_b);
                if (!in_a)
                        continue;
                ck_assert_uint_eq(addr_a, addr_b);
                ck_assert_uint_eq(size_a, size_b);
                ck_assert_msg(memcmp(a, b, size_a) == 0, "%s differs", code_sections[i]);
        }
}
END_TEST

START_TEST(test_same_table)
{
        _cleanup_(unwind_table_freep) UnwindTable *want = eh_frame_table(), *t = NULL, *eh_only = NULL;
        _cleanup_(eh_frame_freep) EhFrame *e = load(arg_debug_frame), *stripped = load(arg_stripped);

        t = compile(e);
        check_invariants(t);
        check_slices(e, t);
        assert_same_table(want, t);
        printf("%s: FDEs %u (%u from .debug_frame), CFA rows %u, rows %u: the .eh_frame build's\n",
               arg_debug_frame, t->stats.fdes, t->stats.fdes_debug_frame, t->stats.cfa_rows, t->n_rows);
        /* The C runtime's and the linker's FDEs from .eh_frame, every function of ours from .debug_frame. */
        eh_only = compile(stripped);
        ck_assert_uint_ge(t->stats.fdes_debug_frame, 13);
        ck_assert_uint_eq(t->stats.fdes_debug_frame + eh_only->stats.fdes, t->stats.fdes);
        ck_assert_uint_eq(eh_only->stats.fdes_debug_frame, 0);
        check_code_property(arg_debug_frame, e, t);
}
END_TEST

/* The stripped build with its debug file: the same table, from either compression; without it, only the C
 * runtime's. A debug file that cannot be used is left out. */
START_TEST(test_debug_file)
{
        const char *const debug_files[] = { arg_debug_file, arg_gnu_debug_file };
        const char *const useless[] = { arg_eh_frame, "/proc/self/status", arg_stripped };
        _cleanup_(unwind_table_freep) UnwindTable *want = eh_frame_table(), *alone = NULL;
        _cleanup_(eh_frame_freep) EhFrame *stripped = NULL;
        uint64_t addr, size;

        ck_assert(!has_section(arg_stripped, ".debug_frame"));
        ck_assert(has_section(arg_debug_file, ".debug_frame"));
        ck_assert(has_section(arg_gnu_debug_file, ".zdebug_frame"));
        for (size_t i = 0; i < ELEMENTSOF(debug_files); i++) {
                _cleanup_(eh_frame_freep) EhFrame *e = NULL;
                _cleanup_(unwind_table_freep) UnwindTable *t = NULL;

                ck_assert_int_eq(load_split(arg_stripped, debug_files[i], &e), 0);
                t = compile(e);
                check_invariants(t);
                assert_same_table(want, t);
                ck_assert_uint_ge(t->stats.fdes_debug_frame, 13);
                check_code_property(arg_stripped, e, t);
        }

        ck_assert_int_eq(load_split(arg_stripped, NULL, &stripped), 0);
        alone = compile(stripped);
        ck_assert_uint_lt(alone->stats.fdes, want->stats.fdes);
        elf_function(arg_debug_frame, "unwind_recurse", &addr, &size);
        for (uint64_t pc = addr; pc < addr + size; pc++)
                ck_assert_uint_eq(rule_at(alone, pc), GAP_RULE);
        for (size_t i = 0; i < ELEMENTSOF(useless); i++) {
                _cleanup_(eh_frame_freep) EhFrame *e = NULL;
                _cleanup_(unwind_table_freep) UnwindTable *t = NULL;

                ck_assert_int_eq(load_split(arg_stripped, useless[i], &e), 0);
                t = compile(e);
                assert_same_table(alone, t);
        }
}
END_TEST

/* A debug file whose compressed .debug_frame lies: the size in its header beyond the bound, an unknown
 * compression, a stream cut short. Left out, before libelf allocates a byte for it. */
START_TEST(test_debug_file_damaged)
{
        _cleanup_(unwind_table_freep) UnwindTable *alone = NULL;
        _cleanup_(eh_frame_freep) EhFrame *stripped = NULL;
        static const struct {
                bool gnu;
                size_t at, n;
                uint64_t value;
        } patches[] = {
                { false, offsetof(Elf64_Chdr, ch_size), 8, UINT64_C(1) << 40 },
                { false, offsetof(Elf64_Chdr, ch_size), 8, (UINT64_C(256) << 20) + 1 },
                { false, offsetof(Elf64_Chdr, ch_size), 8, 0 },
                { false, offsetof(Elf64_Chdr, ch_type), 4, 0x7fffffff },
                { false, sizeof(Elf64_Chdr) + 2, 4, 0xdeadbeef },
                { true, 4, 8, UINT64_C(1) << 56 },
                { true, 4, 8, 3 },
                { true, 0, 4, 0x42494c59 }, /* "YLIB" */
        };

        ck_assert_int_eq(load_split(arg_stripped, NULL, &stripped), 0);
        alone = compile(stripped);
        for (size_t i = 0; i < ELEMENTSOF(patches); i++) {
                const char *path = patches[i].gnu ? arg_gnu_debug_file : arg_debug_file;
                _cleanup_(eh_frame_freep) EhFrame *e = NULL;
                _cleanup_(unwind_table_freep) UnwindTable *t = NULL;
                _cleanup_close_ int fd = open_path(path), copy = -1, prog = open_path(arg_stripped);
                uint64_t addr, size, offset;
                _cleanup_free_ uint8_t *image = NULL;
                struct stat st;

                ck_assert(elf_section(path, patches[i].gnu ? ".zdebug_frame" : ".debug_frame", &addr, &size,
                                      NULL, &offset));
                ck_assert_int_eq(fstat(fd, &st), 0);
                image = malloc((size_t)st.st_size);
                ck_assert_ptr_nonnull(image);
                ck_assert_int_eq(pread(fd, image, (size_t)st.st_size, 0), st.st_size);
                ck_assert_uint_le(offset + patches[i].at + patches[i].n, (uint64_t)st.st_size);
                for (size_t k = 0; k < patches[i].n; k++) {
                        /* The GNU header's size is big-endian, the ELF header's fields little-endian. */
                        size_t byte = patches[i].gnu && patches[i].n == 8 ? patches[i].n - 1 - k : k;

                        image[offset + patches[i].at + k] = (uint8_t)(patches[i].value >> (8 * byte));
                }
                copy = memfd_create("debug-file", MFD_CLOEXEC);
                ck_assert_int_ge(copy, 0);
                ck_assert_int_eq(write(copy, image, (size_t)st.st_size), st.st_size);

                ck_assert_int_eq(eh_frame_load_fds(prog, copy, &e), 0);
                t = compile(e);
                ck_assert_msg(t->stats.fdes_debug_frame == 0, "patch %zu: .debug_frame used", i);
                assert_same_table(alone, t);
        }
}
END_TEST

/* .eh_frame removed: .debug_frame is all there is, _start and the PLT without CFI. Where it has FDEs, the
 * rules of the .eh_frame build. */
START_TEST(test_debug_frame_only)
{
        _cleanup_(unwind_table_freep) UnwindTable *want = eh_frame_table(), *t = NULL;
        _cleanup_(eh_frame_freep) EhFrame *e = NULL;
        uint64_t addr, size, start, start_size, plt, plt_size;
        size_t compared = 0;

        ck_assert(!has_section(arg_only, ".eh_frame"));
        e = load(arg_only);
        t = compile(e);
        check_invariants(t);
        check_slices(e, t);
        check_code_property(arg_only, e, t);
        ck_assert_uint_eq(t->stats.fdes_debug_frame, t->stats.fdes);
        ck_assert_uint_ge(t->stats.fdes, 13);
        /* The table starts at the lowest function of .debug_frame. */
        ck_assert_uint_eq(eh_frame_table_limit(e), eh_frame_table_pc(e, 0) + (UINT64_C(1) << 31));

        ck_assert(elf_section(arg_only, ".text", &addr, &size, NULL, NULL));
        for (uint64_t pc = addr; pc < addr + size; pc++) {
                CfaCie cie;
                Row row;

                if (eh_frame_find_row(e, pc, &row, &cie) < 0)
                        continue;
                assert_rule(rule_at(t, pc), rule_at(want, pc), pc);
                compared++;
        }
        ck_assert_uint_gt(compared, size / 2);
        elf_function(arg_debug_frame, "_start", &start, &start_size);
        ck_assert_uint_eq(rule_at(t, start), GAP_RULE);
        ck_assert(elf_section(arg_only, ".plt", &plt, &plt_size, NULL, NULL));
        ck_assert_uint_eq(rule_at(t, plt + 16), GAP_RULE);
}
END_TEST

/* clang's .debug_frame with -gdwarf64: CIE version 4, 64-bit lengths and CIE pointers. */
START_TEST(test_dwarf64)
{
        _cleanup_(eh_frame_freep) EhFrame *e = load(arg_dwarf64);
        _cleanup_(unwind_table_freep) UnwindTable *t = compile(e);
        _cleanup_free_ uint8_t *debug_frame = NULL;
        uint64_t addr, size;
        static const char *const functions[] = { "unwind_leaf", "unwind_recurse", "unwind_alloca",
                                                "unwind_big_frame", "main" };

        ck_assert(elf_section(arg_dwarf64, ".debug_frame", &addr, &size, &debug_frame, NULL));
        ck_assert_uint_ge(size, 32);
        ck_assert_int_eq(memcmp(debug_frame, "\xff\xff\xff\xff", 4), 0);
        ck_assert_uint_eq(debug_frame[4 + 8 + 8], 4);
        check_invariants(t);
        check_slices(e, t);
        check_code_property(arg_dwarf64, e, t);
        ck_assert_uint_ge(t->stats.fdes_debug_frame, 10);
        ck_assert_uint_eq(t->stats.fdes_bad, 0);
        for (size_t i = 0; i < ELEMENTSOF(functions); i++) {
                elf_function(arg_dwarf64, functions[i], &addr, &size);
                assert_rule(rule_at(t, addr), RULE(CFA_RSP, 0, 8), addr);
        }
        elf_function(arg_dwarf64, "unwind_recurse", &addr, &size);
        ck_assert_uint_ne(rule_at(t, addr + size - 2), GAP_RULE);
}
END_TEST

/* ---- Through the symbolizer, as the daemon asks ---- */

typedef struct Running {
        pid_t pid;
        int stdin_fd;  /* a line on it runs one round, then the fixture exits */
        int stdout_fd; /* open until then: the fixture prints its rounds when it exits */
} Running;

static Running start(const char *path)
{
        int in[2], out[2];
        char line[64] = {};
        ssize_t n;
        pid_t pid;

        ck_assert_int_eq(pipe2(in, O_CLOEXEC), 0);
        ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                dup2(in[0], STDIN_FILENO);
                dup2(out[1], STDOUT_FILENO);
                execl(path, path, "--wait-stdin", "--seconds", "0", (char *)NULL);
                _exit(127);
        }
        close(in[0]);
        close(out[1]);
        n = read(out[0], line, sizeof(line) - 1);
        ck_assert_msg(n > 0 && strncmp(line, "ready ", 6) == 0, "%s printed '%s'", path, line);
        return (Running) { .pid = pid, .stdin_fd = in[1], .stdout_fd = out[0] };
}

static void stop(Running *r)
{
        int status;

        ck_assert_int_eq(write(r->stdin_fd, "\n", 1), 1);
        close(r->stdin_fd);
        ck_assert_int_eq(waitpid(r->pid, &status, 0), r->pid);
        close(r->stdout_fd);
        ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Where the fixture's code at vaddr runs in the process, from its executable mapping. */
static uint64_t runtime_address(AddressSpace *as, const char *path, uint64_t vaddr)
{
        const ProcMaps *maps = address_space_maps(as, NULL);
        char real[PATH_MAX];

        ck_assert_ptr_nonnull(realpath(path, real));
        for (size_t i = 0; i < maps->n; i++) {
                const ProcMap *m = &maps->maps[i];
                uint64_t bias;

                if (!m->executable || !m->path || strcmp(m->path, real) != 0)
                        continue;
                /* The bias of the code's segment, by the CFI the unwinder found for the file. */
                ck_assert_int_eq(unwinder_code_bias(as, m->start, &bias), 0);
                return vaddr + bias;
        }
        ck_assert_msg(false, "%s is not mapped", real);
        return 0;
}

/* A step from unwind_leaf's first byte, which only .debug_frame describes: the return address on top of the
 * stack. */
static int leaf_step(AddressSpace *as, const char *path, UnwindRegs *ret_caller)
{
        uint64_t window[VPROF_STACK_WINDOW_WORDS], addr, size;
        UnwindRegs regs;

        for (size_t i = 0; i < ELEMENTSOF(window); i++)
                window[i] = UINT64_C(0x5a5a000000000000) + i;
        elf_function(arg_debug_frame, "unwind_leaf", &addr, &size);
        regs = (UnwindRegs) { .ip = runtime_address(as, path, addr), .sp = 0x7ffc0000, .bp = 1 };
        return unwinder_step(as, &regs, false, window, ELEMENTSOF(window), ret_caller);
}

static void check_leaf_step(AddressSpace *as, const char *path)
{
        UnwindRegs caller;

        ck_assert_int_eq(leaf_step(as, path, &caller), 0);
        ck_assert_uint_eq(caller.ip, UINT64_C(0x5a5a000000000000));
        ck_assert_uint_eq(caller.sp, 0x7ffc0008);
        ck_assert_uint_eq(caller.bp, 1);
}

/* The table the daemon compiles for the stripped program: its debug file's .debug_frame, by .gnu_debuglink.
 */
START_TEST(test_symbolizer_debuglink)
{
        _cleanup_(symbolizer_freep) Symbolizer *s = NULL;
        _cleanup_(address_space_freep) AddressSpace *as = NULL;
        _cleanup_(unwinder_table_build_freep) UnwinderTableBuild *b = NULL;
        _cleanup_(unwind_table_freep) UnwindTable *want = eh_frame_table(), *t = NULL;
        Running r = start(arg_stripped);
        uint64_t addr, size;
        FileInfo info;
        int k;

        ck_assert_int_eq(symbolizer_new(&s), 0);
        ck_assert_int_eq(address_space_new(s, r.pid, &as), 0);
        elf_function(arg_debug_frame, "unwind_recurse", &addr, &size);
        addr = runtime_address(as, arg_stripped, addr);
        ck_assert_int_eq(address_space_file_info(as, addr, &info), 0);
        ck_assert_int_eq(info.source, SYMBOL_SOURCE_DEBUGLINK);

        ck_assert_int_eq(unwinder_table_build_new(as, addr, &b), 0);
        while ((k = unwinder_table_build_step(b, 4)) == 0)
                ;
        ck_assert_int_eq(k, 1);
        ck_assert_int_eq(unwinder_table_build_finish(b, &t), 0);
        assert_same_table(want, t);
        ck_assert_uint_ge(t->stats.fdes_debug_frame, 13);
        check_leaf_step(as, arg_stripped);
        stop(&r);
}
END_TEST

/* A program with .symtab, stripped of its debug sections: its debug file by build-id, in a debug directory
 * of the test's; none elsewhere. */
START_TEST(test_symbolizer_build_id)
{
        _cleanup_(symbolizer_freep) Symbolizer *s = NULL, *none = NULL;
        _cleanup_(address_space_freep) AddressSpace *as = NULL, *as_none = NULL;
        char dir[] = "/tmp/vprof-debug-frame-XXXXXX", path[PATH_MAX + 64], debug_file[PATH_MAX];
        Running r = start(arg_symtab);
        uint64_t addr, size;
        UnwindRegs caller;
        FileInfo info;

        ck_assert(!has_section(arg_symtab, ".debug_frame"));
        ck_assert_int_eq(symbolizer_new(&none), 0);
        ck_assert_int_eq(symbolizer_set_debug_directory(none, "/nonexistent"), 0);
        ck_assert_int_eq(address_space_new(none, r.pid, &as_none), 0);
        ck_assert_int_eq(leaf_step(as_none, arg_symtab, &caller), -ENOENT);
        elf_function(arg_debug_frame, "unwind_recurse", &addr, &size);
        ck_assert_int_eq(address_space_file_info(as_none, runtime_address(as_none, arg_symtab, addr), &info),
                         0);
        ck_assert_int_eq(info.source, SYMBOL_SOURCE_SYMTAB);
        ck_assert_ptr_nonnull(info.build_id);

        ck_assert_ptr_nonnull(mkdtemp(dir));
        ck_assert_ptr_nonnull(realpath(arg_debug_file, debug_file));
        snprintf(path, sizeof(path), "%s/.build-id", dir);
        ck_assert_int_eq(mkdir(path, 0755), 0);
        snprintf(path, sizeof(path), "%s/.build-id/%.2s", dir, info.build_id);
        ck_assert_int_eq(mkdir(path, 0755), 0);
        snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", dir, info.build_id, info.build_id + 2);
        ck_assert_int_eq(symlink(debug_file, path), 0);

        ck_assert_int_eq(symbolizer_new(&s), 0);
        ck_assert_int_eq(symbolizer_set_debug_directory(s, dir), 0);
        ck_assert_int_eq(address_space_new(s, r.pid, &as), 0);
        check_leaf_step(as, arg_symtab);

        ck_assert_int_eq(unlink(path), 0);
        for (int i = 0; i < 2; i++) {
                *strrchr(path, '/') = '\0';
                ck_assert_int_eq(rmdir(path), 0);
        }
        ck_assert_int_eq(rmdir(dir), 0);
        stop(&r);
}
END_TEST

/* ---- Hand-made .debug_frame ---- */

typedef struct Buf {
        uint8_t data[2048];
        size_t n;
} Buf;

static void put(Buf *b, const void *p, size_t n)
{
        ck_assert_uint_le(b->n + n, sizeof(b->data));
        if (n > 0)
                memcpy(b->data + b->n, p, n);
        b->n += n;
}

static void put_le(Buf *b, uint64_t v, size_t n)
{
        for (size_t i = 0; i < n; i++)
                put(b, &(uint8_t) { (uint8_t)(v >> (8 * i)) }, 1);
}

static void patch_le(Buf *b, size_t at, uint64_t v, size_t n)
{
        for (size_t i = 0; i < n; i++)
                b->data[at + i] = (uint8_t)(v >> (8 * i));
}

/* How a record is written: the 64-bit format or not, the CIE's version, its augmentation, the size of
 * addresses (version 4: as its CIE says, else 8), a segment selector size. */
typedef struct Form {
        bool dwarf64;
        uint8_t version;
        const char *augmentation;
        uint8_t address_size, segment_size;
} Form;

static const Form GCC = { .version = 1, .augmentation = "", .address_size = 8 };

/* The length field, then the id: returns where the length goes. */
static size_t record_start(Buf *b, const Form *f, uint64_t id)
{
        size_t at = b->n;

        if (f->dwarf64) {
                put_le(b, UINT32_MAX, 4);
                put_le(b, 0, 8);
                put_le(b, id, 8);
        } else {
                put_le(b, 0, 4);
                put_le(b, id, 4);
        }
        return at;
}

static void record_end(Buf *b, const Form *f, size_t at)
{
        if (f->dwarf64)
                patch_le(b, at + 4, b->n - at - 12, 8);
        else
                patch_le(b, at, b->n - at - 4, 4);
}

/* A CIE as GCC writes them in .debug_frame (code alignment 1, data alignment -8, return address column 16,
 * CFA = rsp + 8, return address at CFA - 8); returns its offset. */
static size_t debug_cie(Buf *b, const Form *f)
{
        static const uint8_t initial[] = { 0x0c, 0x07, 0x08, 0x90, 0x01 };
        size_t at = record_start(b, f, f->dwarf64 ? UINT64_MAX : UINT32_MAX);

        put(b, &f->version, 1);
        put(b, f->augmentation, strlen(f->augmentation) + 1);
        if (f->version == 4) {
                put(b, &f->address_size, 1);
                put(b, &f->segment_size, 1);
        }
        /* The return address column: a byte in version 1, a ULEB128 after, 16 the same byte either way. */
        put(b, (const uint8_t[]) { 1, 0x78, 16 }, 3);
        put(b, initial, sizeof(initial));
        record_end(b, f, at);
        return at;
}

/* An FDE of the CIE at cie, whose program pushes one word at pc + 1. */
static size_t debug_fde(Buf *b, const Form *f, uint64_t cie, uint64_t pc, uint64_t range)
{
        static const uint8_t push[] = { 0x41, 0x0e, 0x10 };
        size_t at = record_start(b, f, cie), size = f->version == 4 ? f->address_size : 8;

        put_le(b, pc, size);
        put_le(b, range, size);
        put(b, push, sizeof(push));
        record_end(b, f, at);
        return at;
}

static int debug_frame_new(const Buf *b, EhFrame **ret)
{
        const CfiSections s = { .debug_frame = b->data, .debug_frame_size = b->n };

        return eh_frame_new_sections(&s, ret);
}

/* The rules of the one-push function at pc: the entry's, then one word more. */
static void check_pushes(const EhFrame *e, uint64_t pc, uint64_t range)
{
        _cleanup_(unwind_table_freep) UnwindTable *t = compile(e);

        check_invariants(t);
        assert_rule(rule_at(t, pc), RULE(CFA_RSP, 0, 8), pc);
        assert_rule(rule_at(t, pc + 1), RULE(CFA_RSP, 0, 16), pc + 1);
        assert_rule(rule_at(t, pc + range - 1), RULE(CFA_RSP, 0, 16), pc + range - 1);
        for (uint64_t p = pc >= 0x100 ? pc - 0x100 : 0; p < pc + range + 0x100; p++)
                check_pc(t, e, p);
}

START_TEST(test_handmade_forms)
{
        static const Form forms[] = {
                { .version = 1, .augmentation = "", .address_size = 8 },
                { .version = 3, .augmentation = "", .address_size = 8 },
                { .version = 4, .augmentation = "", .address_size = 8 },
                { .version = 4, .augmentation = "", .address_size = 4 },
                { .dwarf64 = true, .version = 4, .augmentation = "", .address_size = 8 },
                { .dwarf64 = true, .version = 1, .augmentation = "", .address_size = 8 },
        };

        for (size_t i = 0; i < ELEMENTSOF(forms); i++) {
                _cleanup_(eh_frame_freep) EhFrame *e = NULL;
                EhFrameFde fde;
                Buf b = {};
                size_t cie;

                /* An FDE before its CIE, one after it. */
                debug_fde(&b, &forms[i], 0, 0x2000, 0x40);
                cie = debug_cie(&b, &forms[i]);
                patch_le(&b, forms[i].dwarf64 ? 12 : 4, cie, forms[i].dwarf64 ? 8 : 4);
                debug_fde(&b, &forms[i], cie, 0x1000, 0x20);
                ck_assert_int_eq(debug_frame_new(&b, &e), 0);
                ck_assert_uint_eq(eh_frame_count(e), 2);
                ck_assert_uint_eq(eh_frame_table_pc(e, 0), 0x1000);
                ck_assert_int_eq(eh_frame_fde(e, 1, &fde), 0);
                ck_assert(fde.debug_frame);
                ck_assert_uint_eq(fde.pc_begin, 0x2000);
                ck_assert_uint_eq(fde.pc_range, 0x40);
                check_pushes(e, 0x1000, 0x20);
                check_pushes(e, 0x2000, 0x40);
        }
}
END_TEST

/* What is not .debug_frame as we read it: each makes the FDE unusable, and the table empty. */
START_TEST(test_handmade_refused)
{
        static const Form forms[] = {
                { .version = 2, .augmentation = "", .address_size = 8 },
                { .version = 5, .augmentation = "", .address_size = 8 },
                { .version = 4, .augmentation = "", .address_size = 8, .segment_size = 2 },
                { .version = 4, .augmentation = "", .address_size = 2 },
                { .version = 1, .augmentation = "zR", .address_size = 8 },
                { .version = 1, .augmentation = "eh", .address_size = 8 },
        };

        for (size_t i = 0; i < ELEMENTSOF(forms); i++) {
                _cleanup_(eh_frame_freep) EhFrame *e = NULL;
                Buf b = {};

                debug_cie(&b, &forms[i]);
                debug_fde(&b, &forms[i], 0, 0x1000, 0x20);
                ck_assert_int_eq(debug_frame_new(&b, &e), -ENOENT);
        }

        /* An FDE's CIE pointer past the section, to an FDE (the next one, pointing back), to itself; and
         * .eh_frame's CIE id, 0: here the pointer to offset 0, an FDE. */
        for (size_t i = 0; i < 4; i++) {
                _cleanup_(eh_frame_freep) EhFrame *e = NULL;
                size_t first, second;
                Buf b = {};

                if (i < 3)
                        debug_cie(&b, &GCC);
                first = debug_fde(&b, &GCC, 0, 0x1000, 0x20);
                second = debug_fde(&b, &GCC, first, 0x2000, 0x20);
                patch_le(&b, first + 4, i == 0 ? 4096 : i == 1 ? second : i == 2 ? first : 0, 4);
                if (i == 0 || i == 2)
                        b.n = second;
                ck_assert_int_eq(debug_frame_new(&b, &e), -ENOENT);
        }
}
END_TEST

/* Functions the linker discarded (address 0, or all ones: a range that wraps), empty ones, zero words
 * between contributions, a truncated last record: the other functions stay. */
START_TEST(test_handmade_layout)
{
        static const Form four = { .version = 4, .augmentation = "", .address_size = 4 };
        _cleanup_(eh_frame_freep) EhFrame *e = NULL, *small = NULL;
        Buf b = {}, c = {};
        size_t cie, cie4;

        cie = debug_cie(&b, &GCC);
        debug_fde(&b, &GCC, cie, 0, 0x20);
        debug_fde(&b, &GCC, cie, UINT64_MAX, 0x20);
        debug_fde(&b, &GCC, cie, UINT64_MAX - 1, 0x20);
        debug_fde(&b, &GCC, cie, 0x3000, 0);
        put_le(&b, 0, 4);
        put_le(&b, 0, 4);
        debug_fde(&b, &GCC, cie, 0x1000, 0x20);
        cie4 = debug_cie(&b, &four);
        debug_fde(&b, &four, cie4, UINT32_MAX, 0x10);
        debug_fde(&b, &four, cie4, 0x2000, 0x30);
        debug_fde(&b, &GCC, cie, 0x4000, 0x20);
        b.n -= 3;
        ck_assert_int_eq(debug_frame_new(&b, &e), 0);
        ck_assert_uint_eq(eh_frame_count(e), 2);
        ck_assert_uint_eq(eh_frame_table_pc(e, 0), 0x1000);
        ck_assert_uint_eq(eh_frame_table_pc(e, 1), 0x2000);
        check_pushes(e, 0x1000, 0x20);
        check_pushes(e, 0x2000, 0x30);

        /* Functions 3 GiB apart: the table reaches 2 GiB from the lowest one. */
        cie = debug_cie(&c, &GCC);
        debug_fde(&c, &GCC, cie, UINT64_C(0x7f00c0001000), 0x20);
        debug_fde(&c, &GCC, cie, UINT64_C(0x7f0000001000), 0x20);
        ck_assert_int_eq(debug_frame_new(&c, &small), 0);
        ck_assert_uint_eq(eh_frame_count(small), 1);
        ck_assert_uint_eq(eh_frame_table_limit(small), UINT64_C(0x7f0080001000));
        check_pushes(small, UINT64_C(0x7f0000001000), 0x20);
}
END_TEST

/* .eh_frame with one FDE, [0x1000, 0x1100), as GCC writes them ("zR", udata4 pointers): CFA = rsp + 8
 * throughout. */
static void eh_frame_one(Buf *b)
{
        static const uint8_t cie[] = { 0,    0,  0, 0,    1,    'z',  'R',  0,    1,
                                      0x78, 16, 1, 0x03, 0x0c, 0x07, 0x08, 0x90, 0x01 };
        size_t at;

        put_le(b, sizeof(cie), 4);
        put(b, cie, sizeof(cie));
        at = b->n;
        put_le(b, 0, 4);
        put_le(b, b->n, 4); /* back to the CIE at 0 */
        put_le(b, 0x1000, 4);
        put_le(b, 0x100, 4);
        put(b, (const uint8_t[]) { 0 }, 1);
        patch_le(b, at, b->n - at - 4, 4);
        put_le(b, 0, 4);
}

/* A function both describe keeps .eh_frame's FDE; .debug_frame's serve where .eh_frame has none. Its bytes
 * are kept only when one of its FDEs is. */
START_TEST(test_handmade_precedence)
{
        static const uint64_t covered[][2] = {
                { 0x1000, 0x100 }, { 0x1080, 0x200 }, { 0xf00, 0x101 }, { 0x10ff, 1 }, { 0xfff, 0x2000 },
        };
        _cleanup_(eh_frame_freep) EhFrame *alone = NULL, *both = NULL;
        _cleanup_(unwind_table_freep) UnwindTable *t = NULL;
        Buf eh = {}, b = {};
        EhFrameFde fde;
        size_t cie;

        eh_frame_one(&eh);
        ck_assert_int_eq(eh_frame_new(eh.data, eh.n, 0x8000, NULL, 0, 0, &alone), 0);
        ck_assert_uint_eq(eh_frame_count(alone), 1);

        cie = debug_cie(&b, &GCC);
        for (size_t i = 0; i < ELEMENTSOF(covered); i++) {
                _cleanup_(eh_frame_freep) EhFrame *e = NULL;
                Buf one = b;

                debug_fde(&one, &GCC, cie, covered[i][0], covered[i][1]);
                ck_assert_int_eq(eh_frame_new_sections(&(CfiSections) { .eh_frame = eh.data,
                                                                        .eh_frame_size = eh.n,
                                                                        .eh_frame_vaddr = 0x8000,
                                                                        .debug_frame = one.data,
                                                                        .debug_frame_size = one.n },
                                                       &e),
                                 0);
                ck_assert_uint_eq(eh_frame_count(e), 1);
                ck_assert_uint_eq(eh_frame_memory(e), eh_frame_memory(alone));
        }

        debug_fde(&b, &GCC, cie, 0x1000, 0x100);
        debug_fde(&b, &GCC, cie, 0x1100, 0x80);
        debug_fde(&b, &GCC, cie, 0xf00, 0x100);
        ck_assert_int_eq(eh_frame_new_sections(&(CfiSections) { .eh_frame = eh.data,
                                                                .eh_frame_size = eh.n,
                                                                .eh_frame_vaddr = 0x8000,
                                                                .debug_frame = b.data,
                                                                .debug_frame_size = b.n },
                                               &both),
                         0);
        ck_assert_uint_eq(eh_frame_count(both), 3);
        ck_assert_uint_gt(eh_frame_memory(both), eh_frame_memory(alone) + b.n - 1);
        ck_assert_uint_eq(eh_frame_table_limit(both), 0x8000 + (UINT64_C(1) << 31));
        ck_assert_int_eq(eh_frame_fde(both, 1, &fde), 0);
        ck_assert(!fde.debug_frame);
        ck_assert_uint_eq(fde.pc_begin, 0x1000);
        ck_assert_int_eq(eh_frame_fde(both, 0, &fde), 0);
        ck_assert(fde.debug_frame);
        ck_assert_int_eq(eh_frame_fde(both, 2, &fde), 0);
        ck_assert(fde.debug_frame);

        t = compile(both);
        check_invariants(t);
        ck_assert_uint_eq(t->stats.fdes, 3);
        ck_assert_uint_eq(t->stats.fdes_debug_frame, 2);
        for (uint64_t pc = 0xe00; pc < 0x1300; pc++)
                check_pc(t, both, pc);
        assert_rule(rule_at(t, 0x1001), RULE(CFA_RSP, 0, 8), 0x1001);
        assert_rule(rule_at(t, 0xf01), RULE(CFA_RSP, 0, 16), 0xf01);
        assert_rule(rule_at(t, 0x1101), RULE(CFA_RSP, 0, 16), 0x1101);
}
END_TEST

int main(int argc, char *argv[])
{
        Suite *s = suite_create("unwind-debug-frame");
        TCase *tc = tcase_create("core");

        if (argc != 9) {
                fprintf(stderr,
                        "usage: %s EH_FRAME DEBUG_FRAME DEBUG_FILE GNU_DEBUG_FILE STRIPPED SYMTAB ONLY "
                        "DWARF64\n",
                        argv[0]);
                return 2;
        }
        arg_eh_frame = argv[1];
        arg_debug_frame = argv[2];
        arg_debug_file = argv[3];
        arg_gnu_debug_file = argv[4];
        arg_stripped = argv[5];
        arg_symtab = argv[6];
        arg_only = argv[7];
        arg_dwarf64 = argv[8];

        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_same_code);
        tcase_add_test(tc, test_same_table);
        tcase_add_test(tc, test_debug_file);
        tcase_add_test(tc, test_debug_file_damaged);
        tcase_add_test(tc, test_debug_frame_only);
        tcase_add_test(tc, test_dwarf64);
        tcase_add_test(tc, test_symbolizer_debuglink);
        tcase_add_test(tc, test_symbolizer_build_id);
        tcase_add_test(tc, test_handmade_forms);
        tcase_add_test(tc, test_handmade_refused);
        tcase_add_test(tc, test_handmade_layout);
        tcase_add_test(tc, test_handmade_precedence);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
