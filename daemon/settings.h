/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "sampler.h"

#define VPROF_MAX_FUNCTIONS_DEFAULT 65536
#define VPROF_MAX_STACKS_DEFAULT 65536
#define VPROF_SYMBOL_CACHE_MIB_DEFAULT 256
/* Holds the tables of the files a typical host's processes map (about 3 MiB here) many times over. */
#define VPROF_UNWIND_TABLE_MIB_DEFAULT 32
#define VPROF_DEBUGINFOD_TIMEOUT_SEC_DEFAULT 10
/* Per user but root: this many targets, or half of MaxTargets= when that is less, so that one user never
 * holds every slot. */
#define VPROF_MAX_TARGETS_PER_USER_DEFAULT 64
#define VPROF_EXITED_TARGET_RETENTION_SEC_DEFAULT 86400
/* Ten minutes of per-second buckets for the time windows (profile-window.h). */
#define VPROF_WINDOW_SECONDS_DEFAULT 600
/* A target's buckets at most: ten minutes of a busy 2-CPU target at 999 Hz over 10,000 distinct stacks take
 * 4.5 MiB (bench/window-memory.c, bench/results/2026-11-26-window-memory.md); past the bound the oldest seconds
 * go. */
#define VPROF_WINDOW_MIB_DEFAULT 16

/* What the daemon is told, by /etc/vprofd.conf and then by its command line, which wins. */
typedef struct Settings {
        uint32_t frequency;
        SamplerEvent event;
        uint32_t ring_mib; /* 0: sized from CPUs and frequency */
        uint32_t max_targets;
        uint32_t max_targets_per_user; /* UINT32_MAX: the default; 0: no limit per user */
        uint32_t exited_target_retention_sec; /* 0: until detached */
        uint32_t max_off_cpu_threads;
        bool off_cpu;
        bool python_interpreter_frames; /* keep the evaluation loop's native frames below the Python ones */
        uint32_t exit_idle_sec; /* 0: never */
        uint32_t max_functions; /* per target */
        uint32_t max_stacks;    /* per target */
        uint32_t symbol_cache_mib;
        uint32_t unwind_table_mib; /* 0: the kernel's frame-pointer walk */
        uint32_t unwind_self_check; /* 1 in N kept samples checked (unwind-self-check.h); 0: off */
        char *state_directory;          /* NULL: $STATE_DIRECTORY or the default; "": none */
        uint32_t snapshot_interval_sec; /* 0: only when stopping */
        uint32_t journal_interval_sec;  /* 0: no journal */
        uint32_t window_seconds;        /* per-second buckets kept for time windows; 0: no windows */
        uint32_t window_mib;            /* per target */
        char *debug_directory;          /* NULL or "": /usr/lib/debug */
        char *debuginfod_urls;          /* NULL or "": no downloads */
        uint32_t debuginfod_timeout_sec;
} Settings;

void settings_init(Settings *s);
/* Frees the strings; s can be set up again with settings_init(). */
void settings_done(Settings *s);

/* Set one setting by its configuration file key ("Frequency"). where names the source for the error message
 * ("/etc/vprofd.conf:3"), NULL for the command line. Logs and returns -EINVAL on a bad value, -ENOENT on an
 * unknown key. */
int settings_set(Settings *s, const char *key, const char *value, const char *where);

/* MaxTargetsPerUser= as it applies: the default worked out, never above MaxTargets=; 0 for no limit per user. */
uint32_t settings_max_targets_per_user(const Settings *s);

/* The configuration file; must_exist when its path was given explicitly. */
int settings_load_file(Settings *s, const char *path, bool must_exist);
