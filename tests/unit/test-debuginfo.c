/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Symbols of stripped files from where gdb finds them: separate debug files by .gnu_debuglink and by
 * build-id, and MiniDebugInfo. Each case lays the fixtures out in a temporary directory, runs the binary and
 * resolves its functions through the symbolizer, with a private debug directory. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "address-space.h"
#include "check-main.h"
#include "elf-symbols.h"
#include "fixture-util.h"
#include "macros.h"
#include "pread-hook.h"
#include "symbolizer.h"
#include "test-util.h"

/* From the command line: the fixtures built in tests/fixtures. */
static const char *arg_pie, *arg_pie_debug, *arg_nopie_debug, *arg_debuglink, *arg_stripped, *arg_mini;

/* A temporary tree: ROOT/bin for binaries, ROOT/debug the debug directory. */
typedef struct Tree {
        char root[64];
        char bin[96];
        char debug[96];
} Tree;

static void tree_make(Tree *t)
{
        strcpy(t->root, "/tmp/vprof-debuginfo-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(t->root));
        snprintf(t->bin, sizeof(t->bin), "%s/bin", t->root);
        snprintf(t->debug, sizeof(t->debug), "%s/debug", t->root);
        ck_assert_int_eq(mkdir(t->bin, 0755), 0);
        ck_assert_int_eq(mkdir(t->debug, 0755), 0);
}

static void tree_remove(Tree *t)
{
        char cmd[PATH_MAX + 16];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->root);
        ck_assert_int_eq(system(cmd), 0);
}

/* Copy from to the path made of the parts, creating its directories; extra bytes appended. */
static void copy_file(const char *from, const char *to, const char *extra)
{
        _cleanup_free_ char *dir = strdup(to), *buf = NULL;
        _cleanup_close_ int in = -1, out = -1;
        struct stat st;
        char cmd[PATH_MAX + 16];

        ck_assert_ptr_nonnull(dir);
        *strrchr(dir, '/') = '\0';
        snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", dir);
        ck_assert_int_eq(system(cmd), 0);

        in = open(from, O_RDONLY | O_CLOEXEC);
        ck_assert_int_ge(in, 0);
        ck_assert_int_eq(fstat(in, &st), 0);
        buf = malloc((size_t)st.st_size);
        ck_assert_ptr_nonnull(buf);
        ck_assert_int_eq(read(in, buf, (size_t)st.st_size), st.st_size);
        out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
        ck_assert_int_ge(out, 0);
        ck_assert_int_eq(write(out, buf, (size_t)st.st_size), st.st_size);
        if (extra)
                ck_assert_int_eq(write(out, extra, strlen(extra)), (ssize_t)strlen(extra));
}

static char *build_id_of(const char *path)
{
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        char *id;

        ck_assert_int_eq(elf_symbols_load_path(path, &e), 0);
        ck_assert_ptr_nonnull(elf_symbols_build_id(e));
        id = strdup(elf_symbols_build_id(e));
        ck_assert_ptr_nonnull(id);
        return id;
}

/* DEBUGDIR/.build-id/xx/rest.debug of the build-id of binary. */
static void build_id_path(const Tree *t, const char *binary, char *ret, size_t size)
{
        _cleanup_free_ char *id = build_id_of(binary);

        snprintf(ret, size, "%s/.build-id/%.2s/%s.debug", t->debug, id, id + 2);
}

/* Run binary, resolve its two functions; names: whether they must be named. Fills *ret_info. */
static void run_and_check(const Tree *t, const char *binary, bool names, SymbolSource source,
                          const char *debug_file)
{
        _cleanup_(symbolizer_freep) Symbolizer *s = NULL;
        _cleanup_(address_space_freep) AddressSpace *as = NULL;
        _cleanup_free_ char *id = build_id_of(binary);
        FileInfo info;
        Symbol sym;
        Fixture f;

        ck_assert_int_eq(symbolizer_new(&s), 0);
        ck_assert_str_eq(symbolizer_debug_directory(s), "/usr/lib/debug");
        ck_assert_int_eq(symbolizer_set_debug_directory(s, "relative"), -EINVAL);
        ck_assert_int_eq(symbolizer_set_debug_directory(s, t->debug), 0);
        ck_assert_str_eq(symbolizer_debug_directory(s), t->debug);

        fixture_start(binary, &f);
        ck_assert_int_eq(address_space_new(s, f.pid, &as), 0);

        ck_assert_int_eq(address_space_resolve(as, f.target + 3, false, &sym), 0);
        ck_assert_str_eq(sym.module, base_name(binary));
        if (names) {
                ck_assert_msg(sym.function && strcmp(sym.function, "vprof_fixture_prog_target") == 0, "got %s",
                              sym.function ?: "(null)");
                ck_assert_uint_eq(sym.offset, 3);
                ck_assert_int_eq(address_space_resolve(as, f.local, false, &sym), 0);
                ck_assert_msg(sym.function && strcmp(sym.function, "fixture_prog_local") == 0, "got %s",
                              sym.function ?: "(null)");
                ck_assert_uint_eq(sym.offset, 0);
        } else
                ck_assert_ptr_null(sym.function);

        ck_assert_int_eq(address_space_file_info(as, f.target, &info), 0);
        ck_assert_msg(info.source == source, "source %s, expected %s", symbol_source_to_string(info.source),
                      symbol_source_to_string(source));
        ck_assert_str_eq(info.module, base_name(binary));
        ck_assert_str_eq(info.path, binary);
        ck_assert_ptr_nonnull(info.build_id);
        ck_assert_str_eq(info.build_id, id);
        if (debug_file)
                ck_assert_str_eq(info.debug_file, debug_file);
        else
                ck_assert_ptr_null(info.debug_file);
        if (names)
                ck_assert_uint_ge(info.n_symbols, 2);
        /* The debug file's table is the file's: counted in the cache. */
        ck_assert_uint_ge(symbolizer_memory(s), info.n_symbols * 16);

        ck_assert_int_eq(address_space_module_info(as, base_name(binary), &info), 0);
        ck_assert_int_eq(info.source, source);
        ck_assert_int_eq(address_space_module_info(as, "no-such-module", &info), -ENOENT);

        ck_assert_int_eq(fixture_stop(&f), 0);
}

START_TEST(test_own_symtab)
{
        Tree t;
        char bin[PATH_MAX];

        tree_make(&t);
        snprintf(bin, sizeof(bin), "%s/fixture-pie", t.bin);
        copy_file(arg_pie, bin, NULL);
        run_and_check(&t, bin, true, SYMBOL_SOURCE_SYMTAB, NULL);
        tree_remove(&t);
}
END_TEST

START_TEST(test_stripped_without_debug_file)
{
        Tree t;
        char bin[PATH_MAX];

        tree_make(&t);
        snprintf(bin, sizeof(bin), "%s/fixture-debuglink", t.bin);
        copy_file(arg_debuglink, bin, NULL);
        run_and_check(&t, bin, false, SYMBOL_SOURCE_NONE, NULL);
        tree_remove(&t);
}
END_TEST

/* The three places of a .gnu_debuglink file: 0 next to the binary, 1 in .debug/, 2 under DEBUGDIR/BINDIR/. */
static void check_debuglink(int place)
{
        Tree t;
        char bin[PATH_MAX], debug[PATH_MAX * 2 + 32];

        tree_make(&t);
        snprintf(bin, sizeof(bin), "%s/fixture-debuglink", t.bin);
        copy_file(arg_debuglink, bin, NULL);
        if (place == 0)
                snprintf(debug, sizeof(debug), "%s/fixture-pie.debug", t.bin);
        else if (place == 1)
                snprintf(debug, sizeof(debug), "%s/.debug/fixture-pie.debug", t.bin);
        else
                snprintf(debug, sizeof(debug), "%s%s/fixture-pie.debug", t.debug, t.bin);
        copy_file(arg_pie_debug, debug, NULL);
        run_and_check(&t, bin, true, SYMBOL_SOURCE_DEBUGLINK, debug);
        tree_remove(&t);
}

START_TEST(test_debuglink_next_to_binary)
{
        check_debuglink(0);
}
END_TEST

START_TEST(test_debuglink_in_dot_debug)
{
        check_debuglink(1);
}
END_TEST

START_TEST(test_debuglink_in_debug_directory)
{
        check_debuglink(2);
}
END_TEST

/* A debug file of the right name but other contents: its CRC is not the link's. */
START_TEST(test_debuglink_wrong_crc)
{
        Tree t;
        char bin[PATH_MAX], debug[PATH_MAX + 32];

        tree_make(&t);
        snprintf(bin, sizeof(bin), "%s/fixture-debuglink", t.bin);
        copy_file(arg_debuglink, bin, NULL);
        snprintf(debug, sizeof(debug), "%s/fixture-pie.debug", t.bin);
        copy_file(arg_pie_debug, debug, "changed");
        run_and_check(&t, bin, false, SYMBOL_SOURCE_NONE, NULL);
        /* The right one in .debug/ is still found after the wrong one next to the binary. */
        snprintf(debug, sizeof(debug), "%s/.debug/fixture-pie.debug", t.bin);
        copy_file(arg_pie_debug, debug, NULL);
        run_and_check(&t, bin, true, SYMBOL_SOURCE_DEBUGLINK, debug);
        tree_remove(&t);
}
END_TEST

START_TEST(test_build_id)
{
        Tree t;
        char bin[PATH_MAX], debug[PATH_MAX + 128];

        tree_make(&t);
        snprintf(bin, sizeof(bin), "%s/fixture-stripped-pie", t.bin);
        copy_file(arg_stripped, bin, NULL);
        build_id_path(&t, bin, debug, sizeof(debug));
        copy_file(arg_pie_debug, debug, NULL);
        run_and_check(&t, bin, true, SYMBOL_SOURCE_BUILD_ID, debug);
        tree_remove(&t);
}
END_TEST

/* Another build's debug file at this build-id's path: its build-id says so, and it is refused. */
START_TEST(test_build_id_mismatch)
{
        Tree t;
        char bin[PATH_MAX], debug[PATH_MAX + 128];

        tree_make(&t);
        snprintf(bin, sizeof(bin), "%s/fixture-stripped-pie", t.bin);
        copy_file(arg_stripped, bin, NULL);
        build_id_path(&t, bin, debug, sizeof(debug));
        copy_file(arg_nopie_debug, debug, NULL);
        run_and_check(&t, bin, false, SYMBOL_SOURCE_NONE, NULL);
        tree_remove(&t);
}
END_TEST

/* The build-id comes before the debuglink. */
START_TEST(test_build_id_first)
{
        Tree t;
        char bin[PATH_MAX], by_id[PATH_MAX + 128], by_link[PATH_MAX + 32];

        tree_make(&t);
        snprintf(bin, sizeof(bin), "%s/fixture-debuglink", t.bin);
        copy_file(arg_debuglink, bin, NULL);
        snprintf(by_link, sizeof(by_link), "%s/fixture-pie.debug", t.bin);
        copy_file(arg_pie_debug, by_link, NULL);
        build_id_path(&t, bin, by_id, sizeof(by_id));
        copy_file(arg_pie_debug, by_id, NULL);
        run_and_check(&t, bin, true, SYMBOL_SOURCE_BUILD_ID, by_id);
        tree_remove(&t);
}
END_TEST

START_TEST(test_minidebuginfo)
{
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        Tree t;
        char bin[PATH_MAX];

        /* Alone, the file has its .dynsym: only the exported function. */
        ck_assert_int_eq(elf_symbols_load_path(arg_mini, &e), 0);
        ck_assert_int_eq(elf_symbols_source(e), ELF_SYMBOLS_DYNSYM);
        ck_assert(elf_symbols_has_minidebuginfo(e));

        tree_make(&t);
        snprintf(bin, sizeof(bin), "%s/fixture-minidebuginfo", t.bin);
        copy_file(arg_mini, bin, NULL);
        /* The local function from .gnu_debugdata, the exported one from .dynsym. */
        run_and_check(&t, bin, true, SYMBOL_SOURCE_MINIDEBUGINFO, NULL);
        tree_remove(&t);
}
END_TEST

/* A fetch function that has the debug file at hand (path) or not (NULL), and counts the requests. */
typedef struct FetchMock {
        const char *path;
        unsigned calls;
        char build_id[128];
} FetchMock;

static int fetch_debug_file(const char *build_id, const char *binary_path, char **ret_path, void *userdata)
{
        FetchMock *f = userdata;

        ck_assert_ptr_nonnull(binary_path);
        f->calls++;
        snprintf(f->build_id, sizeof(f->build_id), "%s", build_id);
        if (!f->path)
                return 0;
        *ret_path = strdup(f->path);
        return *ret_path ? 1 : -ENOMEM;
}

/* A stripped file without a local debug file is asked about once; a debug file that arrives later names its
 * code from then on, and one of another build is refused. */
START_TEST(test_debug_file_arrives_later)
{
        _cleanup_(symbolizer_freep) Symbolizer *s = NULL;
        _cleanup_(address_space_freep) AddressSpace *as = NULL;
        _cleanup_free_ char *id = NULL;
        FetchMock mock = {};
        FileInfo info;
        Symbol sym;
        Fixture f;
        Tree t;
        char bin[PATH_MAX];

        tree_make(&t);
        snprintf(bin, sizeof(bin), "%s/fixture-stripped-pie", t.bin);
        copy_file(arg_stripped, bin, NULL);
        id = build_id_of(bin);
        ck_assert_int_eq(symbolizer_new(&s), 0);
        ck_assert_int_eq(symbolizer_set_debug_directory(s, t.debug), 0);
        symbolizer_set_debug_fetch(s, fetch_debug_file, &mock);

        fixture_start(bin, &f);
        ck_assert_int_eq(address_space_new(s, f.pid, &as), 0);
        ck_assert_int_eq(address_space_resolve(as, f.target + 3, false, &sym), 0);
        ck_assert_ptr_null(sym.function);
        ck_assert_int_eq(address_space_resolve(as, f.local, false, &sym), 0);
        ck_assert_uint_eq(mock.calls, 1);
        ck_assert_str_eq(mock.build_id, id);

        ck_assert_int_eq(symbolizer_add_debug_file(s, id, arg_nopie_debug), 0);
        ck_assert_int_eq(symbolizer_add_debug_file(s, "0123abcd", arg_pie_debug), 0);
        ck_assert_int_eq(address_space_file_info(as, f.target, &info), 0);
        ck_assert_int_eq(info.source, SYMBOL_SOURCE_NONE);

        ck_assert_int_eq(symbolizer_add_debug_file(s, id, arg_pie_debug), 1);
        ck_assert_int_eq(address_space_resolve(as, f.target + 3, false, &sym), 0);
        ck_assert_msg(sym.function && strcmp(sym.function, "vprof_fixture_prog_target") == 0, "got %s",
                      sym.function ?: "(null)");
        ck_assert_uint_eq(sym.offset, 3);
        ck_assert_int_eq(address_space_file_info(as, f.target, &info), 0);
        ck_assert_int_eq(info.source, SYMBOL_SOURCE_DEBUGINFOD);
        ck_assert_str_eq(info.debug_file, arg_pie_debug);
        ck_assert_uint_ge(symbolizer_memory(s), info.n_symbols * 16);
        /* Named already: not taken again. */
        ck_assert_int_eq(symbolizer_add_debug_file(s, id, arg_pie_debug), 0);
        ck_assert_uint_eq(mock.calls, 1);

        ck_assert_int_eq(fixture_stop(&f), 0);
        tree_remove(&t);
}
END_TEST

/* A debug file fetched before is taken when the file is parsed; a local one is not asked about. */
START_TEST(test_debug_file_at_hand)
{
        _cleanup_(symbolizer_freep) Symbolizer *s = NULL;
        _cleanup_(address_space_freep) AddressSpace *as = NULL;
        FetchMock mock = { .path = arg_pie_debug };
        FileInfo info;
        Fixture f;
        Tree t;
        char bin[PATH_MAX];

        tree_make(&t);
        snprintf(bin, sizeof(bin), "%s/fixture-stripped-pie", t.bin);
        copy_file(arg_stripped, bin, NULL);
        ck_assert_int_eq(symbolizer_new(&s), 0);
        ck_assert_int_eq(symbolizer_set_debug_directory(s, t.debug), 0);
        symbolizer_set_debug_fetch(s, fetch_debug_file, &mock);
        fixture_start(bin, &f);
        ck_assert_int_eq(address_space_new(s, f.pid, &as), 0);
        ck_assert_int_eq(address_space_file_info(as, f.target, &info), 0);
        ck_assert_int_eq(info.source, SYMBOL_SOURCE_DEBUGINFOD);
        ck_assert_str_eq(info.debug_file, arg_pie_debug);
        ck_assert_uint_eq(mock.calls, 1);
        ck_assert_int_eq(fixture_stop(&f), 0);
        tree_remove(&t);

        /* Its own .symtab: nothing to fetch. */
        as = address_space_free(as);
        fixture_start(arg_pie, &f);
        ck_assert_int_eq(address_space_new(s, f.pid, &as), 0);
        ck_assert_int_eq(address_space_file_info(as, f.target, &info), 0);
        ck_assert_int_eq(info.source, SYMBOL_SOURCE_SYMTAB);
        ck_assert_uint_eq(mock.calls, 1);
        ck_assert_int_eq(fixture_stop(&f), 0);
}
END_TEST

START_TEST(test_source_names)
{
        ck_assert_str_eq(symbol_source_to_string(SYMBOL_SOURCE_NONE), "none");
        ck_assert_str_eq(symbol_source_to_string(SYMBOL_SOURCE_SYMTAB), "symtab");
        ck_assert_str_eq(symbol_source_to_string(SYMBOL_SOURCE_DYNSYM), "dynsym");
        ck_assert_str_eq(symbol_source_to_string(SYMBOL_SOURCE_MINIDEBUGINFO), "minidebuginfo");
        ck_assert_str_eq(symbol_source_to_string(SYMBOL_SOURCE_DEBUGLINK), "debuglink");
        ck_assert_str_eq(symbol_source_to_string(SYMBOL_SOURCE_BUILD_ID), "build-id");
        ck_assert_str_eq(symbol_source_to_string(SYMBOL_SOURCE_DEBUGINFOD), "debuginfod");
        ck_assert_ptr_null(symbol_source_to_string(_SYMBOL_SOURCE_MAX));
}
END_TEST

/* The debug file is cut short while it is read, after its headers: it is left out and counted as damaged,
 * and the binary's code stays unnamed; read whole, it names it. */
START_TEST(test_damaged_debug_file)
{
        _cleanup_(symbolizer_freep) Symbolizer *s = NULL;
        _cleanup_(address_space_freep) AddressSpace *as = NULL;
        Tree t;
        char bin[PATH_MAX], debug[PATH_MAX + 128];
        FileInfo info;
        Symbol sym;
        Fixture f;

        tree_make(&t);
        snprintf(bin, sizeof(bin), "%s/fixture-stripped-pie", t.bin);
        copy_file(arg_stripped, bin, NULL);
        build_id_path(&t, bin, debug, sizeof(debug));
        copy_file(arg_pie_debug, debug, NULL);

        ck_assert_int_eq(symbolizer_new(&s), 0);
        ck_assert_int_eq(symbolizer_set_debug_directory(s, t.debug), 0);
        fixture_start(bin, &f);
        ck_assert_int_eq(address_space_new(s, f.pid, &as), 0);
        pread_hook_arm(debug, 3, 1024, false);
        ck_assert_int_eq(address_space_resolve(as, f.target + 3, false, &sym), 0);
        pread_hook_disarm();
        ck_assert_str_eq(sym.module, "fixture-stripped-pie");
        ck_assert_ptr_null(sym.function);
        ck_assert_uint_eq(symbolizer_damaged_files(s), 1);
        ck_assert_int_eq(address_space_file_info(as, f.target, &info), 0);
        ck_assert_int_eq(info.source, SYMBOL_SOURCE_NONE);
        ck_assert_ptr_null(info.debug_file);
        ck_assert_int_eq(fixture_stop(&f), 0);

        run_and_check(&t, bin, true, SYMBOL_SOURCE_BUILD_ID, debug);
        tree_remove(&t);
}
END_TEST

/* The binary changes while its MiniDebugInfo is read: -EIO, and its .dynsym names stay. */
START_TEST(test_damaged_minidebuginfo)
{
        _cleanup_(elf_symbols_freep) ElfSymbols *e = NULL;
        _cleanup_free_ char *path = test_copy_temp(arg_mini, "mini");
        _cleanup_close_ int fd = -1;
        size_t count;
        struct stat st;

        ck_assert_int_eq(stat(path, &st), 0);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(elf_symbols_load_fd(fd, &e), 0);
        ck_assert_int_eq(elf_symbols_source(e), ELF_SYMBOLS_DYNSYM);
        count = elf_symbols_count(e);

        pread_hook_arm(path, 3, 1024, false);
        ck_assert_int_eq(elf_symbols_use_minidebuginfo(e, fd), -EIO);
        pread_hook_arm(path, 3, st.st_size, true);
        ck_assert_int_eq(elf_symbols_use_minidebuginfo(e, fd), -EIO);
        pread_hook_disarm();
        ck_assert_int_eq(elf_symbols_source(e), ELF_SYMBOLS_DYNSYM);
        ck_assert_uint_eq(elf_symbols_count(e), count);

        ck_assert_int_eq(elf_symbols_use_minidebuginfo(e, fd), 0);
        ck_assert_int_eq(elf_symbols_source(e), ELF_SYMBOLS_MINIDEBUGINFO);
        ck_assert_uint_gt(elf_symbols_count(e), count);
        unlink(path);
}
END_TEST

int main(int argc, char *argv[])
{
        Suite *s = suite_create("debuginfo");
        TCase *tc = tcase_create("core");

        if (argc != 7) {
                fprintf(stderr, "usage: %s PIE PIE-DEBUG NOPIE-DEBUG DEBUGLINK STRIPPED MINIDEBUGINFO\n", argv[0]);
                return 2;
        }
        arg_pie = argv[1];
        arg_pie_debug = argv[2];
        arg_nopie_debug = argv[3];
        arg_debuglink = argv[4];
        arg_stripped = argv[5];
        arg_mini = argv[6];

        tcase_add_test(tc, test_own_symtab);
        tcase_add_test(tc, test_stripped_without_debug_file);
        tcase_add_test(tc, test_debuglink_next_to_binary);
        tcase_add_test(tc, test_debuglink_in_dot_debug);
        tcase_add_test(tc, test_debuglink_in_debug_directory);
        tcase_add_test(tc, test_debuglink_wrong_crc);
        tcase_add_test(tc, test_build_id);
        tcase_add_test(tc, test_build_id_mismatch);
        tcase_add_test(tc, test_build_id_first);
        tcase_add_test(tc, test_minidebuginfo);
        tcase_add_test(tc, test_debug_file_arrives_later);
        tcase_add_test(tc, test_debug_file_at_hand);
        tcase_add_test(tc, test_source_names);
        tcase_add_test(tc, test_damaged_debug_file);
        tcase_add_test(tc, test_damaged_minidebuginfo);
        tcase_set_timeout(tc, 60);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
