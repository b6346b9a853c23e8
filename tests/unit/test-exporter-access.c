/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Who may ask vprof-exporter, and as whom: the Host check, the bearer token (its file, its constant-time
 * comparison, the log of wrong ones once per client and minute), and the peer lookup on real connections that
 * this process makes: a unix socket pair, TCP over 127.0.0.1 and ::1, a client socket made by another user (when
 * run as root), and a client that left before the lookup, which must be nobody. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check-main.h"
#include "exporter-access.h"
#include "exporter-config.h"
#include "exporter-peer.h"
#include "macros.h"
#include "test-util.h"

START_TEST(test_host)
{
        ExporterConfig c;
        static const char *const good[] = {
                "localhost", "LocalHost", "localhost:6068", "127.0.0.1", "127.0.0.1:6068", "[::1]", "[::1]:6068",
                "192.0.2.1", "192.0.2.1:6068", "scraper.example", "SCRAPER.example:6068", "10.0.0.1:6068",
        };
        static const char *const bad[] = {
                "", "attacker.example", "attacker.example:6068", "localhost:6069", "localhost:", "localhost:x",
                "127.0.0.1:99999", "[::1", "[::1]x", "[::2]", "localhost.attacker.example", "127.0.0.2",
                "scraper.example.attacker", ":6068", "localhost:6068:6068", "[::1]:6068:1",
        };

        exporter_config_init(&c);
        ck_assert_int_eq(exporter_config_set(&c, "Listen", "10.0.0.1:6068", NULL), 0);
        ck_assert_int_eq(exporter_config_set(&c, "AllowHosts", "scraper.example other.example", NULL), 0);
        for (size_t i = 0; i < ELEMENTSOF(good); i++)
                ck_assert_msg(exporter_host_allowed(&c, good[i], "192.0.2.1", 6068), "refused '%s'", good[i]);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ck_assert_msg(!exporter_host_allowed(&c, bad[i], "192.0.2.1", 6068), "accepted '%s'", bad[i]);
        ck_assert(!exporter_host_allowed(&c, NULL, "192.0.2.1", 6068));
        /* A unix socket has no port to compare, nor an address of its own. */
        ck_assert(exporter_host_allowed(&c, "localhost:80", NULL, 0));
        ck_assert(!exporter_host_allowed(&c, "192.0.2.1", NULL, 0));
        ck_assert(!exporter_host_allowed(&c, "attacker.example", NULL, 0));
        ck_assert_int_eq(exporter_config_set(&c, "AllowHosts", "bad:name", NULL), -EINVAL);
        ck_assert_int_eq(exporter_config_set(&c, "AllowHosts", "[::1]:80", NULL), -EINVAL);
        ck_assert_int_eq(exporter_config_set(&c, "BearerTokenFile", "relative", NULL), -EINVAL);
        ck_assert_int_eq(exporter_config_set(&c, "BearerTokenFile", "/etc/vprof/token", NULL), 0);
        ck_assert_str_eq(c.bearer_token_file, "/etc/vprof/token");
        exporter_config_done(&c);
}
END_TEST

START_TEST(test_bearer)
{
        const char *token = "s3cret-Token";
        size_t len = strlen(token);

        ck_assert(exporter_bearer_matches("Bearer s3cret-Token", token, len));
        ck_assert(exporter_bearer_matches("bearer  s3cret-Token ", token, len));
        ck_assert(!exporter_bearer_matches("Bearer s3cret-Toke", token, len));
        ck_assert(!exporter_bearer_matches("Bearer s3cret-Token2", token, len));
        ck_assert(!exporter_bearer_matches("Bearer S3cret-Token", token, len));
        ck_assert(!exporter_bearer_matches("Basic s3cret-Token", token, len));
        ck_assert(!exporter_bearer_matches("s3cret-Token", token, len));
        ck_assert(!exporter_bearer_matches("Bearer ", token, len));
        ck_assert(!exporter_bearer_matches(NULL, token, len));
}
END_TEST

static char *write_file(const char *content, size_t size)
{
        char *path = strdup("/tmp/test-exporter-token-XXXXXX");
        int fd = mkstemp(path);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, content, size), (ssize_t)size);
        close(fd);
        return path;
}

START_TEST(test_token_file)
{
        static const struct {
                const char *content;
                int r;
                const char *token;
        } cases[] = {
                { "abc\n", 0, "abc" }, { "abc", 0, "abc" }, { "abc\r\n", 0, "abc" }, { "\n", -EINVAL, NULL },
                { "", -EINVAL, NULL }, { "a b\n", -EINVAL, NULL }, { "abc\n\n", -EINVAL, NULL },
                { "a\tb", -EINVAL, NULL },
        };
        char *big = malloc(EXPORTER_TOKEN_MAX + 2), *token = NULL, *path;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                path = write_file(cases[i].content, strlen(cases[i].content));
                ck_assert_msg(exporter_token_load(path, &token) == cases[i].r, "case %zu", i);
                if (cases[i].r == 0) {
                        ck_assert_str_eq(token, cases[i].token);
                        free(token);
                        token = NULL;
                }
                unlink(path);
                free(path);
        }
        memset(big, 'x', EXPORTER_TOKEN_MAX + 1);
        big[EXPORTER_TOKEN_MAX] = '\n';
        path = write_file(big, EXPORTER_TOKEN_MAX + 1);
        ck_assert_int_eq(exporter_token_load(path, &token), 0); /* the largest, with its newline */
        ck_assert_uint_eq(strlen(token), EXPORTER_TOKEN_MAX);
        free(token);
        unlink(path);
        free(path);
        path = write_file(big, EXPORTER_TOKEN_MAX + 2);
        ck_assert_int_eq(exporter_token_load(path, &token), -EFBIG);
        unlink(path);
        free(path);
        ck_assert_int_eq(exporter_token_load("/nonexistent/token", &token), -ENOENT);
        ck_assert_int_eq(exporter_token_load("/tmp", &token), -EINVAL);
        free(big);
}
END_TEST

START_TEST(test_log_limit)
{
        ExporterLogLimit *l = calloc(1, sizeof(*l));
        uint64_t suppressed = 99, t0 = 1000000;
        char address[32];

        ck_assert(exporter_log_limit(l, "192.0.2.2", t0, &suppressed));
        ck_assert_uint_eq(suppressed, 0);
        for (int i = 1; i <= 5; i++)
                ck_assert(!exporter_log_limit(l, "192.0.2.2", t0 + (uint64_t)i * 1000000U, &suppressed));
        /* Another address has its own line. */
        ck_assert(exporter_log_limit(l, "192.0.2.3", t0 + 1000000, &suppressed));
        ck_assert(exporter_log_limit(l, "192.0.2.2", t0 + EXPORTER_AUTH_LOG_INTERVAL_USEC, &suppressed));
        ck_assert_uint_eq(suppressed, 5);
        /* A full table gives way to the oldest, never refusing a line to a new address. */
        for (int i = 0; i < EXPORTER_AUTH_LOG_SLOTS * 2; i++) {
                snprintf(address, sizeof(address), "198.51.100.%d", i);
                ck_assert(exporter_log_limit(l, address, t0 + 2 * EXPORTER_AUTH_LOG_INTERVAL_USEC + (uint64_t)i,
                                             &suppressed));
        }
        free(l);
}
END_TEST

/* A listening TCP socket on family's loopback address and an ephemeral port; -1 when the family is missing. */
static int loopback_listener(int family, struct sockaddr_storage *ret, socklen_t *ret_len)
{
        int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in in4 = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        struct sockaddr_in6 in6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };

        if (fd < 0)
                return -1;
        if (family == AF_INET ? bind(fd, (struct sockaddr *)&in4, sizeof(in4)) < 0
                              : bind(fd, (struct sockaddr *)&in6, sizeof(in6)) < 0) {
                close(fd);
                return -1;
        }
        ck_assert_int_eq(listen(fd, 8), 0);
        *ret_len = sizeof(*ret);
        ck_assert_int_eq(getsockname(fd, (struct sockaddr *)ret, ret_len), 0);
        return fd;
}

START_TEST(test_peer_unix)
{
        ExporterPeer p;
        int sv[2];

        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        ck_assert_int_eq(exporter_peer_identify(sv[0], &p), 0);
        ck_assert(p.local && p.known);
        ck_assert_uint_eq(p.uid, geteuid());
        ck_assert_str_eq(p.address, "unix");
        close(sv[0]);
        close(sv[1]);
}
END_TEST

START_TEST(test_peer_tcp_loopback)
{
        static const int families[] = { AF_INET, AF_INET6 };

        for (size_t i = 0; i < ELEMENTSOF(families); i++) {
                struct sockaddr_storage sa;
                socklen_t len;
                ExporterPeer p;
                int l, client, server;

                l = loopback_listener(families[i], &sa, &len);
                if (l < 0) {
                        ck_assert_int_eq(families[i], AF_INET6); /* a machine without IPv6 */
                        continue;
                }
                client = socket(families[i], SOCK_STREAM | SOCK_CLOEXEC, 0);
                ck_assert_int_eq(connect(client, (struct sockaddr *)&sa, len), 0);
                server = accept4(l, NULL, NULL, SOCK_CLOEXEC);
                ck_assert_int_ge(server, 0);
                ck_assert_int_eq(exporter_peer_identify(server, &p), 0);
                ck_assert_msg(p.local && p.known, "%s", p.address);
                ck_assert_uint_eq(p.uid, geteuid());
                /* The client gone before the lookup: its socket is no process's, and tells nobody (the kernel
                 * would report a time-wait stub or the listener in its place). */
                close(client);
                usleep(20000);
                ck_assert_int_lt(exporter_peer_identify(server, &p), 0);
                ck_assert(p.local && !p.known);
                close(server);
                close(l);
        }
}
END_TEST

/* The owner of the client's socket, not of the process that asks: a socket made by UID 65534. */
START_TEST(test_peer_other_user)
{
        struct sockaddr_storage sa;
        socklen_t len;
        ExporterPeer p;
        int l, server, sync[2], status;
        pid_t pid;
        char c;

        if (geteuid() != 0) {
                /* Only root can make a socket of another user; CI runs the unit tests as root. */
                ck_assert_msg(!getenv("CI"), "test_peer_other_user needs root");
                return;
        }
        l = loopback_listener(AF_INET, &sa, &len);
        ck_assert_int_ge(l, 0);
        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sync), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                int fd;

                if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
                        _exit(1);
                fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
                if (fd < 0 || connect(fd, (struct sockaddr *)&sa, len) < 0)
                        _exit(2);
                if (write(sync[1], "c", 1) != 1 || read(sync[1], &c, 1) != 1)
                        _exit(3);
                _exit(0);
        }
        ck_assert_int_eq(read(sync[0], &c, 1), 1);
        server = accept4(l, NULL, NULL, SOCK_CLOEXEC);
        ck_assert_int_ge(server, 0);
        ck_assert_int_eq(exporter_peer_identify(server, &p), 0);
        ck_assert(p.local && p.known);
        ck_assert_uint_eq(p.uid, 65534);
        ck_assert_int_eq(write(sync[0], "x", 1), 1);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        close(server);
        close(l);
        close(sync[0]);
        close(sync[1]);
}
END_TEST

START_TEST(test_loopback_addresses)
{
        struct sockaddr_in in4 = { .sin_family = AF_INET };
        struct sockaddr_in6 in6 = { .sin6_family = AF_INET6 };

        inet_pton(AF_INET, "127.1.2.3", &in4.sin_addr);
        ck_assert(exporter_address_is_loopback((struct sockaddr *)&in4));
        inet_pton(AF_INET, "192.0.2.1", &in4.sin_addr);
        ck_assert(!exporter_address_is_loopback((struct sockaddr *)&in4));
        inet_pton(AF_INET6, "::1", &in6.sin6_addr);
        ck_assert(exporter_address_is_loopback((struct sockaddr *)&in6));
        inet_pton(AF_INET6, "::ffff:127.0.0.1", &in6.sin6_addr);
        ck_assert(exporter_address_is_loopback((struct sockaddr *)&in6));
        inet_pton(AF_INET6, "::ffff:192.0.2.1", &in6.sin6_addr);
        ck_assert(!exporter_address_is_loopback((struct sockaddr *)&in6));
        inet_pton(AF_INET6, "2001:db8::1", &in6.sin6_addr);
        ck_assert(!exporter_address_is_loopback((struct sockaddr *)&in6));
}
END_TEST

static Suite *exporter_access_suite(void)
{
        Suite *s = suite_create("exporter-access");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_host);
        tcase_add_test(tc, test_bearer);
        tcase_add_test(tc, test_token_file);
        tcase_add_test(tc, test_log_limit);
        tcase_add_test(tc, test_loopback_addresses);
        tcase_add_test(tc, test_peer_unix);
        tcase_add_test(tc, test_peer_tcp_loopback);
        tcase_add_test(tc, test_peer_other_user);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return run_suite(exporter_access_suite());
}
