/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Code in two executable PT_LOAD segments whose distances between virtual address and file offset differ
 * (tests/fixtures/two-text-segments.ld), in a PIE and in the shared library it links: each address is named
 * through its own segment, at the first byte of each mapping and of each function and at a function's last
 * byte, and the call frame information of the second segment is found. */
#include <check.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "address-space.h"
#include "check-main.h"
#include "macros.h"
#include "proc-maps.h"
#include "symbolizer.h"
#include "unwinder.h"

/* From the command line: the fixtures built in tests/fixtures. */
static const char *arg_prog, *arg_lib;

typedef struct SegFunction {
        const char *name;
        bool in_lib;
        bool first_of_mapping; /* the first byte of an executable mapping */
        uint64_t address;      /* at run time, as the fixture printed it */
        uint64_t size;         /* from the file's .symtab */
} SegFunction;

static SegFunction functions[] = {
        { "seg_prog_first", false, true },     /* .text */
        { "seg_prog_near", false, false },     /* .text */
        { "seg_prog_far_step", false, true },  /* .text.far */
        { "seg_prog_far_hot", false, false },  /* .text.far */
        { "seg_lib_first", true, true },
        { "seg_lib_near", true, false },
        { "seg_lib_far_step", true, true },
        { "seg_lib_far_hot", true, false },
};

static const char *base_name(const char *path)
{
        const char *slash = strrchr(path, '/');

        return slash ? slash + 1 : path;
}

static const char *module_of(const SegFunction *f)
{
        return base_name(f->in_lib ? arg_lib : arg_prog);
}

/* st_size of the function name in the .symtab of path, read here with libelf rather than through the code
 * under test. */
static uint64_t symbol_size(const char *path, const char *name)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        Elf_Scn *scn = NULL;
        uint64_t size = 0;
        Elf *elf;

        ck_assert_int_ge(fd, 0);
        ck_assert_uint_ne(elf_version(EV_CURRENT), EV_NONE);
        elf = elf_begin(fd, ELF_C_READ, NULL);
        ck_assert_ptr_nonnull(elf);
        while (size == 0 && (scn = elf_nextscn(elf, scn))) {
                GElf_Shdr shdr;
                Elf_Data *data;

                if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_SYMTAB || shdr.sh_entsize == 0)
                        continue;
                data = elf_getdata(scn, NULL);
                for (size_t i = 0; data && i < shdr.sh_size / shdr.sh_entsize; i++) {
                        GElf_Sym sym;
                        const char *n;

                        if (!gelf_getsym(data, (int)i, &sym))
                                continue;
                        n = elf_strptr(elf, shdr.sh_link, sym.st_name);
                        if (n && strcmp(n, name) == 0 && GELF_ST_TYPE(sym.st_info) == STT_FUNC) {
                                size = sym.st_size;
                                break;
                        }
                }
        }
        elf_end(elf);
        ck_assert_msg(size > 0, "no size for %s in %s", name, path);
        return size;
}

typedef struct Running {
        pid_t pid;
        int stdin_fd; /* closing it lets the fixture exit */
} Running;

/* Start the fixture and read its "NAME 0xADDRESS" lines up to "end" into functions[]. */
static void start_fixture(Running *ret)
{
        int in[2], out[2];
        char line[256];
        size_t found = 0;
        FILE *f;
        pid_t pid;

        ck_assert_int_eq(pipe2(in, O_CLOEXEC), 0);
        ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                dup2(in[0], STDIN_FILENO);
                dup2(out[1], STDOUT_FILENO);
                execl(arg_prog, arg_prog, (char *)NULL);
                _exit(127);
        }
        close(in[0]);
        close(out[1]);

        f = fdopen(out[0], "r");
        ck_assert_ptr_nonnull(f);
        while (fgets(line, sizeof(line), f) && strcmp(line, "end\n") != 0) {
                char name[128];
                unsigned long long addr;

                ck_assert_msg(sscanf(line, "%127s %llx", name, &addr) == 2, "fixture printed '%s'", line);
                for (size_t i = 0; i < ELEMENTSOF(functions); i++)
                        if (strcmp(functions[i].name, name) == 0) {
                                functions[i].address = addr;
                                found++;
                        }
        }
        fclose(f);
        ck_assert_uint_eq(found, ELEMENTSOF(functions));

        for (size_t i = 0; i < ELEMENTSOF(functions); i++)
                functions[i].size = symbol_size(functions[i].in_lib ? arg_lib : arg_prog, functions[i].name);
        *ret = (Running) { .pid = pid, .stdin_fd = in[1] };
}

static void stop_fixture(Running *r)
{
        int status;

        close(r->stdin_fd);
        ck_assert_int_eq(waitpid(r->pid, &status, 0), r->pid);
        ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void check_named(AddressSpace *as, uint64_t addr, bool return_address, const SegFunction *f,
                        uint64_t offset)
{
        Symbol sym;

        ck_assert_int_eq(address_space_resolve(as, addr, return_address, &sym), 0);
        ck_assert_str_eq(sym.module, module_of(f));
        ck_assert_msg(sym.function && strcmp(sym.function, f->name) == 0, "0x%llx%s: expected %s+0x%llx, got %s",
                      (unsigned long long)addr, return_address ? " (return address)" : "", f->name,
                      (unsigned long long)offset, sym.function ?: "(null)");
        ck_assert_uint_eq(sym.offset, offset);
        ck_assert(sym.code);
}

/* The layout is the one the test is about: each file has exactly two executable mappings, with different
 * distances between run-time address and file offset, and each starts with a known function. */
START_TEST(test_layout)
{
        _cleanup_(proc_maps_freep) ProcMaps *maps = NULL;
        const char *paths[] = { arg_prog, arg_lib };
        Running r;

        start_fixture(&r);
        ck_assert_int_eq(proc_maps_read(r.pid, &maps), 0);
        for (size_t p = 0; p < ELEMENTSOF(paths); p++) {
                uint64_t delta[2];
                size_t n = 0;

                for (size_t i = 0; i < maps->n; i++) {
                        const ProcMap *m = &maps->maps[i];

                        if (!m->executable || !m->path || strcmp(base_name(m->path), base_name(paths[p])) != 0)
                                continue;
                        ck_assert_uint_lt(n, 2);
                        delta[n++] = m->start - m->offset;
                }
                ck_assert_uint_eq(n, 2);
                ck_assert_uint_ne(delta[0], delta[1]);
        }
        for (size_t i = 0; i < ELEMENTSOF(functions); i++) {
                const ProcMap *m = proc_maps_find(maps, functions[i].address);

                ck_assert_ptr_nonnull(m);
                ck_assert(m->executable);
                ck_assert_msg((m->start == functions[i].address) == functions[i].first_of_mapping,
                              "%s at 0x%llx, its mapping at 0x%llx", functions[i].name,
                              (unsigned long long)functions[i].address, (unsigned long long)m->start);
        }
        stop_fixture(&r);
}
END_TEST

START_TEST(test_resolve_both_segments)
{
        _cleanup_(symbolizer_freep) Symbolizer *s = NULL;
        _cleanup_(address_space_freep) AddressSpace *as = NULL;
        Running r;

        start_fixture(&r);
        ck_assert_int_eq(symbolizer_new(&s), 0);
        ck_assert_int_eq(address_space_new(s, r.pid, &as), 0);

        for (size_t i = 0; i < ELEMENTSOF(functions); i++) {
                const SegFunction *f = &functions[i];
                Symbol sym;

                /* The first byte (for some, the first byte of the mapping too), one inside, the last byte. */
                check_named(as, f->address, false, f, 0);
                check_named(as, f->address + 1, false, f, 1);
                check_named(as, f->address + f->size - 1, false, f, f->size - 1);
                /* A return address just past the last byte: a call that ends the function. */
                check_named(as, f->address + f->size, true, f, f->size);
                /* The byte past the end is padding or the next function. */
                ck_assert_int_eq(address_space_resolve(as, f->address + f->size, false, &sym), 0);
                ck_assert(!sym.function || strcmp(sym.function, f->name) != 0);
        }
        /* Both files parsed once, whichever of their mappings came first. */
        ck_assert_uint_eq(symbolizer_cached_files(s), 2);

        address_space_free(TAKE_PTR(as));
        stop_fixture(&r);
}
END_TEST

/* At a function's first byte the CFI says: the return address is at sp. Found only through the right
 * segment's bias, as the FDEs hold ELF virtual addresses. */
START_TEST(test_unwind_both_segments)
{
        _cleanup_(symbolizer_freep) Symbolizer *s = NULL;
        _cleanup_(address_space_freep) AddressSpace *as = NULL;
        const uint64_t sp = UINT64_C(0x7ffd00001000), window[2] = { UINT64_C(0x1234567), 0 };
        Running r;

        start_fixture(&r);
        ck_assert_int_eq(symbolizer_new(&s), 0);
        ck_assert_int_eq(address_space_new(s, r.pid, &as), 0);

        for (size_t i = 0; i < ELEMENTSOF(functions); i++) {
                UnwindRegs caller;
                int k;

                k = unwinder_step(as, &(UnwindRegs) { .ip = functions[i].address, .sp = sp, .bp = 0 },
                                  false, window, ELEMENTSOF(window), &caller);
                ck_assert_msg(k == 0, "%s: %s", functions[i].name, strerror(-k));
                ck_assert_uint_eq(caller.ip, window[0]);
                ck_assert_uint_eq(caller.sp, sp + 8);
        }

        address_space_free(TAKE_PTR(as));
        stop_fixture(&r);
}
END_TEST

int main(int argc, char *argv[])
{
        Suite *s = suite_create("segments");
        TCase *tc = tcase_create("core");

        if (argc != 3) {
                fprintf(stderr, "usage: %s FIXTURE-SEGMENTS LIBVPROF-SEGMENTS.SO\n", argv[0]);
                return 2;
        }
        arg_prog = argv[1];
        arg_lib = argv[2];

        tcase_set_timeout(tc, 30);
        tcase_add_test(tc, test_layout);
        tcase_add_test(tc, test_resolve_both_segments);
        tcase_add_test(tc, test_unwind_both_segments);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
