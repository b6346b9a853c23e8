/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "address-space.h"
#include "test-util.h"
#include "check-main.h"
#include "fixture-util.h"
#include "macros.h"
#include "pread-hook.h"
#include "proc-maps.h"
#include "symbolizer.h"
#include "vdso-symbols.h"
#include "unwinder.h"

/* From the command line: the fixtures built in tests/fixtures. */
static const char *arg_lib, *arg_pie, *arg_nopie;

/* Longer than the symbolizer's interval between two reads of one process's maps. */
static void wait_reread_interval(void)
{
        struct timespec ts = { .tv_sec = 0, .tv_nsec = 150 * 1000 * 1000 };

        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

static void check_symbol(const Symbol *sym, const char *module, const char *function, uint64_t offset)
{
        ck_assert_str_eq(sym->module, module);
        if (function)
                ck_assert_msg(sym->function && strcmp(sym->function, function) == 0, "expected %s, got %s",
                              function, sym->function ?: "(null)");
        else
                ck_assert_ptr_null(sym->function);
        ck_assert_uint_eq(sym->offset, offset);
}

static void check_program(const char *path)
{
        _cleanup_(symbolizer_freep) Symbolizer *s = NULL;
        _cleanup_(address_space_freep) AddressSpace *as = NULL;
        Symbol sym;
        Fixture f;

        ck_assert_int_eq(symbolizer_new(&s), 0);
        fixture_start(path, &f);
        ck_assert_int_eq(address_space_new(s, f.pid, &as), 0);

        ck_assert_int_eq(address_space_resolve(as, f.target, false, &sym), 0);
        check_symbol(&sym, base_name(path), "vprof_fixture_prog_target", 0);
        ck_assert_int_eq(address_space_resolve(as, f.target + 5, false, &sym), 0);
        check_symbol(&sym, base_name(path), "vprof_fixture_prog_target", 5);
        ck_assert_int_eq(address_space_resolve(as, f.local, false, &sym), 0);
        check_symbol(&sym, base_name(path), "fixture_prog_local", 0);

        /* A return address just past the function's first byte is a call from inside it; the offset is still
         * that of the address given. */
        ck_assert_int_eq(address_space_resolve(as, f.target + 1, true, &sym), 0);
        check_symbol(&sym, base_name(path), "vprof_fixture_prog_target", 1);
        /* A return address at the function's start is a call at the end of whatever precedes it. */
        ck_assert_int_eq(address_space_resolve(as, f.target, true, &sym), 0);
        ck_assert_str_eq(sym.module, base_name(path));
        ck_assert(!sym.function || strcmp(sym.function, "vprof_fixture_prog_target") != 0);

        ck_assert_int_eq(fixture_stop(&f), 0);
}

START_TEST(test_pie)
{
        check_program(arg_pie);
}
END_TEST

START_TEST(test_nopie)
{
        check_program(arg_nopie);
}
END_TEST

START_TEST(test_dlopen_rereads_maps)
{
        _cleanup_(symbolizer_freep) Symbolizer *s = NULL;
        _cleanup_(address_space_freep) AddressSpace *as = NULL;
        void *handle, *alpha, *beta;
        Symbol sym;

        ck_assert_int_eq(symbolizer_new(&s), 0);
        /* The snapshot is taken before the library is there. */
        ck_assert_int_eq(address_space_new(s, getpid(), &as), 0);

        handle = dlopen(arg_lib, RTLD_NOW | RTLD_LOCAL);
        ck_assert_msg(handle, "dlopen: %s", dlerror());
        alpha = dlsym(handle, "vprof_fixture_lib_alpha");
        beta = dlsym(handle, "vprof_fixture_lib_beta");
        ck_assert(alpha && beta);

        wait_reread_interval();
        ck_assert_int_eq(address_space_resolve(as, (uintptr_t)alpha, false, &sym), 0);
        check_symbol(&sym, "libvprof-fixture.so", "vprof_fixture_lib_alpha", 0);
        ck_assert_int_eq(address_space_resolve(as, (uintptr_t)beta + 3, true, &sym), 0);
        check_symbol(&sym, "libvprof-fixture.so", "vprof_fixture_lib_beta", 3);
        ck_assert_int_eq(address_space_resolve(as, (uintptr_t)beta, true, &sym), 0);
        ck_assert(!sym.function || strcmp(sym.function, "vprof_fixture_lib_beta") != 0);
        ck_assert_uint_eq(symbolizer_cached_files(s), 1);
        dlclose(handle);
}
END_TEST

/* The executable mapping of path in pid that holds file_offset, or NULL. */
static const ProcMap *find_file_offset(const ProcMaps *m, const char *path, uint64_t file_offset)
{
        for (size_t i = 0; i < m->n; i++) {
                const ProcMap *p = &m->maps[i];

                if (p->path && strcmp(p->path, path) == 0 && p->executable && file_offset >= p->offset &&
                    file_offset - p->offset < p->end - p->start)
                        return p;
        }
        return NULL;
}

/* An address in the test binary itself. */
__attribute__((noinline)) void test_budget_marker(void);
__attribute__((noinline)) void test_budget_marker(void)
{
        __asm__ volatile("");
}

/* A budget of one file: a second file does not fit while the first is in use, and stays without symbols. */
START_TEST(test_budget)
{
        _cleanup_(symbolizer_freep) Symbolizer *s = NULL;
        AddressSpace *as = NULL;
        void *handle, *alpha;
        size_t one_file;
        Symbol sym;

        handle = dlopen(arg_lib, RTLD_NOW | RTLD_LOCAL);
        ck_assert_msg(handle, "dlopen: %s", dlerror());
        alpha = dlsym(handle, "vprof_fixture_lib_alpha");
        ck_assert_ptr_nonnull(alpha);

        /* No budget: the file's cost. */
        ck_assert_int_eq(symbolizer_new(&s), 0);
        ck_assert_int_eq(address_space_new(s, getpid(), &as), 0);
        ck_assert_int_eq(address_space_resolve(as, (uintptr_t)alpha, false, &sym), 0);
        check_symbol(&sym, "libvprof-fixture.so", "vprof_fixture_lib_alpha", 0);
        one_file = symbolizer_memory(s);
        ck_assert_uint_gt(one_file, 0);
        address_space_free(as);

        /* The same file again under a budget it fits in: the cached entry serves. */
        symbolizer_set_budget(s, one_file);
        ck_assert_int_eq(address_space_new(s, getpid(), &as), 0);
        ck_assert_int_eq(address_space_resolve(as, (uintptr_t)alpha, false, &sym), 0);
        check_symbol(&sym, "libvprof-fixture.so", "vprof_fixture_lib_alpha", 0);
        ck_assert_uint_le(symbolizer_memory(s), one_file);
        ck_assert_uint_eq(symbolizer_skipped_files(s), 0);

        /* A second address space needs another file (the test binary): no room while the first holds its
         * file, so it is named by offset, and counted. */
        {
                _cleanup_(address_space_freep) AddressSpace *other = NULL;
                ck_assert_int_eq(address_space_new(s, getpid(), &other), 0);
                ck_assert_int_eq(address_space_resolve(other, (uintptr_t)test_budget_marker, false, &sym), 0);
                ck_assert_ptr_null(sym.function);
                ck_assert_uint_eq(symbolizer_skipped_files(s), 1);
                ck_assert_uint_le(symbolizer_memory(s), one_file);
        }
        address_space_free(as);
        dlclose(handle);
}
END_TEST

START_TEST(test_cache_shared_between_processes)
{
        _cleanup_(symbolizer_freep) Symbolizer *s = NULL;
        _cleanup_(address_space_freep) AddressSpace *self = NULL, *child = NULL;
        _cleanup_(proc_maps_freep) ProcMaps *self_maps = NULL, *child_maps = NULL;
        const ProcMap *p, *q;
        void *fn;
        uint64_t file_offset, addr;
        Dl_info info;
        Symbol sym;
        size_t n;
        Fixture f;

        /* A libc function that no sanitizer intercepts, and the file it is in. */
        fn = dlsym(RTLD_DEFAULT, "getppid");
        ck_assert_ptr_nonnull(fn);
        ck_assert(dladdr(fn, &info) != 0);
        ck_assert_msg(strncmp(base_name(info.dli_fname), "libc.so", 7) == 0, "getppid is in %s",
                      info.dli_fname);

        ck_assert_int_eq(symbolizer_new(&s), 0);
        ck_assert_uint_eq(symbolizer_cached_files(s), 0);
        ck_assert_int_eq(address_space_new(s, getpid(), &self), 0);
        ck_assert_int_eq(address_space_resolve(self, (uintptr_t)fn, false, &sym), 0);
        check_symbol(&sym, base_name(info.dli_fname), "getppid", 0);
        n = symbolizer_cached_files(s);
        ck_assert_uint_eq(n, 1);

        /* The same byte of libc in another process, at another address. */
        ck_assert_int_eq(proc_maps_read(getpid(), &self_maps), 0);
        p = proc_maps_find(self_maps, (uintptr_t)fn);
        ck_assert_ptr_nonnull(p);
        file_offset = (uintptr_t)fn - p->start + p->offset;

        fixture_start(arg_pie, &f);
        ck_assert_int_eq(address_space_new(s, f.pid, &child), 0);
        ck_assert_int_eq(proc_maps_read(f.pid, &child_maps), 0);
        q = find_file_offset(child_maps, p->path, file_offset);
        ck_assert_ptr_nonnull(q);
        addr = q->start + (file_offset - q->offset);
        ck_assert_int_eq(address_space_resolve(child, addr + 2, false, &sym), 0);
        check_symbol(&sym, base_name(info.dli_fname), "getppid", 2);
        /* libc was parsed once for both. */
        ck_assert_uint_eq(symbolizer_cached_files(s), n);

        /* The fixture's own file is new to the cache. */
        ck_assert_int_eq(address_space_resolve(child, f.target, false, &sym), 0);
        check_symbol(&sym, "fixture-pie", "vprof_fixture_prog_target", 0);
        ck_assert(sym.code);
        ck_assert_uint_eq(symbolizer_cached_files(s), n + 1);
        ck_assert_int_eq(address_space_resolve(child, f.local, false, &sym), 0);
        check_symbol(&sym, "fixture-pie", "fixture_prog_local", 0);
        ck_assert_uint_eq(symbolizer_cached_files(s), n + 1);

        ck_assert_int_eq(fixture_stop(&f), 0);
}
END_TEST

START_TEST(test_unknown_anon_special)
{
        _cleanup_(symbolizer_freep) Symbolizer *s = NULL;
        _cleanup_(address_space_freep) AddressSpace *as = NULL;
        _cleanup_(proc_maps_freep) ProcMaps *m = NULL;
        const size_t size = 4 * 4096;
        Symbol sym;
        void *anon;

        anon = mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        ck_assert(anon != MAP_FAILED);

        ck_assert_int_eq(symbolizer_new(&s), 0);
        ck_assert_int_eq(address_space_new(s, getpid(), &as), 0);

        /* The first page is never mapped. */
        ck_assert_int_eq(address_space_resolve(as, 0x10, false, &sym), 0);
        check_symbol(&sym, "[unknown]", NULL, 0x10);
        ck_assert_int_eq(address_space_resolve(as, 0x10, true, &sym), 0);
        check_symbol(&sym, "[unknown]", NULL, 0x10);
        ck_assert(!sym.code);

        /* Anonymous memory (JIT code...): the absolute address. */
        ck_assert_int_eq(address_space_resolve(as, (uintptr_t)anon + 0x123, false, &sym), 0);
        check_symbol(&sym, "[anon]", NULL, (uintptr_t)anon + 0x123);

        /* Special mappings by their name, relative to their start. */
        ck_assert_int_eq(proc_maps_read(getpid(), &m), 0);
        for (size_t i = 0; i < m->n; i++) {
                const ProcMap *p = &m->maps[i];

                if (!p->path || (strcmp(p->path, "[stack]") != 0 && strcmp(p->path, "[vdso]") != 0))
                        continue;
                ck_assert_int_eq(address_space_resolve(as, p->start + 8, false, &sym), 0);
                check_symbol(&sym, p->path, NULL, 8);
                /* The stack is data: no return address can point there; the vDSO is code. */
                ck_assert(sym.code == (strcmp(p->path, "[vdso]") == 0));
        }
        ck_assert_uint_eq(symbolizer_cached_files(s), 0);
        munmap(anon, size);
}
END_TEST

/* A forked child's address space (address_space_clone()) shares its parent's vDSO functions: the same image at the
 * same address, named without reading the child's memory (which a storm's child, gone already, no longer has),
 * and still there once the parent's address space is freed. */
START_TEST(test_clone_shares_vdso)
{
        _cleanup_(symbolizer_freep) Symbolizer *s = NULL;
        _cleanup_(address_space_freep) AddressSpace *child = NULL;
        _cleanup_(vdso_symbols_freep) VdsoSymbols *v = NULL;
        _cleanup_(proc_maps_freep) ProcMaps *m = NULL;
        AddressSpace *parent = NULL;
        const ProcMap *vdso = NULL;
        const char *name = NULL;
        uint64_t offset = 0, within;
        char *expected;
        Symbol sym;

        ck_assert_int_eq(proc_maps_read(getpid(), &m), 0);
        for (size_t i = 0; i < m->n; i++)
                if (m->maps[i].path && strcmp(m->maps[i].path, "[vdso]") == 0)
                        vdso = &m->maps[i];
        if (!vdso)
                return; /* booted with vdso=0 */
        ck_assert_int_eq(vdso_symbols_read(getpid(), vdso->start, vdso->end, &v), 0);
        for (; offset < vdso->end - vdso->start && !name; offset += 4)
                name = vdso_symbols_lookup(v, offset, &within);
        ck_assert_ptr_nonnull(name);
        offset -= 4;

        ck_assert_int_eq(symbolizer_new(&s), 0);
        ck_assert_int_eq(address_space_new(s, getpid(), &parent), 0);
        ck_assert_int_eq(address_space_resolve(parent, vdso->start + offset, false, &sym), 0);
        ck_assert_str_eq(sym.function, name);
        expected = strdup(name);
        ck_assert_ptr_nonnull(expected);
        /* A PID no process has: the child's memory cannot be read, its parent's vDSO names it. */
        ck_assert_int_eq(address_space_clone(parent, 4194304 + 1, 0, &child), 0);
        address_space_free(parent);
        ck_assert_int_eq(address_space_resolve(child, vdso->start + offset, false, &sym), 0);
        ck_assert_str_eq(sym.function, expected);
        ck_assert_uint_eq(sym.offset, within);
        free(expected);
}
END_TEST

START_TEST(test_exited_process)
{
        _cleanup_(symbolizer_freep) Symbolizer *s = NULL;
        _cleanup_(address_space_freep) AddressSpace *as = NULL;
        AddressSpace *sentinel = (AddressSpace *)0x1, *as2 = sentinel;
        Symbol sym;
        Fixture f;
        pid_t pid;

        ck_assert_int_eq(symbolizer_new(&s), 0);
        fixture_start(arg_nopie, &f);
        pid = f.pid;
        ck_assert_int_eq(address_space_new(s, pid, &as), 0);
        ck_assert_int_eq(fixture_stop(&f), 0);
        ck_assert_int_eq(address_space_new(s, pid, &as2), -ESRCH);
        ck_assert_ptr_eq(as2, sentinel);

        /* Its file is opened only now, by path since /proc/PID is gone. */
        ck_assert_int_eq(address_space_resolve(as, f.target, false, &sym), 0);
        check_symbol(&sym, "fixture-nopie", "vprof_fixture_prog_target", 0);

        /* A miss after the interval tries to re-read the maps, finds the process gone, and keeps the
         * snapshot. */
        wait_reread_interval();
        ck_assert_int_eq(address_space_resolve(as, 0x10, false, &sym), 0);
        check_symbol(&sym, "[unknown]", NULL, 0x10);
        ck_assert_int_eq(address_space_resolve(as, f.local + 1, false, &sym), 0);
        check_symbol(&sym, "fixture-nopie", "fixture_prog_local", 1);
        ck_assert_int_eq(address_space_resolve(as, f.target + 3, true, &sym), 0);
        check_symbol(&sym, "fixture-nopie", "vprof_fixture_prog_target", 3);
}
END_TEST

START_TEST(test_deleted_binary)
{
        _cleanup_(symbolizer_freep) Symbolizer *s = NULL;
        _cleanup_(address_space_freep) AddressSpace *as = NULL;
        _cleanup_(proc_maps_freep) ProcMaps *m = NULL;
        char path[] = "/tmp/vprof-deleted-XXXXXX", buf[65536];
        _cleanup_close_ int in = -1;
        const ProcMap *p;
        int out;
        ssize_t n;
        Symbol sym;
        Fixture f;

        /* Only map_files reaches a deleted file, and it needs CAP_SYS_ADMIN. */
        if (geteuid() != 0) {
                fprintf(stderr, "not root, skipping the deleted-binary check\n");
                return;
        }

        in = open(arg_pie, O_RDONLY | O_CLOEXEC);
        ck_assert_int_ge(in, 0);
        out = mkstemp(path);
        ck_assert_int_ge(out, 0);
        while ((n = read(in, buf, sizeof(buf))) > 0)
                ck_assert_int_eq(write(out, buf, (size_t)n), n);
        ck_assert_int_eq(n, 0);
        ck_assert_int_eq(fchmod(out, 0700), 0);
        close(out);

        fixture_start(path, &f);
        ck_assert_int_eq(unlink(path), 0);

        ck_assert_int_eq(symbolizer_new(&s), 0);
        ck_assert_int_eq(address_space_new(s, f.pid, &as), 0);
        ck_assert_int_eq(proc_maps_read(f.pid, &m), 0);
        p = proc_maps_find(m, f.target);
        ck_assert_ptr_nonnull(p);
        ck_assert(p->deleted);
        ck_assert_str_eq(p->path, path);

        ck_assert_int_eq(address_space_resolve(as, f.target, false, &sym), 0);
        check_symbol(&sym, base_name(path), "vprof_fixture_prog_target", 0);
        ck_assert_int_eq(fixture_stop(&f), 0);
}
END_TEST

/* A file reached by two paths (hard links) is one file: parsed once, whichever path each process ran. */
START_TEST(test_hard_link_parsed_once)
{
        _cleanup_(symbolizer_freep) Symbolizer *s = NULL;
        _cleanup_(address_space_freep) AddressSpace *a = NULL, *b = NULL;
        char link_path[PATH_MAX];
        FileInfo fa, fb;
        size_t memory;
        Symbol sym;
        Fixture f, g;

        /* Next to the fixture: a hard link cannot leave its file system. */
        ck_assert_int_lt(snprintf(link_path, sizeof(link_path), "%s-link-%d", arg_pie, (int)getpid()),
                         (int)sizeof(link_path));
        if (link(arg_pie, link_path) < 0) {
                fprintf(stderr, "cannot hard-link %s (%m), skipping\n", arg_pie);
                return;
        }

        ck_assert_int_eq(symbolizer_new(&s), 0);
        fixture_start(arg_pie, &f);
        fixture_start(link_path, &g);
        ck_assert_int_eq(unlink(link_path), 0);

        ck_assert_int_eq(address_space_new(s, f.pid, &a), 0);
        ck_assert_int_eq(address_space_resolve(a, f.target, false, &sym), 0);
        check_symbol(&sym, base_name(arg_pie), "vprof_fixture_prog_target", 0);
        ck_assert_int_eq(address_space_file_info(a, f.target, &fa), 0);
        memory = symbolizer_memory(s);

        ck_assert_int_eq(address_space_new(s, g.pid, &b), 0);
        ck_assert_int_eq(address_space_resolve(b, g.target, false, &sym), 0);
        check_symbol(&sym, base_name(link_path), "vprof_fixture_prog_target", 0);
        ck_assert_int_eq(address_space_file_info(b, g.target, &fb), 0);

        /* The same entry (its build-id string is the entry's own), and nothing more held. */
        ck_assert_ptr_nonnull(fa.build_id);
        ck_assert_ptr_eq(fa.build_id, fb.build_id);
        ck_assert_uint_eq(symbolizer_memory(s), memory);
        ck_assert_str_eq(base_name(fb.path), base_name(link_path));

        ck_assert_int_eq(fixture_stop(&f), 0);
        ck_assert_int_eq(fixture_stop(&g), 0);
}
END_TEST

START_TEST(test_kernel)
{
        _cleanup_(symbolizer_freep) Symbolizer *s = NULL;
        uint64_t addr = test_kernel_symbol("schedule");
        Symbol sym;

        ck_assert_int_eq(symbolizer_new(&s), 0);
        /* Nothing in the kernel is at 0x1000: "kernel" and the address. */
        ck_assert_int_eq(symbolizer_resolve_kernel(s, 0x1000, &sym), 0);
        check_symbol(&sym, "kernel", NULL, 0x1000);

        if (addr == 0) {
                fprintf(stderr, "kernel addresses not visible, skipping the live check\n");
                return;
        }
        ck_assert_int_eq(symbolizer_resolve_kernel(s, addr, &sym), 0);
        check_symbol(&sym, "kernel", "schedule", 0);
        ck_assert_int_eq(symbolizer_resolve_kernel(s, addr + 6, &sym), 0);
        check_symbol(&sym, "kernel", "schedule", 6);
}
END_TEST

/* A program cut short while the symbolizer reads it (after its headers): counted as damaged, its frames
 * named by offset in the file, no call frame information either; a second address does not read it again. */
START_TEST(test_damaged_file)
{
        _cleanup_(symbolizer_freep) Symbolizer *s = NULL;
        _cleanup_(address_space_freep) AddressSpace *as = NULL;
        _cleanup_(proc_maps_freep) ProcMaps *m = NULL;
        _cleanup_free_ char *path = test_copy_temp(arg_pie, "pie");
        uint64_t window[4] = {}, ra = 0;
        const ProcMap *p;
        Symbol sym;
        Fixture f;

        ck_assert_int_eq(symbolizer_new(&s), 0);
        fixture_start(path, &f);
        ck_assert_int_eq(address_space_new(s, f.pid, &as), 0);
        ck_assert_int_eq(proc_maps_read(f.pid, &m), 0);
        p = proc_maps_find(m, f.target);
        ck_assert_ptr_nonnull(p);

        pread_hook_arm(path, 3, 1024, false);
        ck_assert_int_eq(address_space_resolve(as, f.target, false, &sym), 0);
        check_symbol(&sym, base_name(path), NULL, f.target - p->start + p->offset);
        ck_assert_uint_eq(symbolizer_damaged_files(s), 1);
        ck_assert_int_eq(unwinder_leaf(as, f.target, 0x1000, 0, window, 4, &ra), -ENOENT);
        ck_assert_int_eq(address_space_resolve(as, f.local, false, &sym), 0);
        ck_assert_ptr_null(sym.function);
        ck_assert_uint_eq(symbolizer_damaged_files(s), 1);
        pread_hook_disarm();

        ck_assert_int_eq(fixture_stop(&f), 0);
        unlink(path);
}
END_TEST

/* A process gone, its file's path made a FIFO meanwhile (renamed away, a FIFO in its place): the symbolizer,
 * down to the path for want of the process's map_files, must not open the FIFO (it would wait forever for a
 * writer) and names the frame by offset. */
START_TEST(test_mapping_path_now_a_fifo)
{
        _cleanup_(symbolizer_freep) Symbolizer *s = NULL;
        _cleanup_(address_space_freep) AddressSpace *as = NULL;
        _cleanup_free_ char *path = test_copy_temp(arg_pie, "pie"), *moved = NULL;
        Symbol sym;
        Fixture f;

        ck_assert_int_ge(asprintf(&moved, "%s.moved", path), 0);
        ck_assert_int_eq(symbolizer_new(&s), 0);
        fixture_start(path, &f);
        ck_assert_int_eq(address_space_new(s, f.pid, &as), 0);
        ck_assert_int_eq(fixture_stop(&f), 0);
        ck_assert_int_eq(rename(path, moved), 0);
        ck_assert_int_eq(mkfifo(path, 0600), 0);

        ck_assert_int_eq(address_space_resolve(as, f.target, false, &sym), 0);
        ck_assert_str_eq(sym.module, base_name(path));
        ck_assert_ptr_null(sym.function);
        unlink(path);
        unlink(moved);
}
END_TEST

/* kallsyms without addresses: counted for the daemon to say so, every kernel frame [kernel]. */
START_TEST(test_kallsyms_restricted_counted)
{
        _cleanup_(symbolizer_freep) Symbolizer *s = NULL;
        _cleanup_free_ char *path = test_write_temp("0000000000000000 T _stext\n"
                                                    "0000000000000000 t schedule\n");
        Symbol sym;

        ck_assert_int_eq(symbolizer_new(&s), 0);
        ck_assert_int_eq(symbolizer_set_kallsyms(s, path, UINT64_C(3600) * 1000 * 1000), 0);
        ck_assert_uint_eq(symbolizer_kallsyms_restricted_reads(s), 0);
        ck_assert_int_eq(symbolizer_resolve_kernel(s, UINT64_C(0xffffffff81000000), &sym), 0);
        check_symbol(&sym, "kernel", "[kernel]", 0);
        ck_assert_uint_eq(symbolizer_kallsyms_restricted_reads(s), 1);
        ck_assert_int_eq(symbolizer_resolve_kernel(s, UINT64_C(0xffffffff81000010), &sym), 0);
        ck_assert_uint_eq(symbolizer_kallsyms_restricted_reads(s), 1);
        unlink(path);
}
END_TEST

int main(int argc, char *argv[])
{
        Suite *s = suite_create("symbolizer");
        TCase *tc = tcase_create("core");

        if (argc != 4) {
                fprintf(stderr, "usage: %s LIB PIE NON-PIE\n", argv[0]);
                return 2;
        }
        arg_lib = argv[1];
        arg_pie = argv[2];
        arg_nopie = argv[3];

        tcase_set_timeout(tc, 30);
        tcase_add_test(tc, test_pie);
        tcase_add_test(tc, test_nopie);
        tcase_add_test(tc, test_dlopen_rereads_maps);
        tcase_add_test(tc, test_cache_shared_between_processes);
        tcase_add_test(tc, test_budget);
        tcase_add_test(tc, test_unknown_anon_special);
        tcase_add_test(tc, test_exited_process);
        tcase_add_test(tc, test_clone_shares_vdso);
        tcase_add_test(tc, test_deleted_binary);
        tcase_add_test(tc, test_hard_link_parsed_once);
        tcase_add_test(tc, test_kernel);
        tcase_add_test(tc, test_damaged_file);
        tcase_add_test(tc, test_kallsyms_restricted_counted);
        tcase_add_test(tc, test_mapping_path_now_a_fifo);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
