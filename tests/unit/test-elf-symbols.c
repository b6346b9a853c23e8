/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test-util.h"
#include "check-main.h"
#include "elf-symbols.h"
#include "fixture-util.h"
#include "macros.h"
#include "pread-hook.h"
#include "proc-maps.h"
#include "utf8.h"

/* From the command line: the fixtures built in tests/fixtures. */
static const char *arg_lib, *arg_lib_stripped, *arg_pie, *arg_nopie, *arg_lib_badname;

/* The ELF vaddr of a runtime address of the process pid, through its maps and the file's segments. */
static uint64_t runtime_to_vaddr(pid_t pid, const ElfSymbols *e, uint64_t addr, const char *expected_path)
{
        _cleanup_(proc_maps_freep) ProcMaps *m = NULL;
        const ProcMap *p;
        uint64_t vaddr = 0;

        ck_assert_int_eq(proc_maps_read(pid, &m), 0);
        p = proc_maps_find(m, addr);
        ck_assert_ptr_nonnull(p);
        ck_assert(p->executable);
        ck_assert_ptr_nonnull(p->path);
        ck_assert_str_eq(base_name(p->path), base_name(expected_path));
        ck_assert_int_eq(elf_symbols_offset_to_vaddr(e, addr - p->start + p->offset, &vaddr), 0);
        return vaddr;
}

static void check_lookup(const ElfSymbols *e, uint64_t vaddr, const char *name, uint64_t offset)
{
        uint64_t o = UINT64_MAX;
        const char *n = elf_symbols_lookup(e, vaddr, &o);

        ck_assert_msg(n && strcmp(n, name) == 0, "0x%llx: expected %s, got %s", (unsigned long long)vaddr,
                      name, n ?: "(null)");
        ck_assert_uint_eq(o, offset);
}

static void check_build_id(const ElfSymbols *e)
{
        const char *id = elf_symbols_build_id(e);

        ck_assert_ptr_nonnull(id);
        /* --build-id=sha1: 20 bytes. */
        ck_assert_uint_eq(strlen(id), 40);
        ck_assert_uint_eq(strspn(id, "0123456789abcdef"), 40);
}

START_TEST(test_shared_library)
{
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        void *handle, *alpha, *beta, *nosize, *hidden;
        void *(*hidden_address)(void);
        uint64_t vaddr;
        Dl_info info;

        ck_assert_int_eq(elf_symbols_load_path(arg_lib, &e), 0);
        ck_assert(elf_symbols_is_pie_or_dso(e));
        check_build_id(e);
        /* alpha, beta, the hidden one, the getter, the size-less one at least. */
        ck_assert_uint_ge(elf_symbols_count(e), 5);

        handle = dlopen(arg_lib, RTLD_NOW | RTLD_LOCAL);
        ck_assert_msg(handle, "dlopen: %s", dlerror());
        alpha = dlsym(handle, "vprof_fixture_lib_alpha");
        beta = dlsym(handle, "vprof_fixture_lib_beta");
        nosize = dlsym(handle, "vprof_fixture_lib_nosize");
        hidden_address = (void *(*)(void))dlsym(handle, "vprof_fixture_lib_hidden_address");
        ck_assert(alpha && beta && nosize && hidden_address);
        /* The weak alias shares alpha's address. */
        ck_assert_ptr_eq(dlsym(handle, "vprof_fixture_lib_alpha_alias"), alpha);
        hidden = hidden_address();

        vaddr = runtime_to_vaddr(getpid(), e, (uintptr_t)alpha, arg_lib);
        /* What the dynamic loader says: a DSO's vaddr is the runtime address minus its load base. */
        ck_assert(dladdr(alpha, &info) != 0);
        ck_assert_uint_eq(vaddr, (uintptr_t)alpha - (uintptr_t)info.dli_fbase);
        /* Of the two names at one address, the global one. */
        check_lookup(e, vaddr, "vprof_fixture_lib_alpha", 0);
        check_lookup(e, vaddr + 1, "vprof_fixture_lib_alpha", 1);

        vaddr = runtime_to_vaddr(getpid(), e, (uintptr_t)beta, arg_lib);
        check_lookup(e, vaddr, "vprof_fixture_lib_beta", 0);
        /* The byte before a function is not in it. */
        ck_assert(!elf_symbols_lookup(e, vaddr - 1, NULL) ||
                  strcmp(elf_symbols_lookup(e, vaddr - 1, NULL), "vprof_fixture_lib_beta") != 0);

        /* A local function, from .symtab. */
        vaddr = runtime_to_vaddr(getpid(), e, (uintptr_t)hidden, arg_lib);
        check_lookup(e, vaddr, "fixture_lib_hidden", 0);

        /* A symbol of size 0 covers its instructions up to the next symbol. */
        vaddr = runtime_to_vaddr(getpid(), e, (uintptr_t)nosize, arg_lib);
        check_lookup(e, vaddr, "vprof_fixture_lib_nosize", 0);
        check_lookup(e, vaddr + 3, "vprof_fixture_lib_nosize", 3);

        ck_assert_ptr_null(elf_symbols_lookup(e, 0, NULL));
        dlclose(handle);
}
END_TEST

START_TEST(test_stripped)
{
        _cleanup_(elf_symbols_freep) ElfSymbols *full = NULL, *e = NULL;
        void *handle, *alpha, *beta, *hidden;
        uint64_t vaddr;
        const char *name;

        ck_assert_int_eq(elf_symbols_load_path(arg_lib, &full), 0);
        ck_assert_int_eq(elf_symbols_load_path(arg_lib_stripped, &e), 0);
        /* Only .dynsym is left: no local functions. */
        ck_assert_uint_lt(elf_symbols_count(e), elf_symbols_count(full));
        ck_assert_uint_ge(elf_symbols_count(e), 3);
        check_build_id(e);
        ck_assert_str_eq(elf_symbols_build_id(e), elf_symbols_build_id(full));

        /* Stripping keeps the layout: addresses in the loaded original are addresses in the copy. */
        handle = dlopen(arg_lib, RTLD_NOW | RTLD_LOCAL);
        ck_assert_msg(handle, "dlopen: %s", dlerror());
        alpha = dlsym(handle, "vprof_fixture_lib_alpha");
        beta = dlsym(handle, "vprof_fixture_lib_beta");
        hidden = ((void *(*)(void))dlsym(handle, "vprof_fixture_lib_hidden_address"))();
        ck_assert(alpha && beta && hidden);

        vaddr = runtime_to_vaddr(getpid(), e, (uintptr_t)alpha, arg_lib);
        check_lookup(e, vaddr, "vprof_fixture_lib_alpha", 0);
        check_lookup(e, vaddr + 2, "vprof_fixture_lib_alpha", 2);
        vaddr = runtime_to_vaddr(getpid(), e, (uintptr_t)beta, arg_lib);
        check_lookup(e, vaddr, "vprof_fixture_lib_beta", 0);

        /* The local function's name is gone with .symtab. */
        vaddr = runtime_to_vaddr(getpid(), e, (uintptr_t)hidden, arg_lib);
        name = elf_symbols_lookup(e, vaddr, NULL);
        ck_assert(!name || strcmp(name, "fixture_lib_hidden") != 0);
        check_lookup(full, vaddr, "fixture_lib_hidden", 0);
        dlclose(handle);
}
END_TEST

static void check_executable(const char *path, bool pie)
{
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        Fixture f;
        uint64_t vaddr;

        ck_assert_int_eq(elf_symbols_load_path(path, &e), 0);
        ck_assert(elf_symbols_is_pie_or_dso(e) == pie);
        check_build_id(e);

        fixture_start(path, &f);
        vaddr = runtime_to_vaddr(f.pid, e, f.target, path);
        if (pie)
                /* Loaded at a base above the link address 0. */
                ck_assert_uint_lt(vaddr, f.target);
        else
                /* Position-dependent: the vaddr is the runtime address. */
                ck_assert_uint_eq(vaddr, f.target);
        check_lookup(e, vaddr, "vprof_fixture_prog_target", 0);
        check_lookup(e, vaddr + 4, "vprof_fixture_prog_target", 4);

        vaddr = runtime_to_vaddr(f.pid, e, f.local, path);
        if (!pie)
                ck_assert_uint_eq(vaddr, f.local);
        check_lookup(e, vaddr, "fixture_prog_local", 0);

        ck_assert_int_eq(fixture_stop(&f), 0);
}

START_TEST(test_pie)
{
        check_executable(arg_pie, true);
}
END_TEST

START_TEST(test_nopie)
{
        check_executable(arg_nopie, false);
}
END_TEST

START_TEST(test_offset_to_vaddr_bounds)
{
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        uint64_t vaddr = 7;
        struct stat st;

        ck_assert_int_eq(elf_symbols_load_path(arg_nopie, &e), 0);
        ck_assert_int_eq(stat(arg_nopie, &st), 0);
        /* The ELF header is in the first PT_LOAD, at the link address of a position-dependent file. */
        ck_assert_int_eq(elf_symbols_offset_to_vaddr(e, 0, &vaddr), 0);
        ck_assert_uint_ne(vaddr, 0);
        /* Past the end of the file no segment has it; the output stays untouched. */
        vaddr = 7;
        ck_assert_int_eq(elf_symbols_offset_to_vaddr(e, (uint64_t)st.st_size + 0x100000, &vaddr), -ENOENT);
        ck_assert_uint_eq(vaddr, 7);
}
END_TEST

START_TEST(test_not_elf)
{
        ElfSymbols *sentinel = (ElfSymbols *)0x1, *e = sentinel;
        _cleanup_free_ char *text = test_write_temp("#!/bin/sh\necho this is not ELF\n");
        _cleanup_free_ char *empty = test_write_temp("");
        _cleanup_free_ char *truncated = test_write_temp("\177ELF\2\1\1");
        _cleanup_close_ int fd = -1;

        ck_assert_int_eq(elf_symbols_load_path(text, &e), -ENOEXEC);
        ck_assert_int_eq(elf_symbols_load_path(empty, &e), -ENOEXEC);
        ck_assert_int_eq(elf_symbols_load_path(truncated, &e), -ENOEXEC);
        ck_assert_int_eq(elf_symbols_load_path("/dev/null", &e), -ENOEXEC);
        ck_assert_int_eq(elf_symbols_load_path("/nonexistent/file", &e), -ENOENT);
        fd = open("/proc/self", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(elf_symbols_load_fd(fd, &e), -ENOEXEC);
        ck_assert_ptr_eq(e, sentinel);
        unlink(text);
        unlink(empty);
        unlink(truncated);
}
END_TEST

/* The fixtures are ELF64: the section header of the first section of type, read from the file at path; its
 * offset in the file in *ret_offset. */
static Elf64_Shdr read_shdr(const char *path, uint32_t type, off_t *ret_offset)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        Elf64_Ehdr ehdr;
        Elf64_Shdr shdr;

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(pread(fd, &ehdr, sizeof(ehdr), 0), (ssize_t)sizeof(ehdr));
        for (unsigned i = 0; i < ehdr.e_shnum; i++) {
                off_t at = (off_t)(ehdr.e_shoff + i * sizeof(shdr));

                ck_assert_int_eq(pread(fd, &shdr, sizeof(shdr), at), (ssize_t)sizeof(shdr));
                if (shdr.sh_type == type) {
                        *ret_offset = at;
                        return shdr;
                }
        }
        ck_abort_msg("no section of type %u in %s", type, path);
        return shdr;
}

static void patch(const char *path, off_t offset, const void *data, size_t size)
{
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(pwrite(fd, data, size, offset), (ssize_t)size);
}

/* The file changes while it is read, after its headers: truncated (a short read), or rewritten in place (its
 * times change). What was read is dropped with -EIO, and the output stays untouched. */
START_TEST(test_changed_while_read)
{
        ElfSymbols *sentinel = (ElfSymbols *)0x1, *e = sentinel;
        _cleanup_free_ char *path = test_copy_temp(arg_lib, "lib.so");
        struct stat st;

        ck_assert_int_eq(stat(path, &st), 0);
        /* The header, the section header table, the program header table: then cut to 1 KiB. */
        pread_hook_arm(path, 3, 1024, false);
        ck_assert_int_eq(elf_symbols_load_path(path, &e), -EIO);
        ck_assert_ptr_eq(e, sentinel);
        ck_assert_uint_ge(pread_hook.short_reads, 1);

        /* Cut before the section headers were read. */
        pread_hook_arm(path, 1, 64, false);
        ck_assert_int_eq(elf_symbols_load_path(path, &e), -EIO);
        ck_assert_ptr_eq(e, sentinel);

        /* Every read whole, but the file changed in between. */
        pread_hook_arm(path, 3, st.st_size, true);
        ck_assert_int_eq(elf_symbols_load_path(path, &e), -EIO);
        ck_assert_ptr_eq(e, sentinel);
        ck_assert_uint_eq(pread_hook.short_reads, 0);

        pread_hook_disarm();
        ck_assert_int_eq(elf_symbols_load_path(path, &e), 0);
        ck_assert_uint_ge(elf_symbols_count(e), 5);
        e = elf_symbols_free(e);
        unlink(path);
}
END_TEST

/* What a file may make the reader allocate is bounded, whatever its headers claim. */
START_TEST(test_bounds)
{
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        _cleanup_free_ char *path = NULL;
        Elf64_Shdr symtab, first;
        off_t at, first_at;
        uint64_t v;
        uint16_t n;

        /* A symbol table of 300 MiB. */
        path = test_copy_temp(arg_lib, "lib.so");
        symtab = read_shdr(path, SHT_SYMTAB, &at);
        v = UINT64_C(300) << 20;
        patch(path, at + (off_t)offsetof(Elf64_Shdr, sh_size), &v, sizeof(v));
        ck_assert_int_eq(elf_symbols_load_path(path, &e), -EFBIG);
        ck_assert_ptr_null(e);
        /* Past the end of the file instead: no .symtab, the exported functions of .dynsym are left. */
        v = symtab.sh_size * 1000;
        patch(path, at + (off_t)offsetof(Elf64_Shdr, sh_size), &v, sizeof(v));
        ck_assert_int_eq(elf_symbols_load_path(path, &e), 0);
        ck_assert_int_eq(elf_symbols_source(e), ELF_SYMBOLS_DYNSYM);
        e = elf_symbols_free(e);
        unlink(path);
        free(path);
        path = NULL;

        /* Its string table marked compressed: libelf would inflate it to what its header claims. Refused,
         * and .dynsym is left. */
        path = test_copy_temp(arg_lib, "lib.so");
        symtab = read_shdr(path, SHT_SYMTAB, &at);
        {
                _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
                Elf64_Ehdr ehdr;
                Elf64_Shdr strtab;
                off_t strtab_at;

                ck_assert_int_eq(pread(fd, &ehdr, sizeof(ehdr), 0), (ssize_t)sizeof(ehdr));
                strtab_at = (off_t)(ehdr.e_shoff + symtab.sh_link * sizeof(Elf64_Shdr));
                ck_assert_int_eq(pread(fd, &strtab, sizeof(strtab), strtab_at), (ssize_t)sizeof(strtab));
                strtab.sh_flags |= SHF_COMPRESSED;
                patch(path, strtab_at, &strtab, sizeof(strtab));
        }
        ck_assert_int_eq(elf_symbols_load_path(path, &e), 0);
        ck_assert_int_eq(elf_symbols_source(e), ELF_SYMBOLS_DYNSYM);
        e = elf_symbols_free(e);
        unlink(path);
        free(path);
        path = NULL;

        /* A million sections, by the extended numbering: the count is in section 0. */
        path = test_copy_temp(arg_lib, "lib.so");
        first = read_shdr(path, SHT_NULL, &first_at);
        ck_assert_int_eq(first.sh_size, 0);
        n = 0;
        patch(path, offsetof(Elf64_Ehdr, e_shnum), &n, sizeof(n));
        v = UINT64_C(1) << 20;
        patch(path, first_at + (off_t)offsetof(Elf64_Shdr, sh_size), &v, sizeof(v));
        ck_assert_int_eq(elf_symbols_load_path(path, &e), -EFBIG);
        unlink(path);
        free(path);
        path = NULL;

        /* A million program headers, likewise. */
        path = test_copy_temp(arg_lib, "lib.so");
        first = read_shdr(path, SHT_NULL, &first_at);
        n = PN_XNUM;
        patch(path, offsetof(Elf64_Ehdr, e_phnum), &n, sizeof(n));
        {
                uint32_t info = UINT32_C(1) << 20;
                patch(path, first_at + (off_t)offsetof(Elf64_Shdr, sh_info), &info, sizeof(info));
        }
        ck_assert_int_eq(elf_symbols_load_path(path, &e), -EFBIG);
        unlink(path);
        free(path);
        path = NULL;

        /* The section header table past the end of the file: no sections, not a crash. */
        path = test_copy_temp(arg_lib, "lib.so");
        v = UINT64_C(1) << 40;
        patch(path, offsetof(Elf64_Ehdr, e_shoff), &v, sizeof(v));
        ck_assert_int_le(elf_symbols_load_path(path, &e), 0);
        ck_assert_uint_eq(elf_symbols_count(e), 0);
        e = elf_symbols_free(e);
        unlink(path);
}
END_TEST

/* The library with vprof_fixture_lib_beta renamed to bytes that are no UTF-8 and a newline: the name comes back
 * escaped, at the same address; its neighbours keep theirs. */
START_TEST(test_name_not_utf8)
{
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL, *bad = NULL;
        const char *name, *before;
        void *handle, *beta;
        uint64_t vaddr;

        ck_assert_int_eq(elf_symbols_load_path(arg_lib, &e), 0);
        ck_assert_int_eq(elf_symbols_load_path(arg_lib_badname, &bad), 0);
        ck_assert_uint_eq(elf_symbols_count(bad), elf_symbols_count(e));
        handle = dlopen(arg_lib, RTLD_NOW | RTLD_LOCAL);
        ck_assert_msg(handle, "dlopen: %s", dlerror());
        beta = dlsym(handle, "vprof_fixture_lib_beta");
        ck_assert_ptr_nonnull(beta);
        vaddr = runtime_to_vaddr(getpid(), e, (uintptr_t)beta, arg_lib);
        check_lookup(e, vaddr, "vprof_fixture_lib_beta", 0);
        check_lookup(bad, vaddr, "vprof_fixture_\\xff\\xfe_beta\\n", 0);
        check_lookup(bad, vaddr + 1, "vprof_fixture_\\xff\\xfe_beta\\n", 1);
        name = elf_symbols_lookup(bad, vaddr, NULL);
        ck_assert(utf8_is_printable(name, strlen(name)));
        /* The function before it is named as before. */
        before = elf_symbols_lookup(e, vaddr - 1, NULL);
        name = elf_symbols_lookup(bad, vaddr - 1, NULL);
        ck_assert(before == name || (before && name && strcmp(before, name) == 0));
        dlclose(handle);
}
END_TEST

int main(int argc, char *argv[])
{
        Suite *s = suite_create("elf-symbols");
        TCase *tc = tcase_create("core");

        if (argc != 6) {
                fprintf(stderr, "usage: %s LIB STRIPPED-LIB PIE NON-PIE BADNAME-LIB\n", argv[0]);
                return 2;
        }
        arg_lib = argv[1];
        arg_lib_stripped = argv[2];
        arg_pie = argv[3];
        arg_nopie = argv[4];
        arg_lib_badname = argv[5];

        tcase_add_test(tc, test_shared_library);
        tcase_add_test(tc, test_stripped);
        tcase_add_test(tc, test_pie);
        tcase_add_test(tc, test_nopie);
        tcase_add_test(tc, test_offset_to_vaddr_bounds);
        tcase_add_test(tc, test_not_elf);
        tcase_add_test(tc, test_changed_while_read);
        tcase_add_test(tc, test_bounds);
        tcase_add_test(tc, test_name_not_utf8);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
