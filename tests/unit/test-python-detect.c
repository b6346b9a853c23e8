/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check-main.h"
#include "elf-util.h"
#include "macros.h"
#include "python-detect.h"
#include "python-elf.h"
#include "python-offsets.h"
#include "python-version.h"
#include "python-versions.h"

/* From the command line (tests/unit/meson.build): Debian's /usr/bin/python3.11 (with python3.11-dbg),
 * pyenv's libpython3.11.so.1.0 and its python3.11 (absent on CI: those cases skip), a file named python3.11
 * that is /bin/true, the first half of Debian's, Debian's with another build-id, and python-layout-check.py.
 */
static const char *arg_debian, *arg_pyenv_lib, *arg_pyenv_exe, *arg_fake, *arg_truncated, *arg_other_id,
        *arg_check_script, *arg_stand_in_lib, *arg_stand_in_exe, *arg_stand_in_313;

static bool exists(const char *path)
{
        return access(path, R_OK) == 0;
}

/* The [start, end) of the file's .text, read with libelf directly (not through the code under test). */
static void text_range(const char *path, uint64_t *ret_start, uint64_t *ret_end)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        Elf_Scn *scn = NULL;
        size_t shstrndx;
        Elf *elf;

        ck_assert_int_ge(fd, 0);
        ck_assert(elf_version(EV_CURRENT) != EV_NONE);
        elf = elf_begin(fd, ELF_C_READ, NULL);
        ck_assert_ptr_nonnull(elf);
        ck_assert_int_eq(elf_getshdrstrndx(elf, &shstrndx), 0);
        *ret_start = *ret_end = 0;
        while ((scn = elf_nextscn(elf, scn))) {
                GElf_Shdr shdr;
                const char *name;

                ck_assert_ptr_nonnull(gelf_getshdr(scn, &shdr));
                name = elf_strptr(elf, shstrndx, shdr.sh_name);
                if (name && strcmp(name, ".text") == 0) {
                        *ret_start = shdr.sh_addr;
                        *ret_end = shdr.sh_addr + shdr.sh_size;
                }
        }
        elf_end(elf);
        ck_assert_uint_lt(*ret_start, *ret_end);
}

static void check_in_text(const char *path, uint64_t start, uint64_t end)
{
        uint64_t text_start, text_end;

        text_range(path, &text_start, &text_end);
        ck_assert_uint_lt(start, end);
        ck_assert_uint_ge(start, text_start);
        ck_assert_uint_le(end, text_end);
}

static PythonInterpreter *detect(const char *path)
{
        PythonInterpreter *p = NULL;
        int r = python_detect_path(path, NULL, &p);

        ck_assert_msg(r == 0, "%s: %s", path, strerror(-r));
        return p;
}

static void fill(const char *path, const PythonInterpreter *p, PythonOffsets *o)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(python_offsets_fill(fd, p, NULL, o), 0);
}

static size_t field_index(const char *name)
{
        for (size_t i = 0; i < python_layout_n_fields; i++)
                if (strcmp(python_layout_fields[i].name, name) == 0)
                        return i;
        ck_abort_msg("no field %s", name);
        return 0;
}

/* Every field of the checked-in table of 3.11 as the DWARF says, and from the DWARF. */
static void check_dwarf_equals_table(const PythonOffsets *o)
{
        const PythonVersionTable *t = python_versions_lookup(11);

        ck_assert_ptr_nonnull(t);
        ck_assert(t->verified);
        ck_assert_int_gt(o->dwarf_result, 0);
        ck_assert_uint_eq(o->conflicts, 0);
        for (size_t i = 0; i < python_layout_n_fields; i++) {
                const char *name = python_layout_fields[i].name;

                ck_assert_msg(python_layout_field_get(&o->layout, i) ==
                                      python_layout_field_get(&t->layout, i),
                              "%s: %u, the table %u", name, python_layout_field_get(&o->layout, i),
                              python_layout_field_get(&t->layout, i));
                ck_assert_msg(o->source[i] == PYTHON_LAYOUT_SOURCE_DWARF, "%s from the %s", name,
                              python_layout_source_to_string(o->source[i]));
                ck_assert(o->agreed[i] & (1u << PYTHON_LAYOUT_SOURCE_TABLE));
        }
}

/* The code object's fields that PyCode_Type's member table names: read from the file, equal to the others.
 */
static void check_members_agree(const PythonOffsets *o)
{
        static const char *const fields[] = {
                "code_filename", "code_name", "code_qualname", "code_firstlineno", "code_linetable",
        };

        ck_assert_int_eq(o->members_result, (int)ELEMENTSOF(fields));
        for (size_t k = 0; k < ELEMENTSOF(fields); k++)
                ck_assert_msg(o->agreed[field_index(fields[k])] & (1u << PYTHON_LAYOUT_SOURCE_MEMBERS), "%s",
                              fields[k]);
}

/* The interpreter at exe runs python-layout-check.py with the layout: every field checked in its own
 * objects. */
static void check_live(const char *exe, const PythonLayout *l)
{
        char *argv[3 + 2 * PYTHON_LAYOUT_FIELDS_MAX + 1] = {(char *)exe, "-I", (char *)arg_check_script};
        char values[PYTHON_LAYOUT_FIELDS_MAX][16], output[4096] = "";
        size_t n = 3, len = 0;
        int out[2], status;
        ssize_t k;
        pid_t pid;

        for (size_t i = 0; i < python_layout_n_fields; i++) {
                if (python_layout_field_get(l, i) == PYTHON_LAYOUT_NONE)
                        continue;
                snprintf(values[i], sizeof(values[i]), "%u", python_layout_field_get(l, i));
                argv[n++] = (char *)python_layout_fields[i].name;
                argv[n++] = values[i];
        }
        argv[n] = NULL;
        ck_assert_int_eq(pipe(out), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                dup2(out[1], STDOUT_FILENO);
                dup2(out[1], STDERR_FILENO);
                execv(exe, argv);
                _exit(127);
        }
        close(out[1]);
        while (len < sizeof(output) - 1 && (k = read(out[0], output + len, sizeof(output) - 1 - len)) > 0)
                len += (size_t)k;
        output[len] = '\0';
        close(out[0]);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: %s", exe, output);
        /* Every field the layout gives was checked: nothing "not checked". */
        ck_assert_msg(strncmp(output, "ok ", 3) == 0 && !strstr(output, "not checked"), "%s: %s", exe,
                      output);
}

START_TEST(test_version_parse)
{
        uint32_t v = 0;
        char buf[32];
        static const uint8_t rodata[] = "usage\0"
                                        "3.2.0\0"
                                        "3.11.2\0"
                                        "x3.12.0\0"
                                        "3.11.2+\0";
        static const uint8_t two[] = "3.10.1\0"
                                     "3.11.2";

        ck_assert_int_eq(python_version_parse("3.11.2", 6, &v), 0);
        ck_assert_uint_eq(v, 0x030b02f0);
        ck_assert_int_eq(python_version_parse("3.12.0rc1", 9, &v), 0);
        ck_assert_uint_eq(v, 0x030c00c1);
        ck_assert_str_eq(python_version_format(v, buf, sizeof(buf)), "3.12.0rc1");
        ck_assert_int_eq(python_version_parse("3.13.0a4+", 9, &v), 0);
        ck_assert_uint_eq(v, 0x030d00a4);
        ck_assert_int_eq(python_version_parse("3.13.0b2", 8, &v), 0);
        ck_assert_uint_eq(v, 0x030d00b2);
        ck_assert_int_eq(python_version_parse("2.7.18", 6, &v), -EINVAL);
        ck_assert_int_eq(python_version_parse("3.11", 4, &v), -EINVAL);
        ck_assert_int_eq(python_version_parse("3.11.2x", 7, &v), -EINVAL);
        ck_assert_int_eq(python_version_parse("3.1111.2", 8, &v), -EINVAL);
        ck_assert_int_eq(python_version_parse("3.11.2rc99", 10, &v), -EINVAL);
        ck_assert_int_eq(python_version_parse("3.11.", 5, &v), -EINVAL);

        /* A whole string of the block, of 3.6 or later: 3.2.0 is no Python's, x3.12.0 is no whole string. */
        ck_assert_int_eq(python_version_scan(rodata, sizeof(rodata), &v), 0);
        ck_assert_uint_eq(v, 0x030b02f0);
        ck_assert_int_eq(python_version_scan(two, sizeof(two) - 1, &v), -ENOTUNIQ);
        ck_assert_int_eq(python_version_scan((const uint8_t *)"3.2.0", 5, &v), -ENOENT);
        /* The tail of a longer string, after a separator only. */
        ck_assert_int_eq(python_version_scan((const uint8_t *)"/opt/python-3.10.12", 19, &v), 0);
        ck_assert_uint_eq(v, 0x030a0cf0);
        ck_assert_int_eq(python_version_scan((const uint8_t *)"usage 3.9.1rc1", 14, &v), 0);
        ck_assert_uint_eq(v, 0x030901c1);
        ck_assert_int_eq(python_version_scan((const uint8_t *)"x3.10.12", 8, &v), -ENOENT);
        ck_assert_int_eq(python_version_scan((const uint8_t *)"/a/3.10.1\0/b/3.12.0", 20, &v), -ENOTUNIQ);
        ck_assert(!python_version_valid(0x020718f0));
        ck_assert(python_version_valid(0x030b02f0));
}
END_TEST

START_TEST(test_debian)
{
        _cleanup_(python_interpreter_freep) PythonInterpreter *p = detect(arg_debian);
        _cleanup_(elf_file_freep) ElfFile *f = NULL;
        _cleanup_close_ int fd = -1;
        PythonOffsets o;
        Elf_Data *rodata;
        uint32_t v = 0;

        ck_assert_uint_eq(p->version_hex, 0x030b02f0);
        ck_assert(p->version_from_symbol);
        ck_assert(!p->pie_or_dso);
        ck_assert_ptr_nonnull(p->build_id);
        check_in_text(arg_debian, p->eval_start, p->eval_end);
        ck_assert_uint_ne(p->runtime, 0);
        ck_assert_uint_ne(p->code_type, 0);
        /* Stripped: the .cold part and the DWARF are python3.11-dbg's, by build-id. */
        ck_assert(!p->own_dwarf);
        ck_assert_ptr_nonnull(p->dwarf_path);
        ck_assert(strstr(p->dwarf_path, "/.build-id/"));
        check_in_text(arg_debian, p->eval_cold_start, p->eval_cold_end);
        ck_assert(p->eval_cold_end <= p->eval_start || p->eval_cold_start >= p->eval_end);

        /* The PY_VERSION string, the fallback of the versions before Py_Version, says the same. */
        fd = open(arg_debian, O_RDONLY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(elf_file_open(fd, &f), 0);
        ck_assert_int_eq(python_elf_section(f, ".rodata", UINT64_C(64) << 20, &rodata), 0);
        ck_assert_int_eq(python_version_scan(rodata->d_buf, rodata->d_size, &v), 0);
        ck_assert_uint_eq(v, p->version_hex);

        fill(arg_debian, p, &o);
        ck_assert_uint_eq(o.layout.version_hex, 0x030b02f0);
        check_dwarf_equals_table(&o);
        ck_assert_int_eq(o.debug_offsets_result, -ENOENT);
        /* A position-dependent executable: the member table's pointers are in the file as they are run. */
        check_members_agree(&o);
        check_live(arg_debian, &o.layout);
}
END_TEST

START_TEST(test_pyenv)
{
        _cleanup_(python_interpreter_freep) PythonInterpreter *p = NULL;
        PythonOffsets o;

        if (!exists(arg_pyenv_lib) || !exists(arg_pyenv_exe)) {
                printf("pyenv's Python 3.11 absent: skipped\n");
                return;
        }
        /* pyenv's python3.11 links libpython: the interpreter is the library. */
        ck_assert_int_eq(python_detect_path(arg_pyenv_exe, NULL, &p), -EMEDIUMTYPE);
        p = detect(arg_pyenv_lib);
        ck_assert_uint_eq(PYTHON_VERSION_MAJOR(p->version_hex), 3);
        ck_assert_uint_eq(PYTHON_VERSION_MINOR(p->version_hex), 11);
        ck_assert(p->pie_or_dso);
        ck_assert(p->own_dwarf);
        check_in_text(arg_pyenv_lib, p->eval_start, p->eval_end);
        check_in_text(arg_pyenv_lib, p->eval_cold_start, p->eval_cold_end);

        /* Its PY_VERSION string is the tail of the installation's path in .rodata: the fallback still finds
         * it. */
        {
                _cleanup_(elf_file_freep) ElfFile *f = NULL;
                _cleanup_close_ int fd = open(arg_pyenv_lib, O_RDONLY | O_CLOEXEC);
                Elf_Data *rodata;
                uint32_t v = 0;

                ck_assert_int_ge(fd, 0);
                ck_assert_int_eq(elf_file_open(fd, &f), 0);
                ck_assert_int_eq(python_elf_section(f, ".rodata", UINT64_C(64) << 20, &rodata), 0);
                ck_assert_int_eq(python_version_scan(rodata->d_buf, rodata->d_size, &v), 0);
                ck_assert_uint_eq(v, p->version_hex);
        }

        fill(arg_pyenv_lib, p, &o);
        check_dwarf_equals_table(&o);
        /* A library: the member table's pointers come from its R_X86_64_RELATIVE relocations. */
        check_members_agree(&o);
        check_live(arg_pyenv_exe, &o.layout);
}
END_TEST

START_TEST(test_not_interpreters)
{
        _cleanup_(python_interpreter_freep) PythonInterpreter *p = NULL;

        /* /bin/true named python3.11: ELF, but no interpreter. */
        ck_assert_int_eq(python_detect_path(arg_fake, NULL, &p), -EMEDIUMTYPE);
        ck_assert_ptr_null(p);
        /* Half of python3.11: its section headers and segments cut off. */
        ck_assert_int_eq(python_detect_path(arg_truncated, NULL, &p), -EIO);
        ck_assert_ptr_null(p);
        /* Not ELF at all, and no file. */
        ck_assert_int_eq(python_detect_path(arg_check_script, NULL, &p), -ENOEXEC);
        ck_assert_int_lt(python_detect_path("/nonexistent/python3.11", NULL, &p), 0);
        ck_assert_ptr_null(p);
}
END_TEST

/* Debian's interpreter with another build-id: still Python 3.11.2, but its debug file is not this file's, so
 * no .cold part and no DWARF; the layout is the table's, its code fields confirmed by PyCode_Type's members.
 */
START_TEST(test_other_build_id)
{
        _cleanup_(python_interpreter_freep) PythonInterpreter *p = detect(arg_other_id);
        PythonOffsets o;

        ck_assert_uint_eq(p->version_hex, 0x030b02f0);
        ck_assert_ptr_null(p->dwarf_path);
        ck_assert_uint_eq(p->eval_cold_start, 0);
        ck_assert_uint_eq(p->eval_cold_end, 0);
        fill(arg_other_id, p, &o);
        ck_assert_int_eq(o.dwarf_result, -ENOENT);
        ck_assert_uint_eq(o.conflicts, 0);
        check_members_agree(&o);
        ck_assert_int_eq(o.source[field_index("code_filename")], PYTHON_LAYOUT_SOURCE_MEMBERS);
        ck_assert_int_eq(o.source[field_index("frame_previous")], PYTHON_LAYOUT_SOURCE_TABLE);
        ck_assert(o.table_verified);
}
END_TEST

/* The stand-in (fixture-python.c): recognized as 3.11.2 by its symbols; its member table read through
 * relocations (the library) or as stored (the executable), and believed over the table where they differ. */
START_TEST(test_stand_in)
{
        const char *paths[] = {arg_stand_in_lib, arg_stand_in_exe};

        for (size_t k = 0; k < ELEMENTSOF(paths); k++) {
                _cleanup_(python_interpreter_freep) PythonInterpreter *p = detect(paths[k]);
                size_t name = field_index("code_name"), filename = field_index("code_filename");
                PythonOffsets o;

                ck_assert_uint_eq(p->version_hex, 0x030b02f0);
                ck_assert(p->version_from_symbol);
                ck_assert(p->pie_or_dso == (k == 0));
                ck_assert_uint_ne(p->code_type, 0);
                check_in_text(paths[k], p->eval_start, p->eval_end);
                ck_assert_uint_eq(p->eval_cold_end, 0);

                fill(paths[k], p, &o);
                ck_assert_int_eq(o.members_result, 5);
                ck_assert_uint_eq(o.conflicts, 1);
                ck_assert_uint_eq(o.layout.code_name, 200);
                ck_assert_int_eq(o.source[name], PYTHON_LAYOUT_SOURCE_MEMBERS);
                ck_assert_uint_eq(o.agreed[name], 1u << PYTHON_LAYOUT_SOURCE_MEMBERS);
                ck_assert_uint_eq(o.agreed[filename],
                                  (1u << PYTHON_LAYOUT_SOURCE_TABLE) | (1u << PYTHON_LAYOUT_SOURCE_MEMBERS));
                /* Its DWARF, if built with it, describes no Python structure. */
                ck_assert_int_le(o.dwarf_result, 0);
                ck_assert_uint_eq(o.layout.frame_previous, 48);
                ck_assert_int_eq(o.source[field_index("frame_previous")], PYTHON_LAYOUT_SOURCE_TABLE);
        }
}
END_TEST

/* The stand-in of 3.13: _Py_DebugOffsets read from its _PyRuntime, believed over the member table and the
 * checked-in table (its frame owner at 74 where the table says 70); the fields it does not publish stay the
 * table's. */
START_TEST(test_debug_offsets)
{
        _cleanup_(python_interpreter_freep) PythonInterpreter *p = detect(arg_stand_in_313);
        size_t owner = field_index("frame_owner"), filename = field_index("code_filename");
        size_t compact = field_index("unicode_compact_data"), cframe = field_index("tstate_cframe");
        PythonOffsets o;

        ck_assert_uint_eq(p->version_hex, 0x030d00f0);
        fill(arg_stand_in_313, p, &o);
        ck_assert_int_eq(o.debug_offsets_result, 21);
        ck_assert_int_eq(o.members_result, 5);
        ck_assert_uint_eq(o.conflicts, 1);
        ck_assert_uint_eq(o.layout.frame_owner, 74);
        ck_assert_int_eq(o.source[owner], PYTHON_LAYOUT_SOURCE_DEBUG_OFFSETS);
        ck_assert_uint_eq(o.agreed[owner], 1u << PYTHON_LAYOUT_SOURCE_DEBUG_OFFSETS);
        ck_assert_int_eq(o.source[filename], PYTHON_LAYOUT_SOURCE_DEBUG_OFFSETS);
        ck_assert_uint_eq(o.agreed[filename], (1u << PYTHON_LAYOUT_SOURCE_TABLE) |
                                                      (1u << PYTHON_LAYOUT_SOURCE_MEMBERS) |
                                                      (1u << PYTHON_LAYOUT_SOURCE_DEBUG_OFFSETS));
        ck_assert_uint_eq(o.layout.cframe_current_frame, 72);
        ck_assert_int_eq(o.source[compact], PYTHON_LAYOUT_SOURCE_TABLE);
        ck_assert_uint_eq(o.layout.tstate_cframe, PYTHON_LAYOUT_NONE);
        ck_assert_int_eq(o.source[cframe], PYTHON_LAYOUT_SOURCE_NONE);
}
END_TEST

START_TEST(test_unknown_version)
{
        PythonInterpreter p = {.version_hex = 0x030e00f0};
        PythonOffsets o;

        /* 3.14: no table; the daemon names it and takes native frames only. */
        ck_assert_int_eq(python_offsets_fill(-1, &p, NULL, &o), -EPROTONOSUPPORT);
        p.version_hex = 0x020718f0;
        ck_assert_int_eq(python_offsets_fill(-1, &p, NULL, &o), -EPROTONOSUPPORT);
        for (unsigned minor = 8; minor <= 13; minor++)
                ck_assert_ptr_nonnull(python_versions_lookup(minor));
        ck_assert_ptr_null(python_versions_lookup(7));
        ck_assert_uint_le(python_layout_n_fields, PYTHON_LAYOUT_FIELDS_MAX);
}
END_TEST

static Suite *python_detect_suite(void)
{
        Suite *s = suite_create("python-detect");
        TCase *tc = tcase_create("core");

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_version_parse);
        tcase_add_test(tc, test_debian);
        tcase_add_test(tc, test_pyenv);
        tcase_add_test(tc, test_not_interpreters);
        tcase_add_test(tc, test_other_build_id);
        tcase_add_test(tc, test_stand_in);
        tcase_add_test(tc, test_debug_offsets);
        tcase_add_test(tc, test_unknown_version);
        suite_add_tcase(s, tc);
        return s;
}

int main(int argc, char **argv)
{
        if (argc != 11) {
                fprintf(stderr,
                        "usage: %s PYTHON3.11 PYENV-LIBPYTHON PYENV-PYTHON FAKE TRUNCATED OTHER-BUILD-ID "
                        "CHECK-SCRIPT STAND-IN-LIB STAND-IN-EXE STAND-IN-3.13\n",
                        argv[0]);
                return 2;
        }
        arg_debian = argv[1];
        arg_pyenv_lib = argv[2];
        arg_pyenv_exe = argv[3];
        arg_fake = argv[4];
        arg_truncated = argv[5];
        arg_other_id = argv[6];
        arg_check_script = argv[7];
        arg_stand_in_lib = argv[8];
        arg_stand_in_exe = argv[9];
        arg_stand_in_313 = argv[10];
        return run_suite(python_detect_suite());
}
