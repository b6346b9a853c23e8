/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

#include <systemd/sd-event.h>

#include "fetch-table.h"
#include "macros.h"

/* Debug files by build-id from debuginfod servers (DebuginfodURLs=), through libdebuginfod, loaded with
 * dlopen() only when the feature is on, so that the daemon does not map libcurl otherwise. Downloads run on one
 * worker thread: the event loop only queues a build-id and, woken by an eventfd, takes the answers, so neither
 * a query nor the drain of samples ever waits for the network. Each build-id is asked for once; a failure is
 * remembered. */
typedef struct Debuginfod Debuginfod;

/* A download finished, in the event loop: path of the debug file (in the cache directory), NULL when there is
 * none. */
typedef void (*DebuginfodDone)(const char *build_id, const char *path, void *userdata);

/* urls: space-separated, as DEBUGINFOD_URLS; cache_dir: where the downloads go (created if missing);
 * timeout_sec: the most one download may take. -ENOPKG when libdebuginfod.so.1 cannot be loaded (logged). */
int debuginfod_new(sd_event *event, const char *urls, const char *cache_dir, uint32_t timeout_sec,
                   DebuginfodDone done, void *userdata, Debuginfod **ret);
/* Stops the worker: a download under way is cancelled, within about a second. */
Debuginfod *debuginfod_free(Debuginfod *d);
DEFINE_TRIVIAL_CLEANUP_FUNC(Debuginfod *, debuginfod_free);

/* The symbolizer's DebugFetch (symbolizer.h): 1 with the path of a debug file downloaded before, else 0 after
 * queueing the build-id if it is new; never blocks. userdata: the Debuginfod. */
int debuginfod_fetch(const char *build_id, const char *binary_path, char **ret_path, void *userdata);

/* What became of build_id; FETCH_UNKNOWN for NULL d. */
FetchState debuginfod_state(const Debuginfod *d, const char *build_id);

/* $CACHE_DIRECTORY/debuginfod (systemd's CacheDirectory=), else /var/cache/vprofd/debuginfod. */
int debuginfod_cache_directory(char **ret);
