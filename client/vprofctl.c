/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <locale.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

#include "bus-client-groups.h"
#include "bus-client.h"
#include "diff.h"
#include "duration.h"
#include "log.h"
#include "output.h"
#include "parse-util.h"
#include "report-table.h"
#include "report-pprof.h"
#include "report-stacks.h"
#include "report-svg.h"
#include "report.h"
#include "target-arg.h"
#include "target-spec.h"
#include "time-util.h"
#include "top.h"
#include "vprofctl-help.h"

#define DELAY_MIN_USEC (USEC_PER_SEC / 10)
#define DELAY_MAX_USEC (UINT64_C(86400) * USEC_PER_SEC)

/* Options that belong to one or two verbs; any other verb refuses them rather than ignoring them. */
typedef enum VerbOption {
        VERB_OPTION_BY = 1 << 0,
        VERB_OPTION_SORT = 1 << 1,
        VERB_OPTION_LIMIT = 1 << 2,
        VERB_OPTION_DELAY = 1 << 3,
        VERB_OPTION_ITERATIONS = 1 << 4,
        VERB_OPTION_OFF_CPU = 1 << 5,
        VERB_OPTION_VALUES = 1 << 6,
        VERB_OPTION_UNIT = 1 << 7,
        VERB_OPTION_BATCH = 1 << 8,
        VERB_OPTION_WINDOW = 1 << 9,
        VERB_OPTION_CGROUP = 1 << 10,
        VERB_OPTION_CHILDREN = 1 << 11,
        VERB_OPTION_FORMAT = 1 << 12,
        VERB_OPTION_OUTPUT = 1 << 13,
        VERB_OPTION_SOURCE = 1 << 14,
        VERB_OPTION_BASE = 1 << 15,
} VerbOption;

static bool arg_json = false;
static bool arg_no_headings = false;
static ReportKind arg_by = REPORT_FUNCTIONS;
static ProfileSort arg_sort = PROFILE_SORT_EXCLUSIVE;
static uint32_t arg_limit = 0;
static uint64_t arg_delay_usec = USEC_PER_SEC;
static uint32_t arg_iterations = 0;
static bool arg_off_cpu = false;
static ReportView arg_values = REPORT_VIEW_SAMPLES;
static bool arg_unit_ms = false;
static bool arg_batch = false;
static uint64_t arg_window_usec = 0;
static char *arg_cgroup = NULL; /* --cgroup, as target-arg.h makes it */
static bool arg_children = false;
static const char *arg_format = NULL; /* report --format: a file format, written to arg_output */
static const char *arg_output = NULL;
static bool arg_source = false;
static uint64_t arg_base_window_usec = 0, arg_base_ago_usec = 0;
static bool arg_base_ago_given = false;
static const char *arg_base_target = NULL;
static const char *arg_base_output = NULL;
static const char *arg_base_pprof = NULL;
static VerbOption arg_verb_options = 0;

static OutputFlags output_flags(void)
{
        return (arg_json ? OUTPUT_JSON : 0) | (arg_no_headings ? OUTPUT_NO_HEADINGS : 0);
}

/* A target as the daemon names it (target-spec.h): *ret_pid the PID when it names a process, else 0. */
static int parse_target_argument(const char *s, uint32_t *ret_pid)
{
        TargetSpec spec;
        int r;

        r = target_spec_parse(s, &spec);
        if (r < 0) {
                if (s[0] >= '0' && s[0] <= '9')
                        return log_error_errno(r, "Invalid PID '%s': expected a number from 1 to 4194304", s);
                return log_error_errno(r, "Invalid target '%s': expected a PID, a unit name (NAME.service) or a "
                                          "cgroup path (/...)", s);
        }
        *ret_pid = spec.kind == TARGET_SPEC_PID ? spec.pid : 0;
        return 0;
}

/* Seconds with up to six decimals, "1" or "0.5"; no signs, exponents or locale-dependent commas. */
static int parse_delay(const char *s, uint64_t *ret)
{
        uint64_t sec = 0, frac = 0, scale = USEC_PER_SEC, usec;
        const char *p = s;

        if (*p < '0' || *p > '9')
                return -EINVAL;
        for (; *p >= '0' && *p <= '9'; p++) {
                sec = sec * 10 + (uint64_t)(*p - '0');
                if (sec > DELAY_MAX_USEC / USEC_PER_SEC)
                        return -ERANGE;
        }
        if (*p == '.') {
                p++;
                if (*p < '0' || *p > '9')
                        return -EINVAL;
                for (; *p >= '0' && *p <= '9'; p++)
                        if (scale > 1) {
                                scale /= 10;
                                frac += (uint64_t)(*p - '0') * scale;
                        }
        }
        if (*p != '\0')
                return -EINVAL;

        usec = sec * USEC_PER_SEC + frac;
        if (usec < DELAY_MIN_USEC || usec > DELAY_MAX_USEC)
                return -ERANGE;
        *ret = usec;
        return 0;
}

static int verb_pid_method(const char *method, const char *pid_arg)
{
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        uint32_t pid;
        int r;

        r = parse_target_argument(pid_arg, &pid);
        if (r < 0)
                return r;
        r = bus_connect_system(&bus);
        if (r < 0)
                return r;

        r = bus_call_target_method(bus, method, pid_arg, &error);
        if (r < 0)
                return log_bus_error(r, &error, method);
        return 0;
}

static int verb_attach(_unused_ int argc, char *argv[])
{
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        uint32_t pid;
        int r;

        r = parse_target_argument(argv[1], &pid);
        if (r < 0)
                return r;
        r = bus_connect_system(&bus);
        if (r < 0)
                return r;

        if (arg_children && pid == 0)
                return log_error_errno(-EINVAL, "Option --children applies to a PID: every process of a unit or a "
                                       "cgroup is profiled anyway");
        /* Without --off-cpu, the daemon's default decides (OffCpuDefault). */
        r = bus_attach(bus, argv[1],
                       (arg_off_cpu ? VPROF_ATTACH_OFF_CPU : 0) | (arg_children ? VPROF_ATTACH_CHILDREN : 0), &error);
        if (r < 0)
                return log_bus_error(r, &error, "Attach");
        return 0;
}

static int verb_detach(_unused_ int argc, char *argv[])
{
        return verb_pid_method("Detach", argv[1]);
}

static int verb_reset(_unused_ int argc, char *argv[])
{
        return verb_pid_method("Reset", argv[1]);
}

static int verb_list(_unused_ int argc, _unused_ char *argv[])
{
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(target_list_freep) TargetList *l = NULL;
        _cleanup_(group_list_freep) GroupList *groups = NULL;
        int r;

        r = bus_connect_system(&bus);
        if (r < 0)
                return r;

        r = bus_list_targets(bus, &error, &l);
        if (r < 0)
                return log_bus_error(r, &error, "ListTargets");
        r = bus_list_groups(bus, &error, &groups);
        if (r < 0)
                return log_bus_error(r, &error, "ListGroups");

        r = output_targets(l, groups, output_flags());
        if (r < 0)
                return log_error_errno(r, "Failed to print the targets: %m");
        return 0;
}

static int verb_status(_unused_ int argc, _unused_ char *argv[])
{
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(daemon_status_freep) DaemonStatus *s = NULL;
        int r;

        r = bus_connect_system(&bus);
        if (r < 0)
                return r;

        r = bus_get_status(bus, &error, &s);
        if (r < 0)
                return log_bus_error(r, &error, "GetAll");

        r = output_status(s, output_flags());
        if (r < 0)
                return log_error_errno(r, "Failed to print the status: %m");
        return 0;
}

/* The values a --sort key names, for the error when the view does not show them. */
static const char *sort_key_values(ProfileSort key)
{
        if (IN_SET(key, PROFILE_SORT_ELAPSED_INCLUSIVE, PROFILE_SORT_ELAPSED_EXCLUSIVE))
                return "elapsed";
        if (IN_SET(key, PROFILE_SORT_APPLICATION_INCLUSIVE, PROFILE_SORT_APPLICATION_EXCLUSIVE))
                return "application";
        return NULL;
}

/* report TARGET --format FORMAT -o FILE: the target's stacks over the window, in a file of that format. */
static int verb_report_file(int argc, char *argv[])
{
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        uint32_t pid;
        int r;

        if (argc < 2)
                return log_error_errno(-EINVAL, "report --format %s needs a target", arg_format);
        if (!arg_output)
                return log_error_errno(-EINVAL, "report --format %s needs -o FILE", arg_format);
        if ((arg_verb_options & (VERB_OPTION_BY | VERB_OPTION_SORT | VERB_OPTION_LIMIT | VERB_OPTION_VALUES |
                                 VERB_OPTION_UNIT)) ||
            arg_json || arg_no_headings)
                return log_error_errno(-EINVAL, "report --format %s takes no --by, --sort, --limit, --values, "
                                                "--unit, --json or --no-headings: it writes every stack",
                                       arg_format);
        r = parse_target_argument(argv[1], &pid);
        if (r < 0)
                return r;
        r = bus_connect_system(&bus);
        if (r < 0)
                return r;
        if (strcmp(arg_format, "pprof") == 0)
                return run_report_pprof(bus, argv[1], arg_window_usec, arg_output);
        return run_report_svg(bus, argv[1], arg_window_usec, arg_output);
}

static int verb_diff(int argc, char *argv[]);

static int verb_report(int argc, char *argv[])
{
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        ReportOptions o = {
                .by = arg_by,
                .view = arg_values,
                .sort_given = arg_verb_options & VERB_OPTION_SORT,
                .limit = arg_limit,
                .unit_ms = arg_unit_ms,
                .window_usec = arg_window_usec,
                .flags = output_flags(),
        };
        ProfileSort key = arg_sort;
        int r;

        /* A base makes the flame graph differential: diff's, by the name the issue of diffs gave it. */
        if (arg_verb_options & VERB_OPTION_BASE) {
                if (argc < 2 || !arg_format || strcmp(arg_format, "svg") != 0)
                        return log_error_errno(-EINVAL, "report with a base draws a differential flame graph: "
                                                        "report TARGET --format svg -o FILE (or vprofctl diff)");
                return verb_diff(argc, argv);
        }
        if (arg_format)
                return verb_report_file(argc, argv);
        if (arg_output)
                return log_error_errno(-EINVAL, "Option -o/--output needs --format");
        if (arg_by == REPORT_STACKS) {
                if (argc < 2)
                        return log_error_errno(-EINVAL, "report --by stack needs a PID");
                if (arg_verb_options & (VERB_OPTION_SORT | VERB_OPTION_UNIT) || arg_values != REPORT_VIEW_SAMPLES)
                        return log_error_errno(-EINVAL, "report --by stack takes no --sort, --values or --unit: "
                                                        "stacks come by sample count");
                r = parse_target_argument(argv[1], &o.pid);
                if (r < 0)
                        return r;
                r = bus_connect_system(&bus);
                if (r < 0)
                        return r;
                return run_report_stacks(bus, argv[1], o.pid, o.window_usec, o.limit, o.flags);
        }
        if ((arg_verb_options & VERB_OPTION_UNIT) && arg_values == REPORT_VIEW_SAMPLES)
                return log_error_errno(-EINVAL, "Option --unit needs --values elapsed, application or all");
        /* Functions by exclusive value unless told otherwise, as for the counts; the other tables of values
         * by inclusive value, the daemon's order. */
        if (!o.sort_given && arg_values != REPORT_VIEW_SAMPLES && arg_by != REPORT_FUNCTIONS)
                key = PROFILE_SORT_INCLUSIVE;
        r = report_view_sort_key(arg_values, key, &o.sort);
        if (r < 0)
                return log_error_errno(r, "Sort key '%s' needs --values %s or all",
                                       profile_sort_to_string(key), sort_key_values(key) ?: "samples");

        if (argc > 1) {
                r = parse_target_argument(argv[1], &o.pid);
                if (r < 0)
                        return r;
                o.target = argv[1];
        }
        if (arg_source) {
                if (arg_by != REPORT_FUNCTIONS || argc < 2)
                        return log_error_errno(-EINVAL, "Option --source needs --by function and a target");
                o.flags |= OUTPUT_SOURCE;
        }

        r = bus_connect_system(&bus);
        if (r < 0)
                return r;

        return run_report(bus, &o);
}

static int verb_top(int argc, char *argv[])
{
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        TopOptions o = {
                .sort = arg_sort,
                .window_usec = arg_window_usec,
                .delay_usec = arg_delay_usec,
                .iterations = arg_iterations,
                /* JSON is for programs, and so is an output that is not a terminal. */
                .batch = arg_batch || arg_json || !isatty(STDOUT_FILENO),
                .flags = output_flags(),
        };
        int r;

        if (profile_sort_is_values(arg_sort))
                return log_error_errno(-EINVAL,
                                       "Sort key '%s' applies to report --values only; top sorts by "
                                       "inclusive or exclusive",
                                       profile_sort_to_string(arg_sort));
        if (argc > 1) {
                r = parse_target_argument(argv[1], &o.pid);
                if (r < 0)
                        return r;
                o.target = argv[1];
        }
        /* The screen shows as many rows as fit, batch 20 unless told. */
        o.limit = arg_verb_options & VERB_OPTION_LIMIT ? arg_limit : o.batch ? 20 : 0;

        r = bus_connect_system(&bus);
        if (r < 0)
                return r;

        return run_top(bus, &o);
}

static int verb_diff(_unused_ int argc, char *argv[])
{
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        static const DiffBy by[_REPORT_KIND_MAX] = {
                [REPORT_FUNCTIONS] = DIFF_BY_FUNCTION, [REPORT_MODULES] = DIFF_BY_MODULE,
                [REPORT_THREADS] = DIFF_BY_THREAD,     [REPORT_PROCESSES] = _DIFF_BY_INVALID,
                [REPORT_STACKS] = DIFF_BY_STACK,
        };
        DiffRequest req = {
                .target = argv[1],
                .base_target = arg_base_target,
                .base_file = arg_base_pprof,
                .window_usec = arg_verb_options & VERB_OPTION_WINDOW ? arg_window_usec : 10 * USEC_PER_SEC,
                .base_window_usec = arg_base_window_usec,
                .by = by[arg_by],
                .limit = arg_limit,
                .flags = output_flags(),
        };
        uint32_t pid;
        int r;

        if (req.by < 0)
                return log_error_errno(-EINVAL, "diff --by process is not supported: compare the processes' "
                                                "functions, or a process with --base-target");
        if (req.window_usec == 0)
                return log_error_errno(-EINVAL, "diff needs a --window of 1 s or more, not all");
        if (arg_base_pprof && (arg_base_target || arg_base_window_usec || arg_base_output))
                return log_error_errno(-EINVAL, "diff --base-pprof is the base: no --base-target, --base-window "
                                                "or --base-output with it");
        if (arg_base_pprof && arg_format && strcmp(arg_format, "svg") != 0)
                return log_error_errno(-EINVAL, "diff --base-pprof FILE --format pprof: give FILE itself to go "
                                                "tool pprof -diff_base, and write the new window with report "
                                                "--format pprof --window");
        if (arg_format && strcmp(arg_format, "svg") == 0) {
                if (!arg_output || arg_base_output || strcmp(arg_output, "-") == 0)
                        return log_error_errno(-EINVAL, "diff --format svg writes one file: -o FILE, no "
                                                        "--base-output");
                req.svg_path = arg_output;
        } else if (arg_format || arg_output || arg_base_output) {
                if (!arg_format || !arg_output || !arg_base_output || strcmp(arg_output, "-") == 0 ||
                    strcmp(arg_base_output, "-") == 0)
                        return log_error_errno(-EINVAL, "diff writes files with --format pprof, -o NEW_FILE and "
                                                        "--base-output BASE_FILE, for go tool pprof -diff_base; "
                                                        "or --format svg -o FILE");
                req.pprof_path = arg_output;
                req.base_pprof_path = arg_base_output;
        }
        /* The base: the minute before the new window, unless told; another target's, the same window. */
        if (!req.base_window_usec)
                req.base_window_usec = arg_base_target ? req.window_usec : 60 * USEC_PER_SEC;
        req.base_ago_usec = arg_base_ago_given ? arg_base_ago_usec : arg_base_target ? 0 : req.window_usec;
        r = parse_target_argument(argv[1], &pid);
        if (r >= 0 && arg_base_target)
                r = parse_target_argument(arg_base_target, &pid);
        if (r < 0)
                return r;
        r = bus_connect_system(&bus);
        if (r < 0)
                return r;
        return run_diff(bus, &req);
}

typedef struct Verb {
        const char *name;
        unsigned min_args; /* arguments after the verb name */
        unsigned max_args;
        int (*fn)(int argc, char *argv[]); /* argv[0] is the verb name */
        VerbOption options;
} Verb;

static const Verb verbs[] = {
        {"attach", 1, 1, verb_attach, VERB_OPTION_OFF_CPU | VERB_OPTION_CGROUP | VERB_OPTION_CHILDREN},
        {"detach", 1, 1, verb_detach, VERB_OPTION_CGROUP},
        {"reset", 1, 1, verb_reset, VERB_OPTION_CGROUP},
        {"list", 0, 0, verb_list, 0},
        {"status", 0, 0, verb_status, 0},
        {"report", 0, 1, verb_report,
         VERB_OPTION_BY | VERB_OPTION_SORT | VERB_OPTION_LIMIT | VERB_OPTION_VALUES | VERB_OPTION_UNIT |
                 VERB_OPTION_WINDOW | VERB_OPTION_CGROUP | VERB_OPTION_FORMAT | VERB_OPTION_OUTPUT |
                 VERB_OPTION_SOURCE | VERB_OPTION_BASE},
        {"diff", 1, 1, verb_diff,
         VERB_OPTION_BY | VERB_OPTION_LIMIT | VERB_OPTION_WINDOW | VERB_OPTION_CGROUP | VERB_OPTION_BASE |
                 VERB_OPTION_FORMAT | VERB_OPTION_OUTPUT},
        {"top", 0, 1, verb_top,
         VERB_OPTION_SORT | VERB_OPTION_LIMIT | VERB_OPTION_DELAY | VERB_OPTION_ITERATIONS | VERB_OPTION_BATCH |
                 VERB_OPTION_WINDOW | VERB_OPTION_CGROUP},
};

static const struct {
        VerbOption option;
        const char *name;
} verb_option_names[] = {
        {VERB_OPTION_BY, "--by"},
        {VERB_OPTION_SORT, "--sort"},
        {VERB_OPTION_LIMIT, "-n/--limit"},
        {VERB_OPTION_DELAY, "-d/--delay"},
        {VERB_OPTION_ITERATIONS, "--iterations"},
        {VERB_OPTION_OFF_CPU, "--off-cpu"},
        {VERB_OPTION_VALUES, "--values"},
        {VERB_OPTION_UNIT, "--unit"},
        {VERB_OPTION_BATCH, "-b/--batch"},
        {VERB_OPTION_WINDOW, "--window"},
        {VERB_OPTION_CGROUP, "--cgroup"},
        {VERB_OPTION_CHILDREN, "--children"},
        {VERB_OPTION_FORMAT, "--format"},
        {VERB_OPTION_OUTPUT, "-o/--output"},
        {VERB_OPTION_SOURCE, "--source"},
        {VERB_OPTION_BASE, "--base-window/--base-target/--base-output/--base-pprof"},
};

static int dispatch_verb(int argc, char *argv[])
{
        const Verb *verb = NULL;
        char *with_cgroup[3];
        unsigned n_args;

        if (argc < 1)
                return log_error_errno(-EINVAL, "Missing command; see 'vprofctl --help'");

        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                if (strcmp(argv[0], verbs[i].name) == 0) {
                        verb = &verbs[i];
                        break;
                }
        if (!verb)
                return log_error_errno(-EINVAL, "Unknown command '%s'; see 'vprofctl --help'", argv[0]);

        /* --cgroup PATH is the target argument, given as an option. */
        if (arg_cgroup && (verb->options & VERB_OPTION_CGROUP)) {
                if (argc > 1)
                        return log_error_errno(-EINVAL, "Option --cgroup names the target of '%s': give no other",
                                               verb->name);
                with_cgroup[0] = argv[0];
                with_cgroup[1] = arg_cgroup;
                with_cgroup[2] = NULL;
                argv = with_cgroup;
                argc = 2;
        }

        n_args = (unsigned)argc - 1;
        if (n_args < verb->min_args)
                return log_error_errno(-EINVAL, "Too few arguments for '%s'; see 'vprofctl --help'",
                                       verb->name);
        if (n_args > verb->max_args)
                return log_error_errno(-EINVAL, "Too many arguments for '%s'; see 'vprofctl --help'",
                                       verb->name);

        for (size_t i = 0; i < ELEMENTSOF(verb_option_names); i++)
                if ((arg_verb_options & verb_option_names[i].option) &&
                    !(verb->options & verb_option_names[i].option))
                        return log_error_errno(-EINVAL, "Option %s does not apply to '%s'",
                                               verb_option_names[i].name, verb->name);

        return verb->fn(argc, argv);
}

/* getopt's own messages would carry argv[0], maybe a path; these name the option as it was typed. */
static int log_option_error(char *argv[], int c)
{
        const char *typed = argv[optind - 1];

        if (c == ':') {
                /* Only the last argument can lack its value, so argv[optind - 1] is the option itself. */
                if (strncmp(typed, "--", 2) == 0)
                        return log_error_errno(-EINVAL, "Option '%s' needs an argument", typed);
                return log_error_errno(-EINVAL, "Option '-%c' needs an argument", optopt);
        }
        if (optopt == 0)
                return log_error_errno(-EINVAL, "Unknown or ambiguous option '%s'", typed);
        /* A known option reported as '?' is a long one given a value it does not take, like --json=1. */
        if (optopt >= 0x100 || strchr("hJbndo", optopt))
                return log_error_errno(-EINVAL, "Option '%.*s' takes no argument", (int)strcspn(typed, "="),
                                       typed);
        return log_error_errno(-EINVAL, "Unknown option '-%c'", optopt);
}

static int parse_argv(int argc, char *argv[])
{
        enum {
                ARG_VERSION = 0x100,
                ARG_NO_HEADINGS,
                ARG_BY,
                ARG_SORT,
                ARG_ITERATIONS,
                ARG_OFF_CPU,
                ARG_VALUES,
                ARG_UNIT,
                ARG_WINDOW,
                ARG_CGROUP,
                ARG_CHILDREN,
                ARG_FORMAT,
                ARG_SOURCE,
                ARG_BASE_WINDOW,
                ARG_BASE_TARGET,
                ARG_BASE_OUTPUT,
                ARG_BASE_PPROF,
        };
        static const struct option options[] = {
                {"help", no_argument, NULL, 'h'},
                {"version", no_argument, NULL, ARG_VERSION},
                {"json", no_argument, NULL, 'J'},
                {"no-headings", no_argument, NULL, ARG_NO_HEADINGS},
                {"by", required_argument, NULL, ARG_BY},
                {"sort", required_argument, NULL, ARG_SORT},
                {"limit", required_argument, NULL, 'n'},
                {"delay", required_argument, NULL, 'd'},
                {"iterations", required_argument, NULL, ARG_ITERATIONS},
                {"off-cpu", no_argument, NULL, ARG_OFF_CPU},
                {"values", required_argument, NULL, ARG_VALUES},
                {"unit", required_argument, NULL, ARG_UNIT},
                {"batch", no_argument, NULL, 'b'},
                {"window", required_argument, NULL, ARG_WINDOW},
                {"cgroup", required_argument, NULL, ARG_CGROUP},
                {"children", no_argument, NULL, ARG_CHILDREN},
                {"format", required_argument, NULL, ARG_FORMAT},
                {"output", required_argument, NULL, 'o'},
                {"source", no_argument, NULL, ARG_SOURCE},
                {"base-window", required_argument, NULL, ARG_BASE_WINDOW},
                {"base-target", required_argument, NULL, ARG_BASE_TARGET},
                {"base-output", required_argument, NULL, ARG_BASE_OUTPUT},
                {"base-pprof", required_argument, NULL, ARG_BASE_PPROF},
                {NULL, 0, NULL, 0},
        };
        int c, r;

        opterr = 0;
        /* The leading ':' tells a missing argument (':') from an unknown option ('?'). */
        while ((c = getopt_long(argc, argv, ":hJbn:d:o:", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        vprofctl_help();
                        return 0;
                case ARG_VERSION:
                        printf("vprofctl %s\n", VPROF_VERSION);
                        return 0;
                case 'J':
                        arg_json = true;
                        break;
                case ARG_NO_HEADINGS:
                        arg_no_headings = true;
                        break;
                case ARG_BY:
                        if (report_kind_from_string(optarg, &arg_by) < 0)
                                return log_error_errno(-EINVAL,
                                                       "Invalid --by value '%s': expected function, module, "
                                                       "thread, process or stack",
                                                       optarg);
                        arg_verb_options |= VERB_OPTION_BY;
                        break;
                case ARG_SORT:
                        arg_sort = profile_sort_from_string(optarg);
                        if (arg_sort < 0)
                                return log_error_errno(-EINVAL,
                                                       "Invalid --sort value '%s': expected inclusive, "
                                                       "exclusive, elapsed-inclusive, elapsed-exclusive, "
                                                       "application-inclusive or application-exclusive",
                                                       optarg);
                        arg_verb_options |= VERB_OPTION_SORT;
                        break;
                case 'n':
                        r = parse_u32(optarg, 0, UINT32_MAX, &arg_limit);
                        if (r < 0)
                                return log_error_errno(
                                        r, "Invalid --limit value '%s': expected a number of rows", optarg);
                        arg_verb_options |= VERB_OPTION_LIMIT;
                        break;
                case 'd':
                        r = parse_delay(optarg, &arg_delay_usec);
                        if (r < 0)
                                return log_error_errno(
                                        r,
                                        "Invalid --delay value '%s': expected seconds from 0.1 "
                                        "to 86400",
                                        optarg);
                        arg_verb_options |= VERB_OPTION_DELAY;
                        break;
                case ARG_ITERATIONS:
                        r = parse_u32(optarg, 1, UINT32_MAX, &arg_iterations);
                        if (r < 0)
                                return log_error_errno(r,
                                                       "Invalid --iterations value '%s': expected a "
                                                       "positive number",
                                                       optarg);
                        arg_verb_options |= VERB_OPTION_ITERATIONS;
                        break;
                case ARG_OFF_CPU:
                        arg_off_cpu = true;
                        arg_verb_options |= VERB_OPTION_OFF_CPU;
                        break;
                case ARG_VALUES:
                        if (report_view_from_string(optarg, &arg_values) < 0)
                                return log_error_errno(
                                        -EINVAL,
                                        "Invalid --values value '%s': expected samples, elapsed, "
                                        "application or all",
                                        optarg);
                        arg_verb_options |= VERB_OPTION_VALUES;
                        break;
                case ARG_UNIT:
                        if (strcmp(optarg, "samples") == 0)
                                arg_unit_ms = false;
                        else if (strcmp(optarg, "ms") == 0)
                                arg_unit_ms = true;
                        else
                                return log_error_errno(-EINVAL,
                                                       "Invalid --unit value '%s': expected samples or ms",
                                                       optarg);
                        arg_verb_options |= VERB_OPTION_UNIT;
                        break;
                case ARG_CGROUP:
                        free(arg_cgroup);
                        arg_cgroup = NULL;
                        r = target_arg_cgroup(optarg, &arg_cgroup);
                        if (r < 0)
                                return log_error_errno(r, "Invalid --cgroup value '%s': expected a cgroup v2 path, "
                                                       "from the cgroup2 root or under its mount point", optarg);
                        arg_verb_options |= VERB_OPTION_CGROUP;
                        break;
                case ARG_CHILDREN:
                        arg_children = true;
                        arg_verb_options |= VERB_OPTION_CHILDREN;
                        break;
                case ARG_FORMAT:
                        if (strcmp(optarg, "svg") != 0 && strcmp(optarg, "pprof") != 0)
                                return log_error_errno(-EINVAL,
                                                       "Invalid --format value '%s': expected svg or pprof",
                                                       optarg);
                        arg_format = optarg;
                        arg_verb_options |= VERB_OPTION_FORMAT;
                        break;
                case 'o':
                        if (optarg[0] == '\0')
                                return log_error_errno(-EINVAL, "Invalid -o value '': expected a file name");
                        arg_output = optarg;
                        arg_verb_options |= VERB_OPTION_OUTPUT;
                        break;
                case ARG_SOURCE:
                        arg_source = true;
                        arg_verb_options |= VERB_OPTION_SOURCE;
                        break;
                case ARG_BASE_WINDOW:
                        r = duration_parse_at(optarg, &arg_base_window_usec, &arg_base_ago_usec,
                                              &arg_base_ago_given);
                        if (r < 0)
                                return log_error_errno(r,
                                                       "Invalid --base-window value '%s': expected DURATION or "
                                                       "DURATION@AGO (60s, 10s@20s, 5m@1m)",
                                                       optarg);
                        arg_verb_options |= VERB_OPTION_BASE;
                        break;
                case ARG_BASE_TARGET:
                        arg_base_target = optarg;
                        arg_verb_options |= VERB_OPTION_BASE;
                        break;
                case ARG_BASE_OUTPUT:
                        if (optarg[0] == '\0')
                                return log_error_errno(-EINVAL,
                                                       "Invalid --base-output value '': expected a file name");
                        arg_base_output = optarg;
                        arg_verb_options |= VERB_OPTION_BASE;
                        break;
                case ARG_BASE_PPROF:
                        if (optarg[0] == '\0')
                                return log_error_errno(-EINVAL,
                                                       "Invalid --base-pprof value '': expected a file name");
                        arg_base_pprof = optarg;
                        arg_verb_options |= VERB_OPTION_BASE;
                        break;
                case 'b':
                        arg_batch = true;
                        arg_verb_options |= VERB_OPTION_BATCH;
                        break;
                case ARG_WINDOW:
                        r = duration_parse(optarg, &arg_window_usec);
                        if (r < 0)
                                return log_error_errno(r,
                                                       "Invalid --window value '%s': expected all, or a "
                                                       "duration of 1 to 2678400 seconds (10, 10s, 500ms, "
                                                       "5m, 1h)",
                                                       optarg);
                        arg_verb_options |= VERB_OPTION_WINDOW;
                        break;
                case ':':
                case '?':
                        return log_option_error(argv, c);
                default:
                        return log_error_errno(-EINVAL, "Unexpected option %d", c);
                }
        }

        return 1;
}

int main(int argc, char *argv[])
{
        int r;

        log_setup("vprofctl");
        /* Character widths for the tables, but numbers stay in the C locale so that tables and JSON read the
         * same everywhere. */
        setlocale(LC_CTYPE, "");

        r = parse_argv(argc, argv);
        if (r > 0)
                r = dispatch_verb(argc - optind, argv + optind);

        if (fflush(stdout) != 0 && r >= 0)
                r = log_error_errno(negative_errno(), "Failed to write to standard output: %m");
        free(arg_cgroup);
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
