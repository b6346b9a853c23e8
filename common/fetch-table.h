/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

#include "macros.h"

/* What became of each key (a build-id) asked for from a remote source: asked once, never again, whatever the
 * answer, so that a file sampled thousands of times costs one request. At most max_pending keys wait at once,
 * which bounds the queue of whoever does the fetching. Pure: no threads, no I/O, no logging. */
typedef struct FetchTable FetchTable;

typedef enum FetchState {
        FETCH_UNKNOWN, /* never asked for, or refused for a full queue */
        FETCH_PENDING, /* asked for, no answer yet */
        FETCH_DONE,    /* answered with a path */
        FETCH_FAILED,  /* answered with nothing */
} FetchState;

int fetch_table_new(size_t max_pending, FetchTable **ret);
FetchTable *fetch_table_free(FetchTable *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(FetchTable *, fetch_table_free);

/* Ask for key; label (for messages, e.g. the file's path) is kept with it. 1: key is new and now pending, the
 * caller starts its fetch; 0: known already (see fetch_table_state()); -ENOSPC: max_pending keys are pending,
 * nothing is recorded; -ENOMEM. */
int fetch_table_request(FetchTable *t, const char *key, const char *label);

/* The answer for a pending key: path, or NULL for none. -ENOENT when key is not pending. */
int fetch_table_complete(FetchTable *t, const char *key, const char *path);

/* The state of key; *ret_path (optional) is the path of a DONE key, owned by t. */
FetchState fetch_table_state(const FetchTable *t, const char *key, const char **ret_path);
/* The label given at the request; NULL for an unknown key. */
const char *fetch_table_label(const FetchTable *t, const char *key);
size_t fetch_table_pending(const FetchTable *t);
/* "unknown", "pending", "done", "failed". */
const char *fetch_state_to_string(FetchState state);
