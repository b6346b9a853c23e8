/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The daemon's bus layer as a client sees it: the real vtable (bus.c) served on one end of a socketpair(), a
 * client sd_bus on the other, and a Manager that never starts sampling, so that neither BPF nor root is needed.
 * The server runs in a thread of its own, so that the client's calls can block. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-id128.h>

#include "bus-names.h"
#include "bus-table-row.h"
#include "bus.h"
#include "log.h"
#include "check-main.h"
#include "manager.h"
#include "profile-delta.h"
#include "target.h"
#include "time-util.h"

static const char *arg_interface_xml;

typedef struct Peer {
        Manager *manager; /* the server's, touched by the server thread only while it runs */
        sd_bus *client;
        pthread_t server;
} Peer;

static void *serve(void *userdata)
{
        sd_bus *bus = userdata;

        /* Until the client hangs up: the bus is closed then, and both calls fail with -ENOTCONN. */
        for (;;) {
                int r = sd_bus_process(bus, NULL);
                if (r < 0)
                        break;
                if (r > 0)
                        continue;
                if (sd_bus_wait(bus, UINT64_MAX) < 0)
                        break;
        }
        return NULL;
}

static void peer_start(Peer *p, const SamplerConfig *config)
{
        sd_id128_t id;
        int fds[2];

        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
        ck_assert_int_eq(manager_new(config, &p->manager), 0);
        p->manager->slots.max_targets_per_user = 7;
        p->manager->slots.exited_retention_usec = 5 * USEC_PER_SEC;
        p->manager->max_functions = 1000;
        p->manager->max_stacks = 2000;
        p->manager->window_seconds = 30;
        p->manager->window_bytes = (size_t)1 << 20;
        symbolizer_set_budget(p->manager->symbolizer, (size_t)8 << 20);

        ck_assert_int_ge(sd_bus_new(&p->manager->bus), 0);
        ck_assert_int_ge(sd_bus_set_fd(p->manager->bus, fds[0], fds[0]), 0);
        ck_assert_int_ge(sd_id128_randomize(&id), 0);
        ck_assert_int_ge(sd_bus_set_server(p->manager->bus, 1, id), 0);
        ck_assert_int_ge(sd_bus_start(p->manager->bus), 0);
        ck_assert_int_ge(bus_add_profiler(p->manager), 0);

        ck_assert_int_ge(sd_bus_new(&p->client), 0);
        ck_assert_int_ge(sd_bus_set_fd(p->client, fds[1], fds[1]), 0);
        ck_assert_int_ge(sd_bus_start(p->client), 0);
        ck_assert_int_eq(pthread_create(&p->server, NULL, serve, p->manager->bus), 0);
}

static void peer_stop(Peer *p)
{
        p->client = sd_bus_flush_close_unref(p->client);
        ck_assert_int_eq(pthread_join(p->server, NULL), 0);
        bus_done(p->manager);
        p->manager = manager_free(p->manager);
}

static const SamplerConfig default_config = {
        .frequency = 97,
        .event = SAMPLER_EVENT_AUTO,
        .max_targets = 16,
        .max_off_cpu_threads = 64,
};

/* A call of the interface; returns its result, the error in *error. */
static int call(Peer *p, const char *member, sd_bus_error *error, sd_bus_message **reply, const char *types, ...)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        va_list ap;
        int r;

        ck_assert_int_ge(sd_bus_message_new_method_call(p->client, &m, NULL, VPROF_BUS_PATH, VPROF_BUS_INTERFACE,
                                                        member), 0);
        if (types) {
                va_start(ap, types);
                r = sd_bus_message_appendv(m, types, ap);
                va_end(ap);
                ck_assert_int_ge(r, 0);
        }
        return sd_bus_call(p->client, m, 0, error, reply);
}

/* The call fails with the error name, and a one-line message that contains text. */
#define assert_call_error(p, error_name, text, member, ...)                                                          \
        do {                                                                                                   \
                _cleanup_(sd_bus_error_free) sd_bus_error _e_ = SD_BUS_ERROR_NULL;                             \
                int _r_ = call(p, member, &_e_, NULL, __VA_ARGS__);                                            \
                ck_assert_msg(_r_ < 0, "%s succeeded", member);                                               \
                ck_assert_msg(sd_bus_error_has_name(&_e_, error_name), "%s: %s: %s", member, _e_.name,          \
                              _e_.message);                                                                    \
                ck_assert_msg(strstr(_e_.message, text), "%s: message '%s'", member, _e_.message);            \
                ck_assert_ptr_null(strchr(_e_.message, '\n'));                                                 \
        } while (0)

#define assert_call_ok(p, member, ...)                                                                         \
        do {                                                                                                   \
                _cleanup_(sd_bus_error_free) sd_bus_error _e_ = SD_BUS_ERROR_NULL;                             \
                int _r_ = call(p, member, &_e_, NULL, __VA_ARGS__);                                            \
                ck_assert_msg(_r_ >= 0, "%s: %s: %s", member, _e_.name, _e_.message);                        \
        } while (0)

/* A child that waits to be killed, of the caller's own user: one the local rules let it profile. */
static pid_t spawn_sleeper(void)
{
        pid_t pid = fork();

        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                for (;;)
                        pause();
        }
        return pid;
}

static void kill_sleeper(pid_t pid)
{
        ck_assert_int_eq(kill(pid, SIGKILL), 0);
        ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
}

/* A PID of no process: one just reaped (the kernel hands PIDs out in order, so it is not reused at once). */
/* A PID as the calls name targets: decimal text, in one of a few buffers that the next calls reuse in turn. */
static const char *pid_text(pid_t pid)
{
        static char buffers[4][16];
        static unsigned next;
        char *b = buffers[next++ % ELEMENTSOF(buffers)];

        snprintf(b, sizeof(buffers[0]), "%d", (int)pid);
        return b;
}

static uint32_t unused_pid(void)
{
        char path[64];
        pid_t pid = fork();

        ck_assert_int_ge(pid, 0);
        if (pid == 0)
                _exit(0);
        ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
        snprintf(path, sizeof(path), "/proc/%d", (int)pid);
        ck_assert_int_ne(access(path, F_OK), 0);
        return (uint32_t)pid;
}

static uint32_t property_u32(Peer *p, const char *name)
{
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        uint32_t v = UINT32_MAX;

        ck_assert_msg(sd_bus_get_property_trivial(p->client, NULL, VPROF_BUS_PATH, VPROF_BUS_INTERFACE, name, &e,
                                                  'u', &v) >= 0, "%s: %s", name, e.message);
        return v;
}

static uint64_t property_u64(Peer *p, const char *name)
{
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        uint64_t v = UINT64_MAX;

        ck_assert_msg(sd_bus_get_property_trivial(p->client, NULL, VPROF_BUS_PATH, VPROF_BUS_INTERFACE, name, &e,
                                                  't', &v) >= 0, "%s: %s", name, e.message);
        return v;
}

static char *property_string(Peer *p, const char *name)
{
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        char *v = NULL;

        ck_assert_msg(sd_bus_get_property_string(p->client, NULL, VPROF_BUS_PATH, VPROF_BUS_INTERFACE, name, &e,
                                                 &v) >= 0, "%s: %s", name, e.message);
        return v;
}

/* The members of interface in an introspection document: each method or property as its tags, whitespace
 * collapsed, comments left out; sorted, so that the order of the document does not count. */
typedef struct Members {
        char **items;
        size_t n;
} Members;

static void members_free(Members *m)
{
        for (size_t i = 0; i < m->n; i++)
                free(m->items[i]);
        free(m->items);
}

static int compare_strings(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The next tag at or after *p, whitespace collapsed, comments skipped; NULL at the end. */
static char *next_tag(const char **p)
{
        const char *s = *p, *end;
        char *tag, *out;

        for (;;) {
                s = strchr(s, '<');
                if (!s)
                        return NULL;
                if (strncmp(s, "<!--", 4) != 0)
                        break;
                s = strstr(s, "-->");
                ck_assert_ptr_nonnull(s);
        }
        end = strchr(s, '>');
        ck_assert_ptr_nonnull(end);
        tag = out = malloc(end - s + 2);
        ck_assert_ptr_nonnull(tag);
        for (const char *c = s; c <= end; c++) {
                bool space = strchr(" \t\n", *c);
                if (space && (out == tag || out[-1] == ' '))
                        continue;
                *out++ = space ? ' ' : *c;
        }
        *out = '\0';
        *p = end + 1;
        return tag;
}

static Members interface_members(const char *xml, const char *interface)
{
        Members m = {};
        char start[128], *member = NULL;
        const char *p;
        bool inside = false;

        snprintf(start, sizeof(start), "<interface name=\"%s\">", interface);
        p = strstr(xml, start);
        ck_assert_msg(p, "no interface %s", interface);
        p += strlen(start);
        for (char *tag; (tag = next_tag(&p)); free(tag)) {
                if (strcmp(tag, "</interface>") == 0) {
                        free(tag);
                        break;
                }
                if (!member) {
                        member = strdup(tag);
                        ck_assert_ptr_nonnull(member);
                        inside = !strstr(tag, "/>");
                } else {
                        char *joined;
                        ck_assert_int_ge(asprintf(&joined, "%s %s", member, tag), 0);
                        free(member);
                        member = joined;
                        inside = strcmp(tag, "</method>") != 0 && strcmp(tag, "</property>") != 0 &&
                                 strcmp(tag, "</signal>") != 0;
                }
                if (!inside) {
                        m.items = reallocarray(m.items, m.n + 1, sizeof(char *));
                        ck_assert_ptr_nonnull(m.items);
                        m.items[m.n++] = member;
                        member = NULL;
                }
        }
        ck_assert_ptr_null(member);
        qsort(m.items, m.n, sizeof(char *), compare_strings);
        return m;
}

static char *read_text(const char *path)
{
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        char *text = NULL;
        size_t size = 0;

        ck_assert_msg(f, "%s: %m", path);
        ck_assert_int_gt(getdelim(&text, &size, '\0', f), 0);
        return text;
}

START_TEST(test_introspection_matches_xml)
{
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ char *documented = NULL;
        Members live, doc;
        const char *xml;
        Peer p = {};

        documented = read_text(arg_interface_xml);
        peer_start(&p, &default_config);
        ck_assert_msg(sd_bus_call_method(p.client, NULL, VPROF_BUS_PATH, "org.freedesktop.DBus.Introspectable",
                                         "Introspect", &e, &reply, NULL) >= 0, "%s", e.message);
        ck_assert_int_ge(sd_bus_message_read(reply, "s", &xml), 0);

        live = interface_members(xml, VPROF_BUS_INTERFACE);
        doc = interface_members(documented, VPROF_BUS_INTERFACE);
        /* Methods, properties, arguments with their names and directions, and the annotations (whether a
         * property is const). */
        ck_assert_uint_ge(doc.n, 40);
        for (size_t i = 0; i < MAX(live.n, doc.n); i++)
                ck_assert_str_eq(i < live.n ? live.items[i] : "(none)", i < doc.n ? doc.items[i] : "(none)");
        members_free(&live);
        members_free(&doc);
        peer_stop(&p);
}
END_TEST

START_TEST(test_properties)
{
        SamplerConfig config = default_config;
        _cleanup_free_ char *version = NULL, *event = NULL, *reason = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        unsigned n = 0;
        int off_cpu = -1;
        Peer p = {};

        config.off_cpu_default = true;
        peer_start(&p, &config);
        version = property_string(&p, "Version");
        ck_assert_str_eq(version, VPROF_VERSION);
        /* Never started sampling: the configured event, no CPU, every counter 0. */
        event = property_string(&p, "Event");
        ck_assert_str_eq(event, "auto");
        reason = property_string(&p, "EventReason");
        ck_assert_str_eq(reason, "not sampling");
        ck_assert_uint_eq(property_u32(&p, "CPUs"), 0);
        ck_assert_uint_eq(property_u32(&p, "Frequency"), 97);
        ck_assert_uint_eq(property_u32(&p, "MaxTargets"), 16);
        ck_assert_uint_eq(property_u32(&p, "MaxTargetsPerUser"), 7);
        ck_assert_uint_eq(property_u64(&p, "ExitedTargetRetentionUSec"), 5 * USEC_PER_SEC);
        ck_assert_uint_eq(property_u32(&p, "MaxFunctionsPerTarget"), 1000);
        ck_assert_uint_eq(property_u32(&p, "MaxStacksPerTarget"), 2000);
        ck_assert_uint_eq(property_u32(&p, "Targets"), 0);
        ck_assert_uint_eq(property_u32(&p, "WindowSeconds"), 30);
        ck_assert_uint_eq(property_u64(&p, "WindowMemory"), 0);
        ck_assert_uint_eq(property_u64(&p, "SamplesSeen"), 0);
        ck_assert_uint_eq(property_u32(&p, "TargetsAtLimit"), 0);
        ck_assert_uint_eq(property_u64(&p, "SymbolCacheSize"), 8 << 20);
        ck_assert_uint_eq(property_u64(&p, "SymbolFilesDamaged"), 0);
        /* No sample drained: no address looked up for inlined functions, no DWARF file open. */
        ck_assert_uint_eq(property_u64(&p, "InlineExpansions"), 0);
        ck_assert_uint_eq(property_u64(&p, "InlineAddresses"), 0);
        ck_assert_uint_eq(property_u64(&p, "InlineFilesSize"), 0);
        /* Not sampling: no arena, no table, no walk. */
        ck_assert_uint_eq(property_u64(&p, "UnwindTableSize"), 0);
        ck_assert_uint_eq(property_u32(&p, "UnwindTablesLoaded"), 0);
        ck_assert_uint_eq(property_u64(&p, "WalksComplete"), 0);
        ck_assert_uint_eq(property_u32(&p, "UnwindSelfCheck"), 0);
        ck_assert_uint_eq(property_u64(&p, "PendingWalksCopied"), 0);
        ck_assert_uint_eq(property_u64(&p, "PendingWalksFinished"), 0);
        /* Not sampling: no interpreter pushed, none recognized. */
        ck_assert_uint_eq(property_u64(&p, "PythonInterpreters"), 0);
        ck_assert_uint_eq(property_u64(&p, "PythonUnsupported"), 0);
        ck_assert_uint_eq(property_u64(&p, "PythonFramesRecorded"), 0);
        ck_assert_uint_eq(property_u64(&p, "PythonFramesDropped"), 0);
        ck_assert_uint_eq(property_u64(&p, "PythonFramesUnknown"), 0);
        ck_assert_int_ge(sd_bus_get_property_trivial(p.client, NULL, VPROF_BUS_PATH, VPROF_BUS_INTERFACE,
                                                     "OffCpuDefault", &e, 'b', &off_cpu), 0);
        ck_assert_int_eq(off_cpu, 1);

        /* GetAll: every property, each once. */
        ck_assert_msg(sd_bus_call_method(p.client, NULL, VPROF_BUS_PATH, "org.freedesktop.DBus.Properties", "GetAll",
                                         &e, &reply, "s", VPROF_BUS_INTERFACE) >= 0, "%s", e.message);
        ck_assert_int_ge(sd_bus_message_enter_container(reply, 'a', "{sv}"), 0);
        while (sd_bus_message_skip(reply, "{sv}") > 0)
                n++;
        ck_assert_uint_eq(n, 91);

        /* Read-only, and an unknown one is sd-bus's to refuse. */
        reply = sd_bus_message_unref(reply);
        ck_assert_int_lt(sd_bus_call_method(p.client, NULL, VPROF_BUS_PATH, "org.freedesktop.DBus.Properties", "Set",
                                            &e, NULL, "ssv", VPROF_BUS_INTERFACE, "Frequency", "u", 10), 0);
        ck_assert_str_eq(e.name, SD_BUS_ERROR_PROPERTY_READ_ONLY);
        sd_bus_error_free(&e);
        ck_assert_int_lt(sd_bus_get_property_trivial(p.client, NULL, VPROF_BUS_PATH, VPROF_BUS_INTERFACE, "Nothing",
                                                     &e, 'u', &n), 0);
        ck_assert_str_eq(e.name, SD_BUS_ERROR_UNKNOWN_PROPERTY);
        peer_stop(&p);
}
END_TEST

/* A thread of this process, waiting: its ID is no process's. */
static void *wait_for_pipe(void *userdata)
{
        int *fds = userdata;
        char c;
        pid_t tid = (pid_t)syscall(SYS_gettid);

        ck_assert_int_eq(write(fds[1], &tid, sizeof(tid)), sizeof(tid));
        (void)read(fds[0], &c, 1);
        return NULL;
}

START_TEST(test_attach_arguments)
{
        int to_thread[2], from_thread[2], fds[2];
        pthread_t thread;
        pid_t tid;
        char big[32];
        Peer p = {};

        peer_start(&p, &default_config);
        assert_call_error(&p, SD_BUS_ERROR_INVALID_ARGS, "Invalid target '0'", "Attach", "st", "0", UINT64_C(0));
        assert_call_error(&p, SD_BUS_ERROR_INVALID_ARGS, "Invalid target '4194305'", "Attach", "st", "4194305",
                          UINT64_C(0));
        assert_call_error(&p, SD_BUS_ERROR_INVALID_ARGS, "Invalid target 'foo.timer'", "Attach", "st", "foo.timer",
                          UINT64_C(0));
        assert_call_error(&p, SD_BUS_ERROR_INVALID_ARGS, "Invalid target '/a/../b'", "Attach", "st", "/a/../b",
                          UINT64_C(0));
        assert_call_error(&p, SD_BUS_ERROR_INVALID_ARGS, "Unknown attach flags 0x4", "Attach", "st", "1",
                          UINT64_C(7));
        /* The server is this process: the daemon's own PID. */
        assert_call_error(&p, SD_BUS_ERROR_INVALID_ARGS, "vprofd itself", "Attach", "st", pid_text(getpid()),
                          UINT64_C(0));
        assert_call_error(&p, VPROF_ERROR_NO_SUCH_PROCESS, "No process with PID", "Attach", "st",
                          pid_text(unused_pid()), UINT64_C(0));

        ck_assert_int_eq(pipe(to_thread), 0);
        ck_assert_int_eq(pipe(from_thread), 0);
        fds[0] = to_thread[0];
        fds[1] = from_thread[1];
        ck_assert_int_eq(pthread_create(&thread, NULL, wait_for_pipe, fds), 0);
        ck_assert_int_eq(read(from_thread[0], &tid, sizeof(tid)), sizeof(tid));
        snprintf(big, sizeof(big), "thread of process %d", (int)getpid());
        assert_call_error(&p, SD_BUS_ERROR_INVALID_ARGS, big, "Attach", "st", pid_text(tid), UINT64_C(0));
        ck_assert_int_eq(write(to_thread[1], "x", 1), 1);
        ck_assert_int_eq(pthread_join(thread, NULL), 0);
        for (size_t i = 0; i < 2; i++) {
                close(to_thread[i]);
                close(from_thread[i]);
        }
        /* kthreadd: only root's question is answered without polkit, which this bus has not. */
        if (geteuid() == 0)
                assert_call_error(&p, SD_BUS_ERROR_INVALID_ARGS, "kernel thread", "Attach", "st", "2", UINT64_C(0));

        /* Arguments of the wrong types are sd-bus's to refuse. */
        assert_call_error(&p, SD_BUS_ERROR_INVALID_ARGS, "expecting 'st'", "Attach", "u", 1);
        assert_call_error(&p, SD_BUS_ERROR_INVALID_ARGS, "expecting 'st'", "Attach", "s", "1");
        assert_call_error(&p, SD_BUS_ERROR_INVALID_ARGS, "expecting 'st'", "Attach", "ut", 1, UINT64_C(0));
        assert_call_error(&p, SD_BUS_ERROR_INVALID_ARGS, "expecting 'ssut'", "GetFunctions", "s", "1");
        assert_call_error(&p, SD_BUS_ERROR_INVALID_ARGS, "expecting 'ssut'", "GetFunctions", "ssu", "1",
                          "inclusive", 0);
        assert_call_error(&p, SD_BUS_ERROR_INVALID_ARGS, "expecting ''", "ListTargets", "u", 1);
        assert_call_error(&p, SD_BUS_ERROR_UNKNOWN_METHOD, "AttachWithFlags", "AttachWithFlags", "st", "1",
                          UINT64_C(1));
        assert_call_error(&p, SD_BUS_ERROR_UNKNOWN_METHOD, "ListTargetDetails", "ListTargetDetails", NULL);
        peer_stop(&p);
}
END_TEST

START_TEST(test_not_attached)
{
        pid_t child = spawn_sleeper();
        uint32_t gone = unused_pid();
        Peer p = {};

        peer_start(&p, &default_config);
        /* A process that is not attached, and a PID of no process, alike. */
        for (size_t i = 0; i < 2; i++) {
                const char *pid = pid_text(i == 0 ? (uint32_t)child : gone);

                assert_call_error(&p, VPROF_ERROR_NOT_ATTACHED, "is not attached", "Detach", "s", pid);
                assert_call_error(&p, VPROF_ERROR_NOT_ATTACHED, "is not attached", "Reset", "s", pid);
                assert_call_error(&p, VPROF_ERROR_NOT_ATTACHED, "is not attached", "GetFunctions", "ssut", pid,
                                  "inclusive", 0, UINT64_C(0));
                assert_call_error(&p, VPROF_ERROR_NOT_ATTACHED, "is not attached", "GetModules", "st", pid,
                                  UINT64_C(0));
                assert_call_error(&p, VPROF_ERROR_NOT_ATTACHED, "is not attached", "GetStacks", "sut", pid, 0,
                                  UINT64_C(0));
                assert_call_error(&p, VPROF_ERROR_NOT_ATTACHED, "is not attached", "GetProfile", "sut", pid, 0,
                                  UINT64_C(0));
                assert_call_error(&p, VPROF_ERROR_NOT_ATTACHED, "is not attached", "GetModuleSymbols", "s", pid);
                assert_call_error(&p, VPROF_ERROR_NOT_ATTACHED, "is not attached", "GetThreadValues", "st", pid,
                                  UINT64_C(0));
                assert_call_error(&p, VPROF_ERROR_NOT_ATTACHED, "is not attached", "GetProcesses", "st", pid,
                                  UINT64_C(0));
        }
        /* Units and cgroups nobody attached. */
        assert_call_error(&p, VPROF_ERROR_NOT_ATTACHED, "is not attached", "GetFunctions", "ssut", "x.service",
                          "inclusive", 0, UINT64_C(0));
        assert_call_error(&p, VPROF_ERROR_NOT_ATTACHED, "is not attached", "GetModules", "st", "/vprof-none",
                          UINT64_C(0));
        assert_call_error(&p, SD_BUS_ERROR_INVALID_ARGS, "Invalid target '0'", "Detach", "s", "0");
        assert_call_error(&p, SD_BUS_ERROR_INVALID_ARGS, "Invalid target '0'", "GetSymbolNames", "s", "0");
        assert_call_error(&p, SD_BUS_ERROR_INVALID_ARGS, "expected a PID", "GetSymbolNames", "s", "x.service");
        assert_call_error(&p, SD_BUS_ERROR_INVALID_ARGS, "Invalid target 'x'", "GetModules", "st", "x", UINT64_C(0));
        /* The empty spec is every target the caller may read: none here, an empty table over no time. */
        {
                _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
                uint64_t total = 1, start, end;

                ck_assert_msg(call(&p, "GetModules", &e, &reply, "st", "", UINT64_C(0)) >= 0, "%s", e.message);
                ck_assert_int_ge(sd_bus_message_read(reply, "t(tt)", &total, &start, &end), 0);
                ck_assert_uint_eq(total, 0);
                ck_assert_uint_eq(start, end);
                ck_assert_int_gt(sd_bus_message_enter_container(reply, 'a', "(sttdd)"), 0);
                ck_assert_int_eq(sd_bus_message_at_end(reply, false), 1);
        }
        /* The sort key is checked first, against the kind of table. */
        assert_call_error(&p, SD_BUS_ERROR_INVALID_ARGS, "Unknown sort key 'sideways'", "GetFunctions", "ssut",
                          pid_text(child), "sideways", 0, UINT64_C(0));
        assert_call_error(&p, SD_BUS_ERROR_INVALID_ARGS, "Unknown sort key 'elapsed-inclusive'", "GetFunctions",
                          "ssut", pid_text(child), "elapsed-inclusive", 0, UINT64_C(0));
        assert_call_error(&p, SD_BUS_ERROR_INVALID_ARGS, "Unknown sort key 'inclusive'", "GetFunctionValues",
                          "ssut", pid_text(child), "inclusive", 0, UINT64_C(0));
        peer_stop(&p);
        kill_sleeper(child);
}
END_TEST

/* ListTargets' one entry: its PID and the dictionary's flags and state. */
static void list_one_target(Peer *p, uint32_t *ret_pid, uint64_t *ret_flags, char **ret_state)
{
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *key;

        ck_assert_msg(call(p, "ListTargets", &e, &reply, NULL) >= 0, "%s", e.message);
        ck_assert_int_gt(sd_bus_message_enter_container(reply, 'a', "(ua{sv})"), 0);
        ck_assert_int_gt(sd_bus_message_enter_container(reply, 'r', "ua{sv}"), 0);
        ck_assert_int_ge(sd_bus_message_read(reply, "u", ret_pid), 0);
        ck_assert_int_gt(sd_bus_message_enter_container(reply, 'a', "{sv}"), 0);
        while (sd_bus_message_enter_container(reply, 'e', "sv") > 0) {
                ck_assert_int_ge(sd_bus_message_read(reply, "s", &key), 0);
                if (strcmp(key, "flags") == 0)
                        ck_assert_int_ge(sd_bus_message_read(reply, "v", "t", ret_flags), 0);
                else if (strcmp(key, "state") == 0) {
                        const char *state;
                        ck_assert_int_ge(sd_bus_message_read(reply, "v", "s", &state), 0);
                        *ret_state = strdup(state);
                } else
                        ck_assert_int_ge(sd_bus_message_skip(reply, "v"), 0);
                ck_assert_int_ge(sd_bus_message_exit_container(reply), 0);
        }
        ck_assert_int_ge(sd_bus_message_exit_container(reply), 0);
        ck_assert_int_ge(sd_bus_message_exit_container(reply), 0);
        /* Only one. */
        ck_assert_int_eq(sd_bus_message_enter_container(reply, 'r', "ua{sv}"), 0);
}

/* The table calls answer for an attached target that nothing sampled: a total of 0 and no rows. */
static void assert_empty_tables(Peer *p, uint32_t pid)
{
        static const struct {
                const char *member, *types;
        } tables[] = {
                { "GetModules", "st" },         { "GetThreads", "st" },      { "GetModuleSymbols", "s" },
                { "GetSymbolNames", "s" },     { "GetModuleValues", "st" }, { "GetThreadValues", "st" },
                { "GetFunctionSources", "s" },
        };
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        const char *target = pid_text(pid);
        uint64_t total = UINT64_MAX, start = 0, end = 0;

        for (size_t i = 0; i < ELEMENTSOF(tables); i++)
                assert_call_ok(p, tables[i].member, tables[i].types, target, UINT64_C(0));
        assert_call_ok(p, "GetFunctionValues", "ssut", target, "elapsed-inclusive", 0, UINT64_C(0));
        assert_call_ok(p, "GetStacks", "sut", target, 0, UINT64_C(0));
        assert_call_ok(p, "GetProfile", "sut", target, 0, UINT64_C(0));
        assert_call_ok(p, "GetProcesses", "st", "", UINT64_C(0));
        assert_call_ok(p, "GetProcesses", "st", target, UINT64_C(0));
        assert_call_ok(p, "GetProcessValues", "st", "", UINT64_C(0));
        {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;

                ck_assert_msg(call(p, "GetFunctions", &e, &reply, "ssut", target, "exclusive", 10, UINT64_C(0)) >= 0,
                              "%s", e.message);
                ck_assert_int_ge(sd_bus_message_read(reply, "t(tt)", &total, &start, &end), 0);
                ck_assert_uint_eq(total, 0);
                /* Since the attach, until now. */
                ck_assert_uint_gt(start, 0);
                ck_assert_uint_ge(end, start);
                ck_assert_int_gt(sd_bus_message_enter_container(reply, 'a', "(ssttdd)"), 0);
                ck_assert_int_eq(sd_bus_message_skip(reply, "(ssttdd)"), 0);
        }
}

START_TEST(test_attach_and_detach)
{
        pid_t child = spawn_sleeper();
        _cleanup_free_ char *state = NULL;
        uint64_t flags = UINT64_MAX;
        uint32_t pid = 0;
        Peer p = {};

        peer_start(&p, &default_config);
        assert_call_ok(&p, "Attach", "st", pid_text(child), UINT64_C(0));
        assert_call_error(&p, VPROF_ERROR_ALREADY_ATTACHED, "is already attached", "Attach", "st", pid_text(child),
                          VPROF_ATTACH_OFF_CPU);
        ck_assert_uint_eq(property_u32(&p, "Targets"), 1);
        list_one_target(&p, &pid, &flags, &state);
        ck_assert_uint_eq(pid, (uint32_t)child);
        ck_assert_uint_eq(flags, 0);
        ck_assert_str_eq(state, "running");
        assert_empty_tables(&p, pid);
        assert_call_ok(&p, "Reset", "s", pid_text(pid));
        assert_call_ok(&p, "Detach", "s", pid_text(pid));
        ck_assert_uint_eq(property_u32(&p, "Targets"), 0);
        assert_call_error(&p, VPROF_ERROR_NOT_ATTACHED, "is not attached", "Detach", "s", pid_text(pid));

        /* The off-CPU flag is kept. */
        assert_call_ok(&p, "Attach", "st", pid_text(child), VPROF_ATTACH_OFF_CPU);
        free(state);
        state = NULL;
        list_one_target(&p, &pid, &flags, &state);
        ck_assert_uint_eq(flags, VPROF_ATTACH_OFF_CPU);
        assert_call_ok(&p, "Detach", "s", pid_text(pid));
        peer_stop(&p);
        kill_sleeper(child);
}
END_TEST

/* GetProfile's counts: a stack per thread for the seconds the window ring holds, the rest of its count (the second
 * still open) as thread 0, so that the stacks add up to the total; a window only its seconds; the functions with
 * their addresses, the threads with their names. */
typedef struct ProfileReply {
        uint64_t total, other, samples_by_tid[3]; /* tid 0, 101, 102 */
        uint32_t n_processes, pid, n_threads;
        uint64_t work_address;
        bool frames_innermost_first;
} ProfileReply;

static void read_profile_reply(sd_bus_message *m, ProfileReply *ret)
{
        uint64_t start, end;
        uint32_t frequency, pid;
        const char *comm, *unit;
        int off;

        *ret = (ProfileReply){};
        ck_assert_int_ge(sd_bus_message_read(m, "tt(tt)ub", &ret->total, &ret->other, &start, &end, &frequency, &off),
                         0);
        ck_assert_int_ge(sd_bus_message_enter_container(m, 'a', "(ussa(sssttt)a(ssst)a(us)a(auuutt))"), 0);
        while (sd_bus_message_enter_container(m, 'r', "ussa(sssttt)a(ssst)a(us)a(auuutt)") > 0) {
                const char *module, *function, *mangled, *name;
                uint32_t tid, n_kernel, work = UINT32_MAX, n_functions = 0;
                uint64_t address, samples, off_ns;

                ret->n_processes++;
                ck_assert_int_ge(sd_bus_message_read(m, "uss", &pid, &comm, &unit), 0);
                ret->pid = pid;
                ck_assert_int_ge(sd_bus_message_skip(m, "a(sssttt)"), 0);
                ck_assert_int_ge(sd_bus_message_enter_container(m, 'a', "(ssst)"), 0);
                while (sd_bus_message_read(m, "(ssst)", &module, &function, &mangled, &address) > 0) {
                        if (strcmp(function, "work") == 0) {
                                ret->work_address = address;
                                work = n_functions;
                        }
                        n_functions++;
                }
                ck_assert_int_ge(sd_bus_message_exit_container(m), 0);
                ck_assert_int_ge(sd_bus_message_enter_container(m, 'a', "(us)"), 0);
                while (sd_bus_message_read(m, "(us)", &tid, &name) > 0)
                        ret->n_threads++;
                ck_assert_int_ge(sd_bus_message_exit_container(m), 0);
                ck_assert_int_ge(sd_bus_message_enter_container(m, 'a', "(auuutt)"), 0);
                while (sd_bus_message_enter_container(m, 'r', "auuutt") > 0) {
                        const uint32_t *frames;
                        size_t size;

                        ck_assert_int_ge(sd_bus_message_read_array(m, 'u', (const void **)&frames, &size), 0);
                        ck_assert_uint_eq(size, 2 * sizeof(uint32_t));
                        ret->frames_innermost_first = frames[0] == work;
                        ck_assert_int_ge(sd_bus_message_read(m, "uutt", &n_kernel, &tid, &samples, &off_ns), 0);
                        ck_assert_uint_eq(n_kernel, 0);
                        ck_assert(tid == 0 || tid == 101 || tid == 102);
                        ret->samples_by_tid[tid == 0 ? 0 : tid - 100] += samples;
                        ck_assert_int_ge(sd_bus_message_exit_container(m), 0);
                }
                ck_assert_int_ge(sd_bus_message_exit_container(m), 0);
                ck_assert_int_ge(sd_bus_message_exit_container(m), 0);
        }
}

static void add_samples(Target *t, uint32_t tid, const uint32_t frames[2], unsigned n)
{
        ProfileSample s = { .tid = tid, .thread_name = tid == 101 ? "one" : "two", .frames = frames, .n_frames = 2,
                            .kind = PROFILE_SAMPLE_USER };

        for (unsigned i = 0; i < n; i++) {
                uint32_t stack_id;
                ck_assert_int_eq(profile_add_sample_stack(t->profile, &s, &stack_id), 0);
                if (t->delta)
                        ck_assert_int_eq(profile_delta_add(t->delta, &s, stack_id), 0);
        }
}

START_TEST(test_get_profile)
{
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        pid_t child = spawn_sleeper();
        const char *target = pid_text(child);
        uint32_t frames[2];
        ProfileReply r;
        Target *t;
        Peer p = {};

        peer_start(&p, &default_config);
        assert_call_ok(&p, "Attach", "st", target, UINT64_C(0));
        t = manager_get_target(p.manager, child);
        ck_assert_ptr_nonnull(t);
        ck_assert_int_eq(profile_intern_function(t->profile, "app", "work", &frames[0]), 0);
        ck_assert_int_eq(profile_intern_function(t->profile, "app", "main", &frames[1]), 0);
        ck_assert_int_eq(profile_set_function_address(t->profile, frames[0], 0x401000), 0);
        /* A second of two threads, closed into the ring; then one more thread's samples, in the open second. */
        add_samples(t, 101, frames, 3);
        add_samples(t, 102, frames, 2);
        ck_assert_int_eq(target_close_second(t, now_usec(CLOCK_REALTIME)), 0);
        add_samples(t, 101, frames, 4);

        for (int windowed = 0; windowed < 2; windowed++) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;

                ck_assert_msg(call(&p, "GetProfile", &e, &reply, "sut", target, 0,
                                   windowed ? 10 * USEC_PER_SEC : UINT64_C(0)) >= 0, "%s", e.message);
                read_profile_reply(reply, &r);
                ck_assert_uint_eq(r.n_processes, 1);
                ck_assert_uint_eq(r.pid, (uint32_t)child);
                ck_assert_uint_eq(r.other, 0);
                ck_assert_uint_eq(r.work_address, 0x401000);
                ck_assert_uint_eq(r.n_threads, 2);
                ck_assert(r.frames_innermost_first);
                ck_assert_uint_eq(r.samples_by_tid[1], 3);
                ck_assert_uint_eq(r.samples_by_tid[2], 2);
                ck_assert_uint_eq(r.samples_by_tid[0], windowed ? 0 : 4);
                ck_assert_uint_eq(r.total, windowed ? 5 : 9);
        }
        /* A limit of one stack a process: the rest counted as left out. */
        {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;

                ck_assert_msg(call(&p, "GetProfile", &e, &reply, "sut", target, 1, UINT64_C(0)) >= 0, "%s",
                              e.message);
                read_profile_reply(reply, &r);
                ck_assert_uint_eq(r.samples_by_tid[0], 4); /* the busiest */
                ck_assert_uint_eq(r.other, 5);
                ck_assert_uint_eq(r.total, 9);
        }
        /* GetFunctionSources: the functions whose source is known, and only those. */
        ck_assert_int_eq(profile_set_source(t->profile, frames[1], "app.c:42"), 0);
        {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
                const char *module, *function, *source;

                ck_assert_msg(call(&p, "GetFunctionSources", &e, &reply, "s", target) >= 0, "%s", e.message);
                ck_assert_int_gt(sd_bus_message_enter_container(reply, 'a', "(sss)"), 0);
                ck_assert_int_gt(sd_bus_message_read(reply, "(sss)", &module, &function, &source), 0);
                ck_assert_str_eq(module, "app");
                ck_assert_str_eq(function, "main");
                ck_assert_str_eq(source, "app.c:42");
                ck_assert_int_eq(sd_bus_message_read(reply, "(sss)", &module, &function, &source), 0);
        }
        peer_stop(&p);
        kill_sleeper(child);
}
END_TEST

/* bus_append_table_row(): a row of every kind and shape made from the table schema reads back with the
 * signature the interface XML declares (the same strings as tests/unit/test-table-schema.c checks), each cell in
 * its place. */
START_TEST(test_table_rows_from_schema)
{
        static const char *const declared[_TABLE_KIND_MAX][_TABLE_SHAPE_MAX] = {
                [TABLE_FUNCTIONS] = {"(ssttdd)", "(ssdddddddddd)"},
                [TABLE_MODULES] = {"(sttdd)", "(sdddddddddd)"},
                [TABLE_THREADS] = {"(usttdd)", "(usdddddddddd)"},
                [TABLE_PROCESSES] = {"(usttdd)", "(usdddddddddd)"},
        };
        const ProfileRow p_row = {.name = "work", .module = "app", .tid = 77, .inclusive = 30, .exclusive = 10};
        Peer p = {};

        peer_start(&p, &default_config);
        for (TableKind k = 0; k < _TABLE_KIND_MAX; k++)
                for (TableShape shape = 0; shape < _TABLE_SHAPE_MAX; shape++) {
                        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
                        const char *sig = declared[k][shape], *name = NULL, *module = NULL;
                        uint64_t inclusive = 0, exclusive = 0;
                        double numbers[10] = {};
                        uint32_t id = 0;
                        TableRow row;

                        table_row_from_profile(&p_row, 120, &row);
                        for (size_t i = 0; i < TABLE_N_VALUES; i++)
                                row.values[i] = 0.5 + (double)i;
                        ck_assert_int_ge(sd_bus_message_new_method_call(p.client, &m, NULL, VPROF_BUS_PATH,
                                                                        VPROF_BUS_INTERFACE, "GetFunctions"),
                                         0);
                        ck_assert_int_ge(sd_bus_message_open_container(m, 'a', sig), 0);
                        ck_assert_int_ge(bus_append_table_row(m, k, shape, &row), 0);
                        ck_assert_int_ge(sd_bus_message_close_container(m), 0);
                        ck_assert_int_ge(sd_bus_message_seal(m, 1, 0), 0);
                        ck_assert_int_ge(sd_bus_message_rewind(m, true), 0);

                        ck_assert_int_gt(sd_bus_message_enter_container(m, 'a', sig), 0);
                        ck_assert_int_gt(sd_bus_message_enter_container(m, 'r', NULL), 0);
                        if (k == TABLE_FUNCTIONS)
                                ck_assert_int_ge(sd_bus_message_read(m, "ss", &name, &module), 0);
                        else if (k == TABLE_MODULES)
                                ck_assert_int_ge(sd_bus_message_read(m, "s", &name), 0);
                        else
                                ck_assert_int_ge(sd_bus_message_read(m, "us", &id, &name), 0);
                        ck_assert_str_eq(name, "work");
                        if (k == TABLE_FUNCTIONS)
                                ck_assert_str_eq(module, "app");
                        if (k == TABLE_THREADS || k == TABLE_PROCESSES)
                                ck_assert_uint_eq(id, 77);
                        if (shape == TABLE_SAMPLING) {
                                ck_assert_int_ge(sd_bus_message_read(m, "ttdd", &inclusive, &exclusive, &numbers[0],
                                                                     &numbers[1]),
                                                 0);
                                ck_assert_uint_eq(inclusive, 30);
                                ck_assert_uint_eq(exclusive, 10);
                                ck_assert_double_eq_tol(numbers[0], 25.0, 1e-9);
                                ck_assert_double_eq_tol(numbers[1], 100.0 / 12, 1e-9);
                        } else {
                                for (size_t i = 0; i < TABLE_N_VALUES; i++) {
                                        ck_assert_int_ge(sd_bus_message_read_basic(m, 'd', &numbers[i]), 0);
                                        ck_assert_double_eq(numbers[i], 0.5 + (double)i);
                                }
                        }
                        /* Nothing more in the row. */
                        ck_assert_int_gt(sd_bus_message_at_end(m, false), 0);
                        ck_assert_int_ge(sd_bus_message_exit_container(m), 0);
                }
        peer_stop(&p);
}
END_TEST

/* Windows: whole seconds up to WindowSeconds=, refused past it and when windows are off. No second closes here
 * (nothing runs the event loop's timers): a window covers nothing, and says so. */
START_TEST(test_windows)
{
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        pid_t child = spawn_sleeper();
        const char *target = pid_text(child);
        uint64_t total = UINT64_MAX, start = 1, end = 2;
        Peer p = {};

        peer_start(&p, &default_config);
        assert_call_ok(&p, "Attach", "st", target, UINT64_C(0));
        ck_assert_uint_gt(property_u64(&p, "WindowMemory"), 0);
        ck_assert_msg(call(&p, "GetFunctions", &e, &reply, "ssut", target, "exclusive", 10, 30 * USEC_PER_SEC) >= 0,
                      "%s", e.message);
        ck_assert_int_ge(sd_bus_message_read(reply, "t(tt)", &total, &start, &end), 0);
        ck_assert_uint_eq(total, 0);
        ck_assert_uint_gt(start, 0);
        ck_assert_uint_eq(start, end);
        /* Rounded up to whole seconds: 29.5 s is 30 s, 30.000001 s is 31. */
        assert_call_ok(&p, "GetModules", "st", target, 29 * USEC_PER_SEC + 500000);
        assert_call_ok(&p, "GetStacks", "sut", target, 0, UINT64_C(1));
        assert_call_ok(&p, "GetProfile", "sut", target, 0, UINT64_C(1));
        assert_call_ok(&p, "GetProcesses", "st", "", 10 * USEC_PER_SEC);
        assert_call_ok(&p, "GetProcessValues", "st", target, 10 * USEC_PER_SEC);
        assert_call_ok(&p, "GetThreadValues", "st", target, 10 * USEC_PER_SEC);
        assert_call_error(&p, SD_BUS_ERROR_INVALID_ARGS, "A window of 31 s is longer than the 30 s this vprofd keeps "
                          "(WindowSeconds=30)", "GetFunctions", "ssut", target, "exclusive", 10,
                          30 * USEC_PER_SEC + 1);
        assert_call_error(&p, SD_BUS_ERROR_INVALID_ARGS, "WindowSeconds=30", "GetProcesses", "st", "", UINT64_MAX);
        assert_call_error(&p, SD_BUS_ERROR_INVALID_ARGS, "WindowSeconds=30", "GetStacks", "sut", target, 0,
                          UINT64_C(31000000));
        assert_call_error(&p, SD_BUS_ERROR_INVALID_ARGS, "WindowSeconds=30", "GetProfile", "sut", target, 0,
                          UINT64_C(31000000));
        peer_stop(&p);

        /* Off: only 0 is a window. */
        peer_start(&p, &default_config);
        p.manager->window_seconds = 0;
        assert_call_ok(&p, "Attach", "st", target, UINT64_C(0));
        ck_assert_uint_eq(property_u64(&p, "WindowMemory"), 0);
        assert_call_ok(&p, "GetFunctions", "ssut", target, "exclusive", 10, UINT64_C(0));
        assert_call_error(&p, SD_BUS_ERROR_NOT_SUPPORTED, "Time windows are off in this vprofd (WindowSeconds=0)",
                          "GetFunctions", "ssut", target, "exclusive", 10, UINT64_C(1));
        assert_call_error(&p, SD_BUS_ERROR_NOT_SUPPORTED, "WindowSeconds=0", "GetProcessValues", "st", "",
                          UINT64_C(1));
        peer_stop(&p);
        kill_sleeper(child);
}
END_TEST

START_TEST(test_off_cpu_default)
{
        SamplerConfig config = default_config;
        pid_t child = spawn_sleeper();
        _cleanup_free_ char *state = NULL;
        uint64_t flags = 0;
        uint32_t pid = 0;
        Peer p = {};

        /* The daemon's default tracks every target's off-CPU time, whatever the flags. */
        config.off_cpu_default = true;
        peer_start(&p, &config);
        assert_call_ok(&p, "Attach", "st", pid_text(child), UINT64_C(0));
        list_one_target(&p, &pid, &flags, &state);
        ck_assert_uint_eq(flags, VPROF_ATTACH_OFF_CPU);
        assert_call_ok(&p, "Detach", "s", pid_text(pid));
        peer_stop(&p);
        kill_sleeper(child);
}
END_TEST

static Suite *bus_suite(void)
{
        Suite *s = suite_create("bus");
        TCase *tc = tcase_create("core");

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_introspection_matches_xml);
        tcase_add_test(tc, test_properties);
        tcase_add_test(tc, test_attach_arguments);
        tcase_add_test(tc, test_not_attached);
        tcase_add_test(tc, test_attach_and_detach);
        tcase_add_test(tc, test_windows);
        tcase_add_test(tc, test_get_profile);
        tcase_add_test(tc, test_table_rows_from_schema);
        tcase_add_test(tc, test_off_cpu_default);
        suite_add_tcase(s, tc);
        return s;
}

int main(int argc, char *argv[])
{
        if (argc != 2) {
                fprintf(stderr, "Usage: %s INTERFACE-XML\n", argv[0]);
                return EXIT_FAILURE;
        }
        arg_interface_xml = argv[1];
        /* The manager's log lines of attaches and detaches are not what the tests check. */
        log_set_max_level(LOG_WARNING);
        return run_suite(bus_suite());
}
