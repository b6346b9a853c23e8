/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The StateStore's layout and the helpers of both halves, for state-store.c (saving) and state-restore.c
 * (restoring at start); nothing else includes this. Saving calls restoring (state-restore.h), never the other way
 * round, and neither half's header is included here. */

#include <stdbool.h>
#include <stdint.h>

#include <systemd/sd-event.h>

#include "journal.h"
#include "macros.h"

#define STATE_FILE "targets.state"
#define STATE_MAGIC "VPROFDST"

#define TAG_BOOT SECTION_TAG('B', 'O', 'O', 'T')
#define TAG_SAVE SECTION_TAG('S', 'A', 'V', 'E')
#define BOOT_ID_SIZE 37 /* a UUID and its NUL */

typedef struct Manager Manager;
typedef struct StateStore StateStore;

enum {
        SAVE_CLEAN_STOP = 1u << 0, /* the final save of a daemon that stopped: nothing was lost */
};

struct StateStore {
        Manager *manager;
        char *directory;
        int dir_fd; /* locked: one daemon per directory */
        sd_event_source *timer;
        uint64_t snapshot_usec; /* 0: no periodic snapshots */
        uint64_t generation;    /* of the snapshot in the file; the next one is one more */
        bool saved;             /* the fields below describe the file */
        uint32_t saved_targets_crc; /* of its targets' part: a snapshot that would not change it is not written */
        size_t saved_targets_size;
        size_t saved_size;
        uint64_t saved_usec; /* CLOCK_MONOTONIC */
        Journal *journal;       /* NULL without a journal */
        uint64_t journal_usec;
        uint64_t next_flush_usec; /* CLOCK_MONOTONIC: the journal's next record is due then */
        bool journal_ok;        /* its last record was written (or there was nothing to write) */
        bool save_due;          /* a snapshot is taken when the manager closes a second at or after: */
        uint64_t save_due_usec; /* CLOCK_MONOTONIC */
        bool in_save;           /* a save is closing the second itself */
};

/* "42.0 s", "3 min 5 s", "2 h 10 min", "3 d 4 h". */
void state_format_age(char *buf, size_t size, uint64_t usec);
/* The running kernel's boot: "" when unknown, which matches no saved boot. */
void state_read_boot_id(char id[BOOT_ID_SIZE]);
