/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vprof-exporter's pure parts: Listen= addresses, the configuration file and its allow-list, the text check of
 * query values, the escapes of its outputs, and the HTTP status of each bus error. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bus-names.h"
#include "check-main.h"
#include "exporter-address.h"
#include "exporter-config.h"
#include "exporter-escape.h"
#include "exporter-status.h"
#include "log.h"
#include "test-util.h"

START_TEST(test_address)
{
        ExporterAddress a;
        const struct sockaddr_in *in4 = (const struct sockaddr_in *)&a.sa;
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&a.sa;
        static const char *const bad[] = {
                "", "127.0.0.1", "127.0.0.1:", ":6068", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:+1",
                "localhost:6068", "1.2.3:80", "::1:6068", "[::1]", "[::1]6068", "[]:6068", "[127.0.0.1]:80",
                "[::1]:x", "127.0.0.1:6068 ", "1.2.3.4.5:1",
        };

        ck_assert_int_eq(exporter_address_parse("127.0.0.1:6068", &a), 0);
        ck_assert_int_eq(a.sa.ss_family, AF_INET);
        ck_assert_uint_eq(ntohs(in4->sin_port), 6068);
        ck_assert_uint_eq(ntohl(in4->sin_addr.s_addr), 0x7f000001);
        ck_assert_uint_eq(a.len, sizeof(struct sockaddr_in));
        ck_assert_int_eq(exporter_address_parse("0.0.0.0:0", &a), 0);
        ck_assert_uint_eq(ntohs(in4->sin_port), 0);
        ck_assert_int_eq(exporter_address_parse("[::1]:80", &a), 0);
        ck_assert_int_eq(a.sa.ss_family, AF_INET6);
        ck_assert_uint_eq(ntohs(in6->sin6_port), 80);
        ck_assert(IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr));
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ck_assert_msg(exporter_address_parse(bad[i], &a) == -EINVAL, "accepted '%s'", bad[i]);
}
END_TEST

START_TEST(test_listen_and_name)
{
        ExporterAddress a;
        char name[64];
        int fd;

        ck_assert_int_eq(exporter_address_parse("127.0.0.1:0", &a), 0);
        fd = exporter_address_listen(&a, 4);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(exporter_socket_name(fd, name, sizeof(name)), 0);
        ck_assert_msg(strncmp(name, "127.0.0.1:", 10) == 0 && atoi(name + 10) > 0, "%s", name);
        close(fd);
}
END_TEST

static int load(ExporterConfig *c, const char *text)
{
        _cleanup_free_ char *path = test_write_temp(text);
        int r = exporter_config_load_file(c, path, true);

        ck_assert_int_eq(unlink(path), 0);
        return r;
}

START_TEST(test_config)
{
        ExporterConfig c;

        exporter_config_init(&c);
        ck_assert_uint_eq(c.max_seconds, 60);
        ck_assert_uint_eq(c.max_response_bytes, UINT64_C(32) << 20);
        ck_assert_ptr_null(c.listen);
        ck_assert_int_eq(load(&c, "# comment\n[Exporter]\nListen = [::1]:7070\nMaxConnections=8\n"
                                  "RequestTimeoutSec=3\nMaxSeconds=5\nMaxResponseBytes=4096\nThreads=2\n"
                                  "MaxConnectionsPerIP=2\nAllowTargets=42 web.service  /system.slice/x\n"),
                         0);
        ck_assert_str_eq(c.listen, "[::1]:7070");
        ck_assert_uint_eq(c.max_connections, 8);
        ck_assert_uint_eq(c.request_timeout_sec, 3);
        ck_assert_uint_eq(c.max_seconds, 5);
        ck_assert_uint_eq(c.max_response_bytes, 4096);
        ck_assert_uint_eq(c.threads, 2);
        ck_assert_uint_eq(c.max_connections_per_ip, 2);
        ck_assert_uint_eq(c.n_allow_targets, 3);
        /* An option over the file replaces the list. */
        ck_assert_int_eq(exporter_config_set(&c, "AllowTargets", "43", NULL), 0);
        ck_assert_uint_eq(c.n_allow_targets, 1);
        ck_assert_str_eq(c.allow_targets[0], "43");
        exporter_config_done(&c);
        ck_assert_ptr_null(c.listen);
        ck_assert_uint_eq(c.n_allow_targets, 0);
}
END_TEST

START_TEST(test_config_errors)
{
        static const char *const bad[] = {
                "[Daemon]\n", "Frequency=99\n", "MaxSeconds=0\n", "MaxSeconds=x\n", "MaxSeconds=86401\n",
                "MaxConnections=0\n", "Threads=65\n", "RequestTimeoutSec=\n", "MaxResponseBytes=1023\n",
                "Listen=127.0.0.1\n", "AllowTargets=42 ../x\n", "AllowTargets=nonsense\n", "no equals sign\n",
        };
        ExporterConfig c;

        log_set_max_level(LOG_EMERG); /* the errors' lines, which vprof-exporter prints, are not checked here */
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                exporter_config_init(&c);
                ck_assert_msg(load(&c, bad[i]) < 0, "accepted '%s'", bad[i]);
                exporter_config_done(&c);
        }
        exporter_config_init(&c);
        ck_assert_int_eq(exporter_config_load_file(&c, "/nonexistent/exporter.conf", false), 0);
        ck_assert_int_lt(exporter_config_load_file(&c, "/nonexistent/exporter.conf", true), 0);
        exporter_config_done(&c);
        log_set_max_level(LOG_INFO);
}
END_TEST

START_TEST(test_allow_list)
{
        ExporterConfig c;

        exporter_config_init(&c);
        ck_assert(exporter_config_allows(&c, "42"));
        ck_assert(exporter_config_allows(&c, "anything.service"));
        ck_assert_int_eq(exporter_config_set(&c, "AllowTargets", "42 web.service /a/b", NULL), 0);
        ck_assert(exporter_config_allows(&c, "42"));
        ck_assert(exporter_config_allows(&c, "web.service"));
        ck_assert(exporter_config_allows(&c, "/a/b"));
        ck_assert(!exporter_config_allows(&c, "43"));
        ck_assert(!exporter_config_allows(&c, "4"));
        ck_assert(!exporter_config_allows(&c, "web2.service"));
        ck_assert(!exporter_config_allows(&c, "/a"));
        ck_assert(!exporter_config_allows(&c, "/a/b/c"));
        ck_assert(!exporter_config_allows(&c, ""));
        exporter_config_done(&c);
}
END_TEST

START_TEST(test_text_valid)
{
        static const struct {
                const char *s;
                bool valid;
        } cases[] = {
                { "", true },
                { "1234", true },
                { "caf\xc3\xa9", true },
                { "\xe2\x82\xac", true },
                { "\xf0\x9f\x94\xa5", true },
                { "\xff\xfe", false },
                { "\xc3", false },          /* cut */
                { "\xc0\xaf", false },      /* overlong */
                { "\xe0\x80\xaf", false },  /* overlong */
                { "\xed\xa0\x80", false },  /* a surrogate */
                { "\xf4\x90\x80\x80", false }, /* past U+10FFFF */
                { "a\nb", false },
                { "a\x7f", false },
                { "\xc2\x85", false },      /* a C1 control */
                { "\xe2\x82", false },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                ck_assert_msg(exporter_text_valid(cases[i].s, strlen(cases[i].s)) == cases[i].valid, "case %zu", i);
}
END_TEST

static char *written(void (*fn)(FILE *, const char *), const char *s)
{
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);

        ck_assert_ptr_nonnull(f);
        fn(f, s);
        ck_assert_int_eq(fclose(f), 0);
        return text;
}

START_TEST(test_escapes)
{
        _cleanup_free_ char *html = written(exporter_write_html, "<a href=\"x\">&'</a>");
        _cleanup_free_ char *label = written(exporter_write_label, "a\\b\"c\nd");
        _cleanup_free_ char *url = written(exporter_write_url_component, "/a b&c=d.service~\xc3\xa9");

        ck_assert_str_eq(html, "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
        ck_assert_str_eq(label, "a\\\\b\\\"c\\nd");
        ck_assert_str_eq(url, "%2Fa%20b%26c%3Dd.service~%C3%A9");
}
END_TEST

static unsigned status_of(int r, const char *name, const char *message, char *reason, size_t size)
{
        sd_bus_error error = SD_BUS_ERROR_NULL;
        unsigned status;

        if (name)
                sd_bus_error_set(&error, name, message);
        status = exporter_status_from_bus(r, &error, reason, size);
        sd_bus_error_free(&error);
        return status;
}

START_TEST(test_status)
{
        char reason[256];

        ck_assert_uint_eq(status_of(-ESRCH, VPROF_ERROR_NO_SUCH_PROCESS, "No process 42", reason, sizeof(reason)),
                          404);
        ck_assert_uint_eq(status_of(-ENOENT, VPROF_ERROR_NOT_ATTACHED, "x", reason, sizeof(reason)), 404);
        ck_assert_uint_eq(status_of(-ENOENT, VPROF_ERROR_NO_SUCH_UNIT, "x", reason, sizeof(reason)), 404);
        ck_assert_uint_eq(status_of(-ENOENT, VPROF_ERROR_NO_SUCH_CGROUP, "x", reason, sizeof(reason)), 404);
        ck_assert_uint_eq(status_of(-EINVAL, SD_BUS_ERROR_INVALID_ARGS, "bad\nwindow", reason, sizeof(reason)),
                          400);
        ck_assert_str_eq(reason, "invalid argument: bad window");
        ck_assert_uint_eq(status_of(-EACCES, SD_BUS_ERROR_ACCESS_DENIED, "no", reason, sizeof(reason)), 403);
        ck_assert_uint_eq(status_of(-EHOSTDOWN, SD_BUS_ERROR_SERVICE_UNKNOWN, "gone", reason, sizeof(reason)),
                          503);
        ck_assert_uint_eq(status_of(-ETIMEDOUT, SD_BUS_ERROR_NO_REPLY, "late", reason, sizeof(reason)), 503);
        ck_assert_uint_eq(status_of(-ETIMEDOUT, NULL, NULL, reason, sizeof(reason)), 503);
        ck_assert_uint_eq(status_of(-ECONNREFUSED, NULL, NULL, reason, sizeof(reason)), 503);
        ck_assert_uint_eq(status_of(-EFBIG, NULL, NULL, reason, sizeof(reason)), 500);
        ck_assert_uint_eq(status_of(-EBADMSG, NULL, NULL, reason, sizeof(reason)), 500);
        ck_assert_ptr_null(strchr(reason, '\n'));
}
END_TEST

static Suite *exporter_suite(void)
{
        Suite *s = suite_create("exporter");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_address);
        tcase_add_test(tc, test_listen_and_name);
        tcase_add_test(tc, test_config);
        tcase_add_test(tc, test_config_errors);
        tcase_add_test(tc, test_allow_list);
        tcase_add_test(tc, test_text_valid);
        tcase_add_test(tc, test_escapes);
        tcase_add_test(tc, test_status);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return run_suite(exporter_suite());
}
