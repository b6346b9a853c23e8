/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check-main.h"
#include "line-source.h"

/* The inline reader (inline-frames.h, through line_reader_inline()) on the GCC-built workload vprof-inline, whose
 * run_batch() holds stage_hash() (holding mix_round()) and stage_sum(): the chains at its addresses, their call
 * sites against the lines of the workload's source, and a chain cut to fewer frames. */

static const char *arg_workload;

/* The ELF address and size of the function symbol name of path. */
static void symbol_range(const char *path, const char *name, uint64_t *ret_start, uint64_t *ret_size)
{
        Elf_Scn *scn = NULL;
        bool found = false;
        Elf *elf;
        int fd;

        ck_assert_int_ne(elf_version(EV_CURRENT), EV_NONE);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        elf = elf_begin(fd, ELF_C_READ, NULL);
        ck_assert_ptr_nonnull(elf);
        while (!found && (scn = elf_nextscn(elf, scn))) {
                GElf_Shdr shdr;
                Elf_Data *data;

                if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_SYMTAB || !(data = elf_getdata(scn, NULL)))
                        continue;
                for (size_t i = 0; i < shdr.sh_size / shdr.sh_entsize; i++) {
                        GElf_Sym sym;
                        const char *n;

                        if (gelf_getsym(data, (int)i, &sym) && (n = elf_strptr(elf, shdr.sh_link, sym.st_name)) &&
                            strcmp(n, name) == 0) {
                                *ret_start = sym.st_value;
                                *ret_size = sym.st_size;
                                found = true;
                                break;
                        }
                }
        }
        elf_end(elf);
        close(fd);
        ck_assert_msg(found, "%s: no symbol %s", path, name);
}

static int expand(LineReader *r, uint64_t vaddr, InlineFrame *frames, size_t max)
{
        int fd = open(arg_workload, O_RDONLY | O_CLOEXEC);

        ck_assert_int_ge(fd, 0);
        return line_reader_inline(r, fd, vaddr, frames, max);
}

/* The line of file holding text (its first), 0 when none. */
static int line_of(const char *file, const char *text)
{
        char buf[512];
        int n = 0;
        FILE *f = fopen(file, "re");

        ck_assert_msg(f, "cannot open %s", file);
        while (fgets(buf, sizeof(buf), f)) {
                n++;
                if (strstr(buf, text)) {
                        fclose(f);
                        return n;
                }
        }
        fclose(f);
        return 0;
}

START_TEST(test_chains)
{
        _cleanup_(line_reader_freep) LineReader *r = NULL;
        InlineFrame frames[INLINE_FRAMES_MAX + 1];
        uint64_t start, size, deep = 0;
        bool seen_sum = false;

#if !HAVE_LIBDW
        return;
#endif
        ck_assert_int_eq(line_reader_new(&r), 0);
        symbol_range(arg_workload, "run_batch", &start, &size);
        for (uint64_t a = start; a < start + size; a++) {
                int n = expand(r, a, frames, ELEMENTSOF(frames));

                ck_assert_int_ge(n, 1);
                /* Outermost, the function the code is in: no call site of its own. */
                ck_assert_str_eq(frames[n - 1].function, "run_batch");
                ck_assert_int_eq(frames[n - 1].inlined, 0);
                ck_assert_ptr_null(frames[n - 1].call_file);
                for (int i = 0; i < n - 1; i++)
                        ck_assert_int_eq(frames[i].inlined, 1);
                if (n == 3 && strcmp(frames[0].function, "mix_round") == 0 && !deep) {
                        ck_assert_str_eq(frames[1].function, "stage_hash");
                        deep = a;
                        /* mix_round called by stage_hash's loop, stage_hash by run_batch: the source's lines. */
                        ck_assert_ptr_nonnull(frames[0].call_file);
                        ck_assert_msg(strstr(frames[0].call_file, "vprof-inline.c"), "%s", frames[0].call_file);
                        ck_assert_int_eq(frames[0].call_line, line_of(frames[0].call_file, "h = mix_round(h, i);"));
                        ck_assert_int_eq(frames[1].call_line,
                                         line_of(frames[1].call_file, "h = stage_hash(seed, 1000000);"));
                }
                if (n == 2 && strcmp(frames[0].function, "stage_sum") == 0)
                        seen_sum = true;
        }
        ck_assert_msg(deep, "no address of run_batch in mix_round inlined in stage_hash");
        ck_assert(seen_sum);

        /* Fewer frames than the chain: the outermost kept. */
        ck_assert_int_eq(expand(r, deep, frames, 2), 2);
        ck_assert_str_eq(frames[0].function, "stage_hash");
        ck_assert_str_eq(frames[1].function, "run_batch");
        ck_assert_int_eq(expand(r, deep, frames, 1), 1);
        ck_assert_str_eq(frames[0].function, "run_batch");
        ck_assert_int_eq(expand(r, deep, frames, 0), -ENOBUFS);
        /* An address in no function of the DWARF. */
        ck_assert_int_eq(expand(r, 1, frames, ELEMENTSOF(frames)), -ENOENT);
}
END_TEST

/* The file offset and size of section name of the ELF file fd, false when it has none. */
static bool section_at(int fd, const char *name, uint64_t *ret_offset, uint64_t *ret_size)
{
        Elf_Scn *scn = NULL;
        size_t shstrndx;
        bool found = false;
        Elf *elf = elf_begin(fd, ELF_C_READ, NULL);

        ck_assert_ptr_nonnull(elf);
        ck_assert_int_eq(elf_getshdrstrndx(elf, &shstrndx), 0);
        while (!found && (scn = elf_nextscn(elf, scn))) {
                GElf_Shdr shdr;
                const char *n;

                if (gelf_getshdr(scn, &shdr) && (n = elf_strptr(elf, shstrndx, shdr.sh_name)) && strcmp(n, name) == 0) {
                        *ret_offset = shdr.sh_offset;
                        *ret_size = shdr.sh_size;
                        found = true;
                }
        }
        elf_end(elf);
        return found;
}

/* The workload with the last byte of a string section made not NUL: libdw would read its last string past the
 * section's end (found by fuzz-inline-frames under ASan); the reader takes such a file as one without DWARF. */
START_TEST(test_unterminated_strings)
{
        static const char *const sections[] = {".debug_line_str", ".debug_str"};
        InlineFrame frames[INLINE_FRAMES_MAX + 1];
        uint64_t start, size;
        int n_tried = 0;

#if !HAVE_LIBDW
        return;
#endif
        symbol_range(arg_workload, "run_batch", &start, &size);
        for (size_t i = 0; i < ELEMENTSOF(sections); i++) {
                _cleanup_(line_reader_freep) LineReader *r = NULL;
                uint64_t offset, section_size;
                char buf[65536];
                ssize_t n;
                int in = open(arg_workload, O_RDONLY | O_CLOEXEC), fd = memfd_create("unterminated", MFD_CLOEXEC);

                ck_assert_int_ge(in, 0);
                ck_assert_int_ge(fd, 0);
                while ((n = read(in, buf, sizeof(buf))) > 0)
                        ck_assert_int_eq(write(fd, buf, (size_t)n), n);
                close(in);
                if (!section_at(fd, sections[i], &offset, &section_size) || section_size == 0) {
                        close(fd);
                        continue;
                }
                n_tried++;
                ck_assert_int_eq(pwrite(fd, "x", 1, (off_t)(offset + section_size - 1)), 1);
                ck_assert_int_eq(line_reader_new(&r), 0);
                /* Takes fd. */
                ck_assert_int_eq(line_reader_inline(r, fd, start, frames, ELEMENTSOF(frames)), -ENOENT);
        }
        ck_assert_msg(n_tried > 0, "%s has no string section", arg_workload);
}
END_TEST

int main(int argc, char *argv[])
{
        Suite *s = suite_create("inline-frames");
        TCase *tc = tcase_create("core");

        if (argc != 2) {
                fprintf(stderr, "usage: %s VPROF-INLINE\n", argv[0]);
                return 2;
        }
        arg_workload = argv[1];
        tcase_add_test(tc, test_chains);
        tcase_add_test(tc, test_unterminated_strings);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
