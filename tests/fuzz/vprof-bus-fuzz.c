/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vprof-bus-fuzz: calls every method of org.vprof.Profiler1 (and the standard interfaces vprofd serves) with
 * boundary and random arguments and with wrong signatures, checks that every call gets a reply, and prints
 * the replies counted by error name. Exits non-zero when a call got no reply, a reply broke the contract, or
 * the daemon is gone at the end. Meant for a test bus (DBUS_SYSTEM_BUS_ADDRESS): it attaches and detaches
 * whatever it finds. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bus-names.h"
#include "fuzz-call.h"
#include "fuzz.h"
#include "log.h"
#include "parse-util.h"

static uint32_t arg_calls = 5000;
static uint32_t arg_seconds = 60; /* 0: no time limit */
static uint32_t arg_timeout = 5;  /* seconds a reply may take */
static uint64_t arg_seed;
static bool arg_seed_set;
static bool arg_verbose;

static const char *strna(const char *s)
{
        return s ?: "n/a";
}

static uint64_t now_usec(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static bool is_no_reply(const char *error_name)
{
        static const char *const names[] = { SD_BUS_ERROR_NO_REPLY, SD_BUS_ERROR_TIMEOUT, SD_BUS_ERROR_DISCONNECTED,
                                             SD_BUS_ERROR_SERVICE_UNKNOWN, SD_BUS_ERROR_NAME_HAS_NO_OWNER };

        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (strcmp(error_name, names[i]) == 0)
                        return true;
        return false;
}

typedef struct Pending {
        sd_bus_message *reply;
} Pending;

static int on_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error _unused_)
{
        Pending *p = userdata;

        p->reply = sd_bus_message_ref(reply);
        return 1;
}

/* Asynchronously, so that what did not leave (sd-bus refused to send it) tells itself apart from the
 * replies, and a timeout is the synthetic NoReply that sd-bus makes. */
static int call(Fuzz *f, sd_bus_message *m, sd_bus_message **ret_reply)
{
        _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *slot = NULL;
        Pending p = {};
        int r;

        r = sd_bus_call_async(f->bus, &slot, m, on_reply, &p, (uint64_t)arg_timeout * 1000000);
        if (r < 0)
                return r;
        for (;;) {
                r = sd_bus_process(f->bus, NULL);
                if (r < 0)
                        return r;
                /* Checked before waiting: sd_bus_process() may return 0 after running the callback (it does
                 * for a timeout), and no timeout is left to end the wait. */
                if (p.reply)
                        break;
                if (r > 0)
                        continue;
                r = sd_bus_wait(f->bus, UINT64_MAX);
                if (r < 0 && r != -EINTR)
                        return r;
        }
        *ret_reply = p.reply;
        return 0;
}

/* Keeps the list of attached PIDs, from the PID the call carried. */
static void track_attached(Fuzz *f, const char *member, sd_bus_message *m)
{
        const char *target;
        uint32_t pid;
        size_t i;

        if (sd_bus_message_rewind(m, true) < 0 || sd_bus_message_read(m, "s", &target) <= 0 ||
            parse_pid(target, &pid) < 0)
                return;
        for (i = 0; i < f->n_attached && f->attached[i] != pid; i++)
                ;
        if (strcmp(member, "Detach") == 0 && i < f->n_attached)
                f->attached[i] = f->attached[--f->n_attached];
        else if (strncmp(member, "Attach", 6) == 0 && i == f->n_attached && i < FUZZ_MAX_ATTACHED)
                f->attached[f->n_attached++] = pid;
}

/* Checks the reply against what the call expects; returns false for a broken contract. */
static bool check_reply(const Call *c, sd_bus_message *m, sd_bus_message *reply)
{
        const char *sig = sd_bus_message_get_signature(reply, true);

        if (c->expect == EXPECT_ANY)
                return true;
        if (sd_bus_message_is_method_error(reply, NULL))
                return true;
        if (c->expect == EXPECT_ERROR) {
                fprintf(stderr, "fuzz: %s.%s(%s) succeeded, but only an error is right\n", c->interface,
                        c->member, sd_bus_message_get_signature(m, true));
                return false;
        }
        /* sd-bus checks the signature of vtable methods; its standard interfaces ignore extra arguments. */
        if (c->shape != SHAPE_RIGHT && strcmp(c->interface, VPROF_BUS_INTERFACE) != 0)
                return true;
        if (!c->method || !fuzz_signature_is(m, c->method->roles)) {
                fprintf(stderr, "fuzz: %s.%s accepted the signature '%s'\n", c->interface, c->member,
                        sd_bus_message_get_signature(m, true));
                return false;
        }
        if (strcmp(sig, c->method->reply) != 0) {
                fprintf(stderr, "fuzz: %s.%s returned '%s', expected '%s'\n", c->interface, c->member, sig,
                        c->method->reply);
                return false;
        }
        return true;
}

/* One call and its reply, counted. Returns < 0 only when the connection itself failed. */
static int fuzz_one(Fuzz *f, const Call *c, sd_bus_message *m)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const sd_bus_error *error;
        int r;

        r = call(f, m, &reply);
        if (IN_SET(r, -ECONNRESET, -ENOTCONN, -EPIPE))
                return log_error_errno(r, "The connection to the bus failed: %m");
        if (r < 0) {
                f->unsent++;
                log_error_errno(r, "Could not send %s.%s(%s): %m", strna(c->interface), c->member,
                                strna(sd_bus_message_get_signature(m, true)));
                return 0;
        }
        f->calls++;
        error = sd_bus_message_get_error(reply);
        if (arg_verbose)
                fprintf(stderr, "fuzz: #%u %s %s.%s(%s) -> %s: %.200s\n", f->calls, strna(c->path),
                        strna(c->interface), c->member, sd_bus_message_get_signature(m, true),
                        error ? error->name : "ok", error ? strna(error->message) : "");
        if (error && is_no_reply(error->name)) {
                f->no_reply++;
                fprintf(stderr, "fuzz: call #%u %s.%s(%s) got no reply: %s: %s\n", f->calls, strna(c->interface),
                        c->member, sd_bus_message_get_signature(m, true), error->name, strna(error->message));
                (void)sd_bus_message_dump(m, stderr, SD_BUS_MESSAGE_DUMP_WITH_HEADER);
                return 0;
        }
        tally_add(&f->tally, error ? error->name : NULL);
        if (!check_reply(c, m, reply))
                f->bad_replies++;
        /* Whatever the interface field said (none: sd-bus looks the member up), this was the method. */
        if (!error && c->method && c->shape == SHAPE_RIGHT && strcmp(c->method->interface, VPROF_BUS_INTERFACE) == 0)
                track_attached(f, c->member, m);
        return 0;
}

static int fuzz_step(Fuzz *f)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_(fuzz_call_done) Call c = {};
        int r;

        r = fuzz_new_call(f, &c, &m);
        if (r == -ENOMEM)
                return log_error_errno(r, "Out of memory.");
        if (r < 0) {
                f->unsent++;
                log_error_errno(r, "Could not build a call of %s.%s: %m", strna(c.interface), strna(c.member));
                return 0;
        }
        return fuzz_one(f, &c, m);
}

static int call_detach(Fuzz *f, uint32_t pid, sd_bus_message **ret_reply)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        char pid_text[16];
        int r;

        snprintf(pid_text, sizeof(pid_text), "%" PRIu32, pid);
        r = sd_bus_message_new_method_call(f->bus, &m, VPROF_BUS_NAME, VPROF_BUS_PATH, VPROF_BUS_INTERFACE,
                                           "Detach");
        if (r < 0)
                return r;
        /* Targets are named by a string (common/target-spec.h): the PID in decimal. */
        r = sd_bus_message_append(m, "s", pid_text);
        if (r < 0)
                return r;
        return call(f, m, ret_reply);
}

static int call_get_version(Fuzz *f, sd_bus_message **ret_reply)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_method_call(f->bus, &m, VPROF_BUS_NAME, VPROF_BUS_PATH, PROPERTIES_INTERFACE, "Get");
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "ss", VPROF_BUS_INTERFACE, "Version");
        if (r < 0)
                return r;
        return call(f, m, ret_reply);
}

/* Detaches what the run left attached, so that the daemon is as it found it. */
static int detach_all(Fuzz *f)
{
        while (f->n_attached > 0) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
                const sd_bus_error *error;
                uint32_t pid = f->attached[--f->n_attached];
                int r;

                r = call_detach(f, pid, &reply);
                if (r < 0)
                        return log_error_errno(r, "Could not detach PID %u: %m", pid);
                f->calls++;
                error = sd_bus_message_get_error(reply);
                if (error && is_no_reply(error->name)) {
                        f->no_reply++;
                        fprintf(stderr, "fuzz: Detach(%u) got no reply: %s\n", pid, error->name);
                } else
                        tally_add(&f->tally, error ? error->name : NULL);
        }
        return 0;
}

/* The daemon that answered at the start still owns the name and answers. */
static bool daemon_alive(Fuzz *f)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        const char *version;
        pid_t pid;
        int r;

        r = sd_bus_get_name_creds(f->bus, VPROF_BUS_NAME, SD_BUS_CREDS_PID, &creds);
        if (r < 0 || sd_bus_creds_get_pid(creds, &pid) < 0 || pid != f->daemon_pid) {
                fprintf(stderr, "fuzz: vprofd (PID %d) no longer owns %s\n", (int)f->daemon_pid, VPROF_BUS_NAME);
                return false;
        }
        r = call_get_version(f, &reply);
        if (r >= 0 && !sd_bus_message_is_method_error(reply, NULL))
                r = sd_bus_message_read(reply, "v", "s", &version);
        else if (r >= 0)
                r = -EIO;
        if (r < 0) {
                const sd_bus_error *e = reply ? sd_bus_message_get_error(reply) : NULL;

                fprintf(stderr, "fuzz: vprofd does not answer Get(Version): %s\n", e ? e->name : strerror(-r));
                return false;
        }
        return true;
}

static void help(void)
{
        printf("Usage: vprof-bus-fuzz [OPTIONS]\n\n"
               "Calls org.vprof.Profiler1 on the system bus (DBUS_SYSTEM_BUS_ADDRESS) with random and boundary\n"
               "arguments and wrong signatures; fails when a call gets no reply or the daemon goes away.\n\n"
               "      --calls=N          calls to make (default 5000)\n"
               "      --seconds=S        stop after S seconds at most (default 60, 0: no limit)\n"
               "      --seed=X           seed of the random choices (default: random, printed)\n"
               "      --timeout=S        seconds a reply may take (default 5)\n"
               "  -v, --verbose          print every call and its reply\n"
               "  -h, --help             show this help\n");
}

static int parse_argv(int argc, char *argv[])
{
        enum { ARG_CALLS = 0x100, ARG_SECONDS, ARG_SEED, ARG_TIMEOUT };
        static const struct option options[] = {
                { "calls", required_argument, NULL, ARG_CALLS },
                { "seconds", required_argument, NULL, ARG_SECONDS },
                { "seed", required_argument, NULL, ARG_SEED },
                { "timeout", required_argument, NULL, ARG_TIMEOUT },
                { "verbose", no_argument, NULL, 'v' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        int c, r;

        opterr = 0;
        while ((c = getopt_long(argc, argv, ":vh", options, NULL)) >= 0)
                switch (c) {
                case ARG_CALLS:
                        r = parse_u32(optarg, 1, UINT32_MAX, &arg_calls);
                        if (r < 0)
                                return log_error_errno(r, "Invalid number of calls '%s'.", optarg);
                        break;
                case ARG_SECONDS:
                        r = parse_u32(optarg, 0, 86400, &arg_seconds);
                        if (r < 0)
                                return log_error_errno(r, "Invalid time limit '%s': expected 0..86400.", optarg);
                        break;
                case ARG_SEED:
                        r = parse_u64(optarg, &arg_seed);
                        if (r < 0)
                                return log_error_errno(r, "Invalid seed '%s'.", optarg);
                        arg_seed_set = true;
                        break;
                case ARG_TIMEOUT:
                        r = parse_u32(optarg, 1, 600, &arg_timeout);
                        if (r < 0)
                                return log_error_errno(r, "Invalid timeout '%s': expected 1..600.", optarg);
                        break;
                case 'v':
                        arg_verbose = true;
                        break;
                case 'h':
                        help();
                        return 0;
                case ':':
                        return log_error_errno(-EINVAL, "Option '%s' needs an argument.", argv[optind - 1]);
                default:
                        return log_error_errno(-EINVAL, "Unknown option '%s'.", argv[optind - 1]);
                }
        if (optind < argc)
                return log_error_errno(-EINVAL, "Unexpected argument '%s'.", argv[optind]);
        return 1;
}

static int fuzz_setup(Fuzz *f)
{
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        int r;

        r = sd_bus_open_system(&f->bus);
        if (r < 0)
                return log_error_errno(r, "Cannot connect to the system bus: %m");
        f->fds = sd_bus_can_send(f->bus, 'h') > 0;
        r = sd_bus_get_name_creds(f->bus, VPROF_BUS_NAME, SD_BUS_CREDS_PID, &creds);
        if (r < 0)
                return log_error_errno(r, "%s is not on the bus: %m", VPROF_BUS_NAME);
        r = sd_bus_creds_get_pid(creds, &f->daemon_pid);
        if (r < 0)
                return log_error_errno(r, "Cannot tell the PID of %s: %m", VPROF_BUS_NAME);
        r = children_start(&f->children);
        if (r < 0)
                return log_error_errno(r, "Cannot start the worker process: %m");
        return 0;
}

static void print_summary(Fuzz *f, uint64_t usec)
{
        double seconds = (double)usec / 1e6;

        printf("fuzz: %u calls in %.1f s (%.0f/s), %u without reply; replies: ", f->calls, seconds,
               seconds > 0 ? f->calls / seconds : 0.0, f->no_reply);
        tally_print(&f->tally, stdout);
        if (f->bad_replies > 0)
                printf("; %u replies broke the contract", f->bad_replies);
        if (f->unsent > 0)
                printf("; %u calls could not be sent", f->unsent);
        printf("\n");
}

static int run(int argc, char *argv[])
{
        _cleanup_free_ Fuzz *f = calloc(1, sizeof(Fuzz));
        uint64_t start, deadline;
        bool alive;
        int r;

        log_setup("vprof-bus-fuzz");
        r = parse_argv(argc, argv);
        if (r <= 0)
                return r;
        if (!f)
                return log_error_errno(-ENOMEM, "Out of memory.");
        f->rng.state = arg_seed_set ? arg_seed : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
        r = fuzz_setup(f);
        if (r >= 0) {
                printf("fuzz: seed %" PRIu64 ", vprofd PID %d, worker PID %d (thread %d)%s\n",
                       arg_seed_set ? arg_seed : f->rng.state, (int)f->daemon_pid, (int)f->children.worker,
                       (int)f->children.worker_thread, f->fds ? ", passing file descriptors" : "");
                fflush(stdout);

                start = now_usec();
                deadline = arg_seconds > 0 ? start + (uint64_t)arg_seconds * 1000000 : UINT64_MAX;
                /* A few calls without a reply end the run early: the daemon is gone or stuck. */
                while (r >= 0 && f->calls < arg_calls && now_usec() < deadline && f->no_reply < 3) {
                        children_reap(&f->children);
                        if (rng_chance(&f->rng, 3))
                                (void)children_spawn_short(&f->children, &f->rng, 4, 300);
                        r = fuzz_step(f);
                }
                if (r >= 0 && f->no_reply < 3)
                        r = detach_all(f);
                alive = r >= 0 && daemon_alive(f);
                print_summary(f, now_usec() - start);
                if (!alive || f->no_reply > 0 || f->bad_replies > 0 || f->unsent > 0)
                        r = -EPROTO;
        }
        children_stop(&f->children);
        tally_done(&f->tally);
        sd_bus_flush_close_unref(f->bus);
        return r;
}

int main(int argc, char *argv[])
{
        return run(argc, argv) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
