/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config-file.h"
#include "log.h"
#include "macros.h"
#include "parse-util.h"
#include "settings.h"
#include "vprof-abi.h"

void settings_init(Settings *s)
{
        *s = (Settings){
                .frequency = 99,
                .event = SAMPLER_EVENT_AUTO,
                .max_targets = VPROF_MAX_TARGETS_DEFAULT,
                .max_targets_per_user = UINT32_MAX,
                .exited_target_retention_sec = VPROF_EXITED_TARGET_RETENTION_SEC_DEFAULT,
                .max_off_cpu_threads = VPROF_MAX_OFF_CPU_THREADS_DEFAULT,
                .max_functions = VPROF_MAX_FUNCTIONS_DEFAULT,
                .max_stacks = VPROF_MAX_STACKS_DEFAULT,
                .symbol_cache_mib = VPROF_SYMBOL_CACHE_MIB_DEFAULT,
                .unwind_table_mib = VPROF_UNWIND_TABLE_MIB_DEFAULT,
                .snapshot_interval_sec = 30,
                .journal_interval_sec = 1,
                .window_seconds = VPROF_WINDOW_SECONDS_DEFAULT,
                .window_mib = VPROF_WINDOW_MIB_DEFAULT,
                .debuginfod_timeout_sec = VPROF_DEBUGINFOD_TIMEOUT_SEC_DEFAULT,
        };
}

void settings_done(Settings *s)
{
        free(s->state_directory);
        free(s->debug_directory);
        free(s->debuginfod_urls);
        s->state_directory = s->debug_directory = s->debuginfod_urls = NULL;
}

static int parse_bool(const char *v, bool *ret)
{
        static const char *const yes[] = { "1", "yes", "true", "on" }, *const no[] = { "0", "no", "false", "off" };

        for (size_t i = 0; i < ELEMENTSOF(yes); i++) {
                if (strcasecmp(v, yes[i]) == 0)
                        return *ret = true, 0;
                if (strcasecmp(v, no[i]) == 0)
                        return *ret = false, 0;
        }
        return -EINVAL;
}

/* One setting: its configuration key, how to parse it, and the expected values for the error message. */
typedef struct SettingInfo {
        const char *key;
        size_t offset;
        enum { SETTING_U32, SETTING_BOOL, SETTING_EVENT, SETTING_STRING, SETTING_URLS } type;
        uint32_t min, max;
        const char *what;     /* "frequency" */
        const char *expected; /* "1..10000 Hz" */
} SettingInfo;

#define U32(k, field, lo, hi, w, e) { k, offsetof(Settings, field), SETTING_U32, lo, hi, w, e }

static const SettingInfo settings_info[] = {
        U32("Frequency", frequency, 1, 10000, "frequency", "1..10000 Hz"),
        { "Event", offsetof(Settings, event), SETTING_EVENT, 0, 0, "event", "auto, cycles or cpu-clock" },
        U32("RingSizeMiB", ring_mib, 1, 1024, "ring size", "1..1024 MiB"),
        U32("MaxTargets", max_targets, 1, 65536, "target limit", "1..65536"),
        U32("MaxTargetsPerUser", max_targets_per_user, 0, 65536, "per-user target limit",
            "0..65536, 0 for none but MaxTargets="),
        U32("ExitedTargetRetentionSec", exited_target_retention_sec, 0, UINT32_MAX, "retention time",
            "seconds, 0 to keep exited targets until detached"),
        { "OffCpu", offsetof(Settings, off_cpu), SETTING_BOOL, 0, 0, "off-CPU setting", "yes or no" },
        { "PythonInterpreterFrames", offsetof(Settings, python_interpreter_frames), SETTING_BOOL, 0, 0,
          "Python interpreter frames setting", "yes or no" },
        U32("MaxOffCpuThreads", max_off_cpu_threads, 1, 1048576, "off-CPU thread limit", "1..1048576"),
        U32("ExitIdleSec", exit_idle_sec, 0, UINT32_MAX, "idle time", "seconds, 0 for never"),
        U32("MaxFunctionsPerTarget", max_functions, 1, 16777216, "function limit", "1..16777216"),
        U32("MaxStacksPerTarget", max_stacks, 1, 16777216, "stack limit", "1..16777216"),
        U32("SymbolCacheMiB", symbol_cache_mib, 1, 65536, "symbol cache size", "1..65536 MiB"),
        U32("UnwindTableMiB", unwind_table_mib, 0, 4096, "unwind table size",
            "0..4096 MiB, 0 for frame pointers only"),
        U32("UnwindSelfCheck", unwind_self_check, 0, 1000000, "self-check rate",
            "0..1000000, 1 in N samples checked, 0 for none"),
        { "StateDirectory", offsetof(Settings, state_directory), SETTING_STRING, 0, 0, "state directory",
          "an absolute path, or nothing" },
        U32("SnapshotIntervalSec", snapshot_interval_sec, 0, 86400, "snapshot interval", "0..86400 seconds"),
        U32("JournalIntervalSec", journal_interval_sec, 0, 3600, "journal interval", "0..3600 seconds"),
        U32("WindowSeconds", window_seconds, 0, 86400, "window length", "0..86400 seconds, 0 for no time windows"),
        U32("WindowMiBPerTarget", window_mib, 1, 4096, "window memory", "1..4096 MiB"),
        { "DebugDirectory", offsetof(Settings, debug_directory), SETTING_STRING, 0, 0, "debug directory",
          "an absolute path, or nothing for the default" },
        { "DebuginfodURLs", offsetof(Settings, debuginfod_urls), SETTING_URLS, 0, 0, "debuginfod URL list",
          "http:// or https:// URLs separated by spaces, or nothing for none" },
        U32("DebuginfodTimeoutSec", debuginfod_timeout_sec, 1, 3600, "debuginfod timeout", "1..3600 seconds"),
};

/* Space-separated URLs, as DEBUGINFOD_URLS: each http:// or https:// with a host; "" for none. */
static bool urls_valid(const char *v)
{
        while (*(v += strspn(v, " \t"))) {
                size_t n = strcspn(v, " \t"), scheme;

                if (strncmp(v, "http://", 7) == 0)
                        scheme = 7;
                else if (strncmp(v, "https://", 8) == 0)
                        scheme = 8;
                else
                        return false;
                if (n <= scheme || v[scheme] == '/')
                        return false;
                for (size_t i = 0; i < n; i++)
                        if ((unsigned char)v[i] < 0x21 || v[i] == 0x7f)
                                return false;
                v += n;
        }
        return true;
}

static int replace_string(char **field, const char *value)
{
        char *copy = strdup(value);

        if (!copy)
                return -ENOMEM;
        free(*field);
        *field = copy;
        return 0;
}

int settings_set(Settings *s, const char *key, const char *value, const char *where)
{
        const SettingInfo *info = NULL;
        void *field;
        int r = 0;

        for (size_t i = 0; i < ELEMENTSOF(settings_info); i++)
                if (strcmp(settings_info[i].key, key) == 0)
                        info = &settings_info[i];
        if (!info)
                return log_error_errno(-ENOENT, "%s: unknown setting '%s'.", where ?: "command line", key);

        field = (char *)s + info->offset;
        switch (info->type) {
        case SETTING_U32:
                r = parse_u32(value, info->min, info->max, field);
                break;
        case SETTING_BOOL:
                r = parse_bool(value, field);
                break;
        case SETTING_STRING:
                /* A path: absolute, or empty for the default. */
                r = value[0] != '\0' && value[0] != '/' ? -EINVAL : replace_string((char **)field, value);
                break;
        case SETTING_URLS:
                r = !urls_valid(value) ? -EINVAL : replace_string((char **)field, value);
                break;
        case SETTING_EVENT: {
                SamplerEvent e = sampler_event_from_string(value);
                if (e < 0)
                        r = -EINVAL;
                else
                        *(SamplerEvent *)field = e;
                break;
        }
        }
        if (r == -ENOMEM)
                return log_error_errno(r, "Out of memory.");
        if (r < 0) {
                if (where)
                        return log_error_errno(-EINVAL, "%s: invalid %s '%s' for %s=: expected %s.", where,
                                               info->what, value, key, info->expected);
                return log_error_errno(-EINVAL, "Invalid %s '%s': expected %s.", info->what, value,
                                       info->expected);
        }
        return 0;
}

static int assign(const char *key, const char *value, const char *where, void *userdata)
{
        return settings_set(userdata, key, value, where);
}

uint32_t settings_max_targets_per_user(const Settings *s)
{
        if (s->max_targets_per_user == UINT32_MAX)
                return MIN((uint32_t)VPROF_MAX_TARGETS_PER_USER_DEFAULT, MAX(s->max_targets / 2, UINT32_C(1)));
        return MIN(s->max_targets_per_user, s->max_targets);
}

int settings_load_file(Settings *s, const char *path, bool must_exist)
{
        return config_file_parse(path, "Daemon", must_exist, assign, s);
}
