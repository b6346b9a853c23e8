/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "check-main.h"
#include "macros.h"
#include "profile.h"
#include "section-file.h"
#include "target-serialize.h"
#include "target.h"

#define MAGIC "VPRTTEST"

/* A target record as an older vprofd wrote it, with the command name as the kernel had it: read back escaped,
 * so that a restart never brings back a name the bus refuses. */
START_TEST(test_comm_of_older_file_escaped)
{
        _cleanup_(profile_freep) Profile *p = NULL;
        _cleanup_free_ void *data = NULL;
        const char *error = NULL, *record_error = NULL;
        SavedTarget saved = {};
        SectionReader list;
        SectionWriter w;
        Target t = {};
        ProcInfo info;
        Section s;
        size_t size;

        ck_assert_int_eq(profile_new(99, &p), 0);
        t.pid = 4242;
        t.info = (ProcInfo){ .tgid = 4242, .start_time = 1, .uid = { 1000, 1000, 1000 }, .gid = { 1000, 1000, 1000 } };
        strcpy(t.info.comm, "x\xff\xfe\r\ny");
        t.profile = p;
        t.exited = true;
        section_writer_init(&w, MAGIC);
        target_serialize_write(&t, &w);
        ck_assert_int_eq(section_writer_finish(&w, &data, &size, NULL), 0);

        ck_assert_int_eq(section_file_open(data, size, MAGIC, &error, &list), 0);
        ck_assert_int_gt(section_next(&list, &s), 0);
        s.contents.error = &record_error;
        ck_assert_int_eq(target_serialize_read_info(s.contents, &info), 0);
        ck_assert_str_eq(info.comm, "x\\xff\\xfe\\r\\ny");
        ck_assert_int_eq(target_serialize_read(&s.contents, &saved), 0);
        ck_assert_str_eq(saved.info.comm, "x\\xff\\xfe\\r\\ny");
        ck_assert_uint_eq(saved.info.tgid, 4242);
        saved_target_done(&saved);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("target-serialize");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_comm_of_older_file_escaped);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
