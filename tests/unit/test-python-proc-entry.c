/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check-main.h"
#include "macros.h"
#include "python-detect.h"
#include "python-offsets.h"
#include "python-proc-entry.h"
#include "python-versions.h"

/* From the command line (tests/unit/meson.build): Debian's /usr/bin/python3.11 and its copy with another
 * build-id. */
static const char *arg_debian, *arg_other_id;

/* A layout and interpreter as python_detect_fd() and python_offsets_fill() give them for path. */
static void detect(const char *path, PythonInterpreter **ret_p, PythonLayout *ret_l)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        PythonOffsets offsets;

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(python_detect_fd(fd, &(PythonDetectOptions){}, ret_p), 0);
        ck_assert_int_eq(python_offsets_fill(fd, *ret_p, NULL, &offsets), 0);
        *ret_l = offsets.layout;
}

/* Every offset the walk reads, as the entry holds it, against the layout it came from. */
static void check_offsets(const struct vprof_python_proc *e, const PythonLayout *l)
{
        ck_assert_uint_eq(e->runtime_interpreters_head, l->runtime_interpreters_head);
        ck_assert_uint_eq(e->interp_threads_head, l->interp_threads_head);
        ck_assert_uint_eq(e->tstate_next, l->tstate_next);
        ck_assert_uint_eq(e->tstate_native_thread_id, l->tstate_native_thread_id);
        ck_assert_uint_eq(e->tstate_cframe, l->tstate_cframe);
        ck_assert_uint_eq(e->cframe_current_frame, l->cframe_current_frame);
        ck_assert_uint_eq(e->frame_code, l->frame_code);
        ck_assert_uint_eq(e->frame_previous, l->frame_previous);
        ck_assert_uint_eq(e->frame_instr, l->frame_instr);
        ck_assert_uint_eq(e->frame_owner, l->frame_owner);
        ck_assert_uint_eq(e->object_type, l->object_type);
        ck_assert_uint_eq(e->code_bytecode, l->code_bytecode);
}

START_TEST(debian_python311)
{
        _cleanup_(python_interpreter_freep) PythonInterpreter *p = NULL;
        struct vprof_python_proc e;
        PythonLayout l;

        detect(arg_debian, &p, &l);
        /* A position-dependent executable: its addresses are the run-time ones. */
        ck_assert(!p->pie_or_dso);
        ck_assert_int_eq(python_proc_entry_build(p, &l, 0, &e), 0);
        ck_assert_uint_eq(e.version_hex, p->version_hex);
        ck_assert_uint_eq(e.eval_start, p->eval_start);
        ck_assert_uint_eq(e.eval_end, p->eval_end);
        ck_assert_uint_eq(e.runtime, p->runtime);
        ck_assert_uint_eq(e.code_type, p->code_type);
        ck_assert_uint_ne(e.code_type, 0);
        /* Its .cold part comes from the debug file of python3.11-dbg. */
        ck_assert_uint_eq(e.eval_cold_start, p->eval_cold_start);
        ck_assert_uint_lt(e.eval_cold_start, e.eval_cold_end);
        check_offsets(&e, &l);
        /* 3.11 ends a run of frames at is_entry, at the offset its headers give (pycore_frame.h). */
        ck_assert_uint_eq(e.frame_is_entry, 68);
        ck_assert_uint_eq(e.frame_previous, 48);
        ck_assert_uint_eq(e.frame_instr, 56);
        ck_assert_uint_eq(e._pad, 0);
}
END_TEST

START_TEST(bias_moves_addresses)
{
        _cleanup_(python_interpreter_freep) PythonInterpreter *p = NULL;
        struct vprof_python_proc e, untouched;
        const uint64_t bias = UINT64_C(0x7f0000000000);
        PythonLayout l;

        detect(arg_debian, &p, &l);
        ck_assert_int_eq(python_proc_entry_build(p, &l, bias, &e), 0);
        ck_assert_uint_eq(e.eval_start, p->eval_start + bias);
        ck_assert_uint_eq(e.eval_end, p->eval_end + bias);
        ck_assert_uint_eq(e.eval_cold_start, p->eval_cold_start + bias);
        ck_assert_uint_eq(e.eval_cold_end, p->eval_cold_end + bias);
        ck_assert_uint_eq(e.runtime, p->runtime + bias);
        ck_assert_uint_eq(e.code_type, p->code_type + bias);

        /* No .cold part: it stays 0 (none), not the bias. */
        p->eval_cold_start = p->eval_cold_end = 0;
        ck_assert_int_eq(python_proc_entry_build(p, &l, bias, &e), 0);
        ck_assert_uint_eq(e.eval_cold_start, 0);
        ck_assert_uint_eq(e.eval_cold_end, 0);

        /* An address that wraps with the bias: refused, *ret untouched. */
        memset(&untouched, 0xa5, sizeof(untouched));
        e = untouched;
        ck_assert_int_eq(python_proc_entry_build(p, &l, UINT64_MAX - p->eval_start + 1, &e), -EINVAL);
        ck_assert_mem_eq(&e, &untouched, sizeof(e));
}
END_TEST

START_TEST(other_build_id)
{
        _cleanup_(python_interpreter_freep) PythonInterpreter *p = NULL, *q = NULL;
        struct vprof_python_proc e, f;
        PythonLayout l, m;

        /* A copy with another build-id finds no debug file: no .cold part, the same offsets from the table and
         * the member table. */
        detect(arg_debian, &p, &l);
        detect(arg_other_id, &q, &m);
        ck_assert_int_eq(python_proc_entry_build(p, &l, 0, &e), 0);
        ck_assert_int_eq(python_proc_entry_build(q, &m, 0, &f), 0);
        ck_assert_uint_eq(f.eval_cold_start, 0);
        ck_assert_uint_eq(f.eval_start, e.eval_start);
        check_offsets(&f, &l);
}
END_TEST

/* An interpreter of 3.minor as the checked-in table has it, at made-up addresses. */
static void table_interpreter(unsigned minor, PythonInterpreter *ret_p, PythonLayout *ret_l)
{
        const PythonVersionTable *t = python_versions_lookup(minor);

        ck_assert_ptr_nonnull(t);
        *ret_l = t->layout;
        *ret_p = (PythonInterpreter){
                .version_hex = t->layout.version_hex,
                .runtime = 0x900000,
                .eval_start = 0x500000,
                .eval_end = 0x510000,
        };
}

START_TEST(versions)
{
        struct vprof_python_proc e, untouched;
        PythonInterpreter p;
        PythonLayout l;

        memset(&untouched, 0x5a, sizeof(untouched));
        /* PyFrameObject chains (3.8 to 3.10) and 3.13's frames: not walked, *ret untouched. */
        for (unsigned minor = 8; minor <= 13; minor++) {
                if (minor == 11 || minor == 12)
                        continue;
                table_interpreter(minor, &p, &l);
                e = untouched;
                ck_assert_int_eq(python_proc_entry_build(&p, &l, 0, &e), -EPROTONOSUPPORT);
                ck_assert_mem_eq(&e, &untouched, sizeof(e));
        }
        /* 3.12 has no is_entry (its owner says where a run ends). */
        table_interpreter(12, &p, &l);
        ck_assert_int_eq(python_proc_entry_build(&p, &l, 0, &e), 0);
        ck_assert_uint_eq(e.frame_is_entry, VPROF_PYTHON_NONE);
        ck_assert_uint_eq(e.frame_owner, l.frame_owner);
        check_offsets(&e, &l);
        /* Python 2, 4: no. */
        p.version_hex = 0x020712f0;
        ck_assert_int_eq(python_proc_entry_build(&p, &l, 0, &e), -EPROTONOSUPPORT);
        p.version_hex = 0x040b00f0;
        ck_assert_int_eq(python_proc_entry_build(&p, &l, 0, &e), -EPROTONOSUPPORT);
}
END_TEST

START_TEST(bad_layouts)
{
        struct vprof_python_proc e;
        PythonInterpreter p;
        PythonLayout l;

        /* Each offset the walk reads: unknown or past the bound is refused. */
        table_interpreter(11, &p, &l);
        ck_assert_int_eq(python_proc_entry_build(&p, &l, 0, &e), 0);
        l.frame_previous = VPROF_PYTHON_OFFSET_MAX;
        ck_assert_int_eq(python_proc_entry_build(&p, &l, 0, &e), -EINVAL);
        table_interpreter(11, &p, &l);
        l.tstate_cframe = PYTHON_LAYOUT_NONE;
        ck_assert_int_eq(python_proc_entry_build(&p, &l, 0, &e), -EINVAL);
        /* 3.11 without is_entry could not end a run. */
        table_interpreter(11, &p, &l);
        l.frame_is_entry = PYTHON_LAYOUT_NONE;
        ck_assert_int_eq(python_proc_entry_build(&p, &l, 0, &e), -EINVAL);
        /* No evaluation loop, an empty one, no runtime, a .cold part ending before it starts. */
        table_interpreter(11, &p, &l);
        p.eval_end = p.eval_start;
        ck_assert_int_eq(python_proc_entry_build(&p, &l, 0, &e), -EINVAL);
        table_interpreter(11, &p, &l);
        p.runtime = 0;
        ck_assert_int_eq(python_proc_entry_build(&p, &l, 0, &e), -EINVAL);
        table_interpreter(11, &p, &l);
        p.eval_cold_start = 0x400100;
        p.eval_cold_end = 0x400000;
        ck_assert_int_eq(python_proc_entry_build(&p, &l, 0, &e), -EINVAL);
}
END_TEST

START_TEST(file_names)
{
        static const char *yes[] = { "python3.11", "python3.8", "python3.13t", "python3.11d",
                                     "libpython3.11.so.1.0", "libpython3.12.so", "libpython3.9d.so.1.0" };
        static const char *no[] = { "python3", "python", "python2.7", "python3.", "python3.x", "python3.11-config",
                                    "libpython2.7.so.1.0", "libpython3.so", "pythonista", "ld-linux-x86-64.so.2",
                                    "python3.11 " };

        for (size_t i = 0; i < ELEMENTSOF(yes); i++)
                ck_assert_msg(python_file_name_candidate(yes[i]), "%s", yes[i]);
        for (size_t i = 0; i < ELEMENTSOF(no); i++)
                ck_assert_msg(!python_file_name_candidate(no[i]), "%s", no[i]);
}
END_TEST

static Suite *python_proc_entry_suite(void)
{
        Suite *s = suite_create("python-proc-entry");
        TCase *tc = tcase_create("core");

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, debian_python311);
        tcase_add_test(tc, bias_moves_addresses);
        tcase_add_test(tc, other_build_id);
        tcase_add_test(tc, versions);
        tcase_add_test(tc, bad_layouts);
        tcase_add_test(tc, file_names);
        suite_add_tcase(s, tc);
        return s;
}

int main(int argc, char **argv)
{
        if (argc != 3) {
                fprintf(stderr, "usage: %s PYTHON3.11 OTHER-BUILD-ID\n", argv[0]);
                return 2;
        }
        arg_debian = argv[1];
        arg_other_id = argv[2];
        return run_suite(python_proc_entry_suite());
}
