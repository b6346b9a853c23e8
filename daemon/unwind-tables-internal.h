/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What unwind-tables.c (slots, builds, pushes) and unwind-tables-place.c (the arena) share. Not for use outside
 * them. */

#include <stdbool.h>
#include <stdint.h>

#include <systemd/sd-event.h>

#include "hashmap.h"
#include "sampler.h"
#include "unwind-arena.h"
#include "unwind-tables.h"
#include "time-util.h"
#include "unwinder.h"

/* A retired table's range and id wait this long before reuse: a walk takes microseconds. */
#define QUARANTINE_USEC USEC_PER_SEC

typedef enum SlotState {
        SLOT_NEW,
        SLOT_COMPILING,
        SLOT_WAITING, /* compiled, waiting for room in the arena */
        SLOT_LOADED,
        SLOT_EVICTED,
        SLOT_NO_CFI,  /* the last three for good: frame-pointer steps */
        SLOT_FAILED,
        SLOT_TOO_BIG,
} SlotState;

/* One table, by the digest of the CFI it is compiled from (else, for a file without CFI, the file's device
 * and inode), shared by every file whose CFI has that digest. */
typedef struct Slot {
        char *key;
        uint8_t digest[EH_FRAME_DIGEST_SIZE]; /* the key's, when has_digest */
        bool has_digest;
        char *name;              /* the file's name, for the log */
        SlotState state;
        uint64_t state_usec;     /* CLOCK_MONOTONIC of the last change */
        UnwinderTableBuild *build; /* COMPILING */
        UnwindTable *table;      /* WAITING */
        uint64_t build_usec;
        uint32_t id, first, n;   /* LOADED: descriptor and arena range */
        uint64_t base;           /* LOADED: the ELF vaddr of the rows' offset 0 */
        unsigned refs;           /* mappings pushed with the table */
} Slot;

/* What was pushed for a target. */
typedef struct PushedTarget {
        uint64_t generation;     /* of its maps then */
        uint64_t push_usec;
        bool dirty;              /* a table of one of its files changed since */
        Slot **refs;             /* LOADED slots its mappings reference, one per mapping */
        size_t n_refs;
} PushedTarget;

struct UnwindTables {
        Sampler *sampler;
        sd_event *event;
        Hashmap *targets;        /* pid -> Target, the manager's running ones */
        UnwindArena *arena;
        Hashmap *by_key;         /* Slot.key -> Slot: "cfi:" and the digest in hex, or "file:DEV:INO" */
        Hashmap *by_file;        /* "DEV:INO" (owned) -> Slot: the files of mapped code whose slot is known */
        Hashmap *pushed;         /* pid -> PushedTarget */
        Slot **queue;            /* COMPILING and WAITING slots, oldest first */
        size_t n_queue, cap_queue;
        sd_event_source *build_source; /* idle priority; on while some slot compiles */
        sd_event_source *retry_timer;  /* for WAITING slots: the end of the next quarantine */
        bool push_all;           /* a table was loaded, evicted or given up: push every target */
        UnwindTablesStats stats;
};

void unwind_slot_set_state(Slot *s, SlotState state);
void unwind_tables_queue_remove(UnwindTables *u, Slot *s);
/* The compiled tables waiting, in order, as far as they go in; the targets pushed again when one was loaded,
 * evicted or given up. */
void unwind_tables_place_waiting(UnwindTables *u);
