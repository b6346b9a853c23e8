/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A unit's cgroup from systemd's bus API (daemon/systemd-unit.c), against a fake systemd served on the other end of
 * a socketpair() in a thread of its own: a running unit, one without a cgroup, one whose cgroup is not a path
 * vprofd takes, an unknown one; a name of no unit with a cgroup refused; a unit followed through a stop and a
 * start, by its PropertiesChanged signals. That no systemd is on the bus at all is a bus daemon's
 * answer: integration-groups checks it on a private bus. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-id128.h>

#include "check-main.h"
#include "systemd-unit.h"

#define UNIT_PATH "/org/freedesktop/systemd1/unit/"

static int get_unit(sd_bus_message *m, void *userdata _unused_, sd_bus_error *error)
{
        const char *name;
        int r;

        r = sd_bus_message_read(m, "s", &name);
        if (r < 0)
                return r;
        if (strcmp(name, "web.service") == 0)
                return sd_bus_reply_method_return(m, "o", UNIT_PATH "web_2eservice");
        if (strcmp(name, "dead.service") == 0)
                return sd_bus_reply_method_return(m, "o", UNIT_PATH "dead_2eservice");
        if (strcmp(name, "odd.slice") == 0)
                return sd_bus_reply_method_return(m, "o", UNIT_PATH "odd_2eslice");
        return sd_bus_error_setf(error, "org.freedesktop.systemd1.NoSuchUnit", "Unit %s not loaded.", name);
}

/* web.service's cgroup, which test_follow() changes: "" while stopped. */
static const char *web_cgroup = "/system.slice/web.service";

static int get_cgroup(sd_bus *bus _unused_, const char *path, const char *interface _unused_,
                      const char *property _unused_, sd_bus_message *reply, void *userdata _unused_,
                      sd_bus_error *error _unused_)
{
        const char *cgroup = strstr(path, "web") ? web_cgroup : strstr(path, "odd") ? "/a/../b" : "";

        return sd_bus_message_append(reply, "s", cgroup);
}

static int subscribe(sd_bus_message *m, void *userdata _unused_, sd_bus_error *error _unused_)
{
        return sd_bus_reply_method_return(m, NULL);
}

static const sd_bus_vtable manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("GetUnit", "s", "o", get_unit, 0),
        SD_BUS_METHOD("Subscribe", "", "", subscribe, 0),
        SD_BUS_VTABLE_END,
};

static const sd_bus_vtable service_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("ControlGroup", "s", get_cgroup, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_VTABLE_END,
};

static void *serve(void *userdata)
{
        sd_bus *bus = userdata;

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

typedef struct Outcome {
        bool keep; /* the lookup is the test's, followed */
        unsigned calls;
        bool done;
        UnitLookupResult result;
        char cgroup[256], message[256];
} Outcome;

static void on_result(UnitLookup *l, UnitLookupResult result, const char *cgroup, const char *message,
                      void *userdata)
{
        Outcome *o = userdata;

        o->calls++;
        o->done = true;
        o->result = result;
        snprintf(o->cgroup, sizeof(o->cgroup), "%s", cgroup ?: "");
        snprintf(o->message, sizeof(o->message), "%s", message ?: "");
        if (!o->keep)
                unit_lookup_free(l); /* allowed in the callback */
}

static Outcome lookup(sd_bus *client, const char *unit)
{
        UnitLookup *l = NULL;
        Outcome o = {};

        ck_assert_int_eq(unit_lookup_start(client, unit, on_result, &o, &l), 0);
        while (!o.done) {
                int r = sd_bus_process(client, NULL);
                ck_assert_int_ge(r, 0);
                if (r == 0)
                        ck_assert_int_ge(sd_bus_wait(client, UINT64_MAX), 0);
        }
        return o;
}

START_TEST(test_lookup)
{
        sd_bus *server = NULL, *client = NULL;
        pthread_t thread;
        sd_id128_t id;
        int fds[2];
        Outcome o;

        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
        ck_assert_int_ge(sd_bus_new(&server), 0);
        ck_assert_int_ge(sd_bus_set_fd(server, fds[0], fds[0]), 0);
        ck_assert_int_ge(sd_id128_randomize(&id), 0);
        ck_assert_int_ge(sd_bus_set_server(server, 1, id), 0);
        ck_assert_int_ge(sd_bus_start(server), 0);
        ck_assert_int_ge(sd_bus_add_object_vtable(server, NULL, "/org/freedesktop/systemd1",
                                                  "org.freedesktop.systemd1.Manager", manager_vtable, NULL), 0);
        ck_assert_int_ge(sd_bus_add_fallback_vtable(server, NULL, "/org/freedesktop/systemd1/unit",
                                                    "org.freedesktop.systemd1.Service", service_vtable, NULL, NULL),
                         0);
        ck_assert_int_ge(sd_bus_add_fallback_vtable(server, NULL, "/org/freedesktop/systemd1/unit",
                                                    "org.freedesktop.systemd1.Slice", service_vtable, NULL, NULL),
                         0);
        ck_assert_int_ge(sd_bus_new(&client), 0);
        ck_assert_int_ge(sd_bus_set_fd(client, fds[1], fds[1]), 0);
        ck_assert_int_ge(sd_bus_start(client), 0);
        ck_assert_int_eq(pthread_create(&thread, NULL, serve, server), 0);

        o = lookup(client, "web.service");
        ck_assert_int_eq(o.result, UNIT_LOOKUP_OK);
        ck_assert_str_eq(o.cgroup, "/system.slice/web.service");

        o = lookup(client, "dead.service");
        ck_assert_int_eq(o.result, UNIT_LOOKUP_NO_CGROUP);
        ck_assert_str_eq(o.message, "Unit dead.service has no cgroup: it is not running");

        o = lookup(client, "odd.slice");
        ck_assert_int_eq(o.result, UNIT_LOOKUP_FAILED);
        ck_assert_msg(strstr(o.message, "'/a/../b'"), "%s", o.message);

        o = lookup(client, "nope.service");
        ck_assert_int_eq(o.result, UNIT_LOOKUP_NO_SUCH_UNIT);
        ck_assert_str_eq(o.message, "Unit nope.service not loaded.");

        /* Cancelled before the answer: no callback. */
        {
                Outcome never = {};
                UnitLookup *l = NULL;

                ck_assert_int_eq(unit_lookup_start(client, "web.service", on_result, &never, &l), 0);
                unit_lookup_free(l);
                o = lookup(client, "web.service"); /* the reply to the cancelled call came before this one's */
                ck_assert(!never.done);
        }

        client = sd_bus_flush_close_unref(client);
        ck_assert_int_eq(pthread_join(thread, NULL), 0);
        sd_bus_flush_close_unref(server);
}
END_TEST

/* Both ends in this thread, in turns, until o is done. */
static void pump(sd_bus *client, sd_bus *server, Outcome *o)
{
        for (int i = 0; i < 100000 && !o->done; i++) {
                int a = sd_bus_process(client, NULL), b = sd_bus_process(server, NULL);

                ck_assert_int_ge(a, 0);
                ck_assert_int_ge(b, 0);
                if (a == 0 && b == 0)
                        usleep(100);
        }
        ck_assert(o->done);
}

/* A unit followed: its PropertiesChanged signals ask for its cgroup again, stopped (none) and started (the new
 * one). */
START_TEST(test_follow)
{
        sd_bus *server = NULL, *client = NULL;
        UnitLookup *l = NULL;
        Outcome o = { .keep = true };
        sd_id128_t id;
        int fds[2];

        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
        ck_assert_int_ge(sd_bus_new(&server), 0);
        ck_assert_int_ge(sd_bus_set_fd(server, fds[0], fds[0]), 0);
        ck_assert_int_ge(sd_id128_randomize(&id), 0);
        ck_assert_int_ge(sd_bus_set_server(server, 1, id), 0);
        ck_assert_int_ge(sd_bus_start(server), 0);
        ck_assert_int_ge(sd_bus_add_object_vtable(server, NULL, "/org/freedesktop/systemd1",
                                                  "org.freedesktop.systemd1.Manager", manager_vtable, NULL), 0);
        ck_assert_int_ge(sd_bus_add_fallback_vtable(server, NULL, "/org/freedesktop/systemd1/unit",
                                                    "org.freedesktop.systemd1.Service", service_vtable, NULL, NULL),
                         0);
        ck_assert_int_ge(sd_bus_new(&client), 0);
        ck_assert_int_ge(sd_bus_set_fd(client, fds[1], fds[1]), 0);
        ck_assert_int_ge(sd_bus_start(client), 0);

        web_cgroup = "/system.slice/web.service";
        ck_assert_int_eq(unit_lookup_start(client, "web.service", on_result, &o, &l), 0);
        pump(client, server, &o);
        ck_assert_int_eq(o.result, UNIT_LOOKUP_OK);
        ck_assert_int_eq(unit_lookup_follow(l, on_result, &o), 0);
        ck_assert_str_eq(unit_lookup_unit(l), "web.service");

        /* Stopped: a signal, and the cgroup asked again is none. */
        web_cgroup = "";
        o.done = false;
        ck_assert_int_ge(sd_bus_emit_properties_changed(server, UNIT_PATH "web_2eservice",
                                                        "org.freedesktop.systemd1.Service", "ControlGroup", NULL),
                         0);
        pump(client, server, &o);
        ck_assert_int_eq(o.result, UNIT_LOOKUP_NO_CGROUP);
        /* Started again. */
        web_cgroup = "/system.slice/web.service";
        o.done = false;
        ck_assert_int_ge(sd_bus_emit_properties_changed(server, UNIT_PATH "web_2eservice",
                                                        "org.freedesktop.systemd1.Service", "ControlGroup", NULL),
                         0);
        pump(client, server, &o);
        ck_assert_int_eq(o.result, UNIT_LOOKUP_OK);
        ck_assert_str_eq(o.cgroup, "/system.slice/web.service");
        ck_assert_uint_eq(o.calls, 3);

        unit_lookup_free(l);
        sd_bus_flush_close_unref(client);
        sd_bus_flush_close_unref(server);
}
END_TEST

/* The names target-spec.h takes only (its own test has them all). */
START_TEST(test_names)
{
        UnitLookup *l = NULL;

        ck_assert_int_eq(unit_lookup_start(NULL, "a.timer", on_result, NULL, &l), -EINVAL);
        ck_assert_int_eq(unit_lookup_start(NULL, ".service", on_result, NULL, &l), -EINVAL);
        ck_assert_int_eq(unit_lookup_start(NULL, NULL, on_result, NULL, &l), -EINVAL);
        ck_assert_ptr_null(l);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("systemd-unit");
        TCase *tc = tcase_create("lookup");

        tcase_add_test(tc, test_names);
        tcase_add_test(tc, test_lookup);
        tcase_add_test(tc, test_follow);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
