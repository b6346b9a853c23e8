/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "address-space.h"
#include "check-main.h"
#include "line-source.h"
#include "symbolizer.h"

/* Where code is written (line-source.h), found as the daemon finds it for GetFunctionSources: an address of this
 * process, its file and ELF address (address_space_code_file()), then the line table of this test, which the
 * build compiles with -g. */

static const char *arg_clang_fixture;

static const int marked_first = __LINE__ + 2;
__attribute__((noinline)) int marked_function(int x);
__attribute__((noinline)) int marked_function(int x)
{
        return x * 3 + 1;
}
static const int marked_last = __LINE__ - 1;

static void lookup(uint64_t addr, int expected, char *buf, size_t size)
{
        _cleanup_(symbolizer_freep) Symbolizer *s = NULL;
        _cleanup_(address_space_freep) AddressSpace *as = NULL;
        _cleanup_(line_reader_freep) LineReader *r = NULL;
        uint64_t vaddr;
        int fd;

        ck_assert_int_eq(symbolizer_new(&s), 0);
        ck_assert_int_eq(address_space_new(s, getpid(), &as), 0);
        ck_assert_int_eq(line_reader_new(&r), 0);
        ck_assert_int_eq(address_space_code_file(as, addr, &fd, &vaddr), 0);
        ck_assert_int_eq(line_reader_lookup(r, fd, vaddr, buf, size), expected);
        /* The same file again: the reader's open one. */
        ck_assert_int_eq(address_space_code_file(as, addr, &fd, &vaddr), 0);
        ck_assert_int_eq(line_reader_lookup(r, fd, vaddr, buf, size), expected);
}

START_TEST(test_own_function)
{
        char buf[4096];
        const char *colon;
        int line;

#if !HAVE_LIBDW
        lookup((uint64_t)(uintptr_t)marked_function, -EOPNOTSUPP, buf, sizeof(buf));
        return;
#endif
        ck_assert_int_eq(marked_function(1), 4);
        lookup((uint64_t)(uintptr_t)marked_function, 0, buf, sizeof(buf));
        /* ".../tests/unit/test-line-source.c:LINE", the line of the function's first instruction (as addr2line
         * says of its start): its first line, or its first statement's, as the compiler placed it. */
        colon = strrchr(buf, ':');
        ck_assert_ptr_nonnull(colon);
        ck_assert_msg(colon - buf >= 29 && strncmp(colon - 29, "tests/unit/test-line-source.c", 29) == 0, "%s", buf);
        ck_assert_int_eq(sscanf(colon + 1, "%d", &line), 1);
        ck_assert_msg(line >= marked_first && line <= marked_last, "%s: not in lines %d to %d", buf, marked_first,
                      marked_last);

        /* Too small a buffer. */
        lookup((uint64_t)(uintptr_t)marked_function, -ENOBUFS, buf, 8);
}
END_TEST

/* An address in no file mapping (the stack) has no file to read; a file without DWARF no line. */
START_TEST(test_no_file)
{
        _cleanup_(symbolizer_freep) Symbolizer *s = NULL;
        _cleanup_(address_space_freep) AddressSpace *as = NULL;
        uint64_t vaddr = 0;
        int fd = -1, local = 0;

        ck_assert_int_eq(symbolizer_new(&s), 0);
        ck_assert_int_eq(address_space_new(s, getpid(), &as), 0);
        ck_assert_int_eq(address_space_code_file(as, (uint64_t)(uintptr_t)&local, &fd, &vaddr), -ENOENT);
        ck_assert_int_eq(fd, -1);
}
END_TEST

/* The ELF virtual address of the function symbol name of the file at path, from its .symtab. */
static uint64_t symbol_vaddr(const char *path, const char *name)
{
        Elf_Scn *scn = NULL;
        uint64_t found = 0;
        Elf *elf;
        int fd;

        ck_assert_uint_ne(elf_version(EV_CURRENT), EV_NONE);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        elf = elf_begin(fd, ELF_C_READ, NULL);
        ck_assert_ptr_nonnull(elf);
        while ((scn = elf_nextscn(elf, scn))) {
                GElf_Shdr sh;
                Elf_Data *data;

                if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !(data = elf_getdata(scn, NULL)))
                        continue;
                for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
                        GElf_Sym sym;
                        const char *n;

                        if (gelf_getsym(data, (int)i, &sym) && GELF_ST_TYPE(sym.st_info) == STT_FUNC &&
                            (n = elf_strptr(elf, sh.sh_link, sym.st_name)) && strcmp(n, name) == 0)
                                found = sym.st_value;
                }
        }
        elf_end(elf);
        close(fd);
        ck_assert_msg(found, "no %s in %s", name, path);
        return found;
}

/* clang's DWARF 5 (64-bit DWARF here) without .debug_aranges: the unit is found by its ranges. The line named is
 * one of main's first lines in the source it names. */
START_TEST(test_without_aranges)
{
        _cleanup_(line_reader_freep) LineReader *r = NULL;
        char buf[4096], text[512];
        const char *colon;
        int line, fd, n = 0;
        bool named = false;
        FILE *f;

#if !HAVE_LIBDW
        return;
#endif
        ck_assert_int_eq(line_reader_new(&r), 0);
        fd = open(arg_clang_fixture, O_RDONLY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(line_reader_lookup(r, fd, symbol_vaddr(arg_clang_fixture, "main"), buf, sizeof(buf)), 0);
        colon = strrchr(buf, ':');
        ck_assert_ptr_nonnull(colon);
        ck_assert_int_eq(sscanf(colon + 1, "%d", &line), 1);
        buf[colon - buf] = '\0';
        ck_assert_msg(buf[0] == '/' && strstr(buf, "fixture-unwind.c"), "%s", buf);
        f = fopen(buf, "re");
        ck_assert_msg(f, "cannot open %s", buf);
        while (fgets(text, sizeof(text), f) && ++n <= line)
                if (n >= line - 2 && strstr(text, "main("))
                        named = true;
        fclose(f);
        ck_assert_msg(named, "%s:%d is not at main's start", buf, line);
        /* An address in no unit. */
        fd = open(arg_clang_fixture, O_RDONLY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(line_reader_lookup(r, fd, 1, buf, sizeof(buf)), -ENOENT);
}
END_TEST

static Suite *line_source_suite(void)
{
        Suite *s = suite_create("line-source");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_own_function);
        tcase_add_test(tc, test_no_file);
        tcase_add_test(tc, test_without_aranges);
        suite_add_tcase(s, tc);
        return s;
}

int main(int argc, char *argv[])
{
        if (argc != 2) {
                fprintf(stderr, "usage: %s FIXTURE-UNWIND-DWARF64\n", argv[0]);
                return 2;
        }
        arg_clang_fixture = argv[1];
        return run_suite(line_source_suite());
}
