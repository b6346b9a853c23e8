/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "address-space.h"
#include "log.h"
#include "time-util.h"
#include "unwind-arena.h"
#include "unwind-tables.h"
#include "unwind-tables-internal.h"
#include "unwinder.h"

/* A slice of a build: so many FDEs at a time, for at most this long, then the event loop runs again. */
#define BUILD_STEP_FDES 200
#define BUILD_SLICE_USEC (5 * USEC_PER_MSEC)
/* A new target's builds run at its attach for at most this much CPU: python3's files take about 10 ms. */
#define PREFETCH_BUDGET_USEC (250 * USEC_PER_MSEC)
/* An evicted table is not compiled again sooner, so that two files too large together do not take turns. */
#define EVICTED_RETRY_USEC (30 * USEC_PER_SEC)


static const char *const state_names[] = {
        [SLOT_NEW] = "new", [SLOT_COMPILING] = "compiling", [SLOT_WAITING] = "waiting", [SLOT_LOADED] = "loaded",
        [SLOT_EVICTED] = "evicted",     [SLOT_NO_CFI] = "no CFI",   [SLOT_FAILED] = "failed",
        [SLOT_TOO_BIG] = "too big",
};

static bool state_final(SlotState s)
{
        return s == SLOT_NO_CFI || s == SLOT_FAILED || s == SLOT_TOO_BIG;
}

void unwind_slot_set_state(Slot *s, SlotState state)
{
        log_debug("Unwind table of %s: %s.", s->name, state_names[state]);
        s->state = state;
        s->state_usec = now_usec(CLOCK_MONOTONIC);
}

static void slot_free(Slot *s)
{
        if (!s)
                return;
        unwinder_table_build_free(s->build);
        unwind_table_free(s->table);
        free(s->key);
        free(s->name);
        free(s);
}

static void pushed_free(PushedTarget *p)
{
        if (!p)
                return;
        free(p->refs);
        free(p);
}

UnwindTables *unwind_tables_free(UnwindTables *u)
{
        PushedTarget *p;
        Slot *s;
        void *key;

        if (!u)
                return NULL;
        sd_event_source_disable_unref(u->build_source);
        sd_event_source_disable_unref(u->retry_timer);
        if (u->pushed) {
                HASHMAP_FOREACH(p, u->pushed)
                        pushed_free(p);
                hashmap_free(u->pushed);
        }
        if (u->by_file) {
                for (size_t i = 0; hashmap_iterate(u->by_file, &i, &key, NULL);)
                        free(key);
                hashmap_free(u->by_file);
        }
        if (u->by_key) {
                HASHMAP_FOREACH(s, u->by_key)
                        slot_free(s);
                hashmap_free(u->by_key);
        }
        free(u->queue);
        unwind_arena_free(u->arena);
        free(u);
        return NULL;
}

static int on_build(sd_event_source *source, void *userdata);

int unwind_tables_new(Sampler *sampler, sd_event *event, Hashmap *targets, UnwindTables **ret)
{
        _cleanup_(unwind_tables_freep) UnwindTables *u = NULL;
        uint32_t size = sampler_unwind_arena_entries(sampler);
        int r;

        if (size == 0)
                return -EOPNOTSUPP;
        u = calloc(1, sizeof(*u));
        if (!u)
                return -ENOMEM;
        u->sampler = sampler;
        u->event = event;
        u->targets = targets;
        u->by_key = hashmap_new(&string_hash_ops);
        u->by_file = hashmap_new(&string_hash_ops);
        u->pushed = hashmap_new(&uint64_hash_ops);
        if (!u->by_key || !u->by_file || !u->pushed)
                return -ENOMEM;
        r = unwind_arena_new(size, VPROF_UNWIND_TABLES_MAX, QUARANTINE_USEC, &u->arena);
        if (r < 0)
                return r;
        u->stats.arena_bytes = (uint64_t)size * sizeof(struct vprof_unwind_entry);

        /* Builds yield to everything else: samples, bus calls, timers. */
        r = sd_event_add_defer(event, &u->build_source, on_build, u);
        if (r < 0)
                return r;
        r = sd_event_source_set_priority(u->build_source, SD_EVENT_PRIORITY_IDLE);
        if (r >= 0)
                r = sd_event_source_set_enabled(u->build_source, SD_EVENT_OFF);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(u);
        return 0;
}

/* The by_file key of a mapping's file. */
static void file_key(const ProcMap *m, char buf[static 64])
{
        snprintf(buf, 64, "%" PRIx32 ":%" PRIx32 ":%" PRIu64, m->dev_major, m->dev_minor, m->inode);
}

void unwind_tables_queue_remove(UnwindTables *u, Slot *s)
{
        for (size_t i = 0; i < u->n_queue; i++)
                if (u->queue[i] == s) {
                        memmove(u->queue + i, u->queue + i + 1, (u->n_queue - i - 1) * sizeof(*u->queue));
                        u->n_queue--;
                        return;
                }
}

static int queue_add(UnwindTables *u, Slot *s)
{
        if (u->n_queue == u->cap_queue) {
                size_t cap = MAX(u->cap_queue * 2, (size_t)16);
                Slot **q = realloc(u->queue, cap * sizeof(*q));

                if (!q)
                        return -ENOMEM;
                u->queue = q;
                u->cap_queue = cap;
        }
        u->queue[u->n_queue++] = s;
        return 0;
}

static void update_build_source(UnwindTables *u)
{
        bool compiling = false;

        for (size_t i = 0; i < u->n_queue && !compiling; i++)
                compiling = u->queue[i]->state == SLOT_COMPILING;
        (void)sd_event_source_set_enabled(u->build_source, compiling ? SD_EVENT_ON : SD_EVENT_OFF);
}

/* One slice of the build of s (COMPILING). */
static void build_slice(UnwindTables *u, Slot *s)
{
        uint64_t start = now_usec(CLOCK_THREAD_CPUTIME_ID), spent;
        int r;

        do
                r = unwinder_table_build_step(s->build, BUILD_STEP_FDES);
        while (r == 0 && now_usec(CLOCK_THREAD_CPUTIME_ID) - start < BUILD_SLICE_USEC);
        if (r == 0) {
                spent = now_usec(CLOCK_THREAD_CPUTIME_ID) - start;
                s->build_usec += spent;
                u->stats.build_usec += spent;
                return; /* more next time */
        }
        if (r > 0)
                r = unwinder_table_build_finish(s->build, &s->table);
        spent = now_usec(CLOCK_THREAD_CPUTIME_ID) - start;
        s->build_usec += spent;
        u->stats.build_usec += spent;

        s->build = unwinder_table_build_free(s->build);
        if (r < 0) {
                unwind_tables_queue_remove(u, s);
                log_debug_errno(r, "Cannot compile the unwind table of %s: %m", s->name);
                if (r == -ENOENT) {
                        u->stats.no_cfi++;
                        unwind_slot_set_state(s, SLOT_NO_CFI);
                } else {
                        u->stats.failed++;
                        unwind_slot_set_state(s, SLOT_FAILED);
                }
                u->push_all = true;
                unwind_tables_sync(u);
        } else {
                u->stats.compiled++;
                unwind_slot_set_state(s, SLOT_WAITING);
                unwind_tables_place_waiting(u);
        }
}

/* One slice of the oldest build. */
static int on_build(sd_event_source *source _unused_, void *userdata)
{
        UnwindTables *u = userdata;
        Slot *s = NULL;

        for (size_t i = 0; i < u->n_queue && !s; i++)
                if (u->queue[i]->state == SLOT_COMPILING)
                        s = u->queue[i];
        if (s)
                build_slice(u, s);
        update_build_source(u);
        return 0;
}

/* Start compiling the table of the file mapped at addr in as: 0, or -ESTALE when the file's CFI is not (or
 * no longer) the one the slot is for: a file rewritten since its digest was taken, read again with the maps.
 * The slot stays as it was, for the files whose CFI it is, and the caller looks at the file again as a new
 * one. */
static int start_build(UnwindTables *u, Slot *s, AddressSpace *as, uint64_t addr)
{
        uint8_t digest[EH_FRAME_DIGEST_SIZE];
        int r;

        /* A slot shared by several files takes no error of one of them for good (its CFI not read this time,
         * for the cache's budget), only those of the builder, which are the CFI's. */
        if (s->has_digest && (unwinder_cfi_digest(as, addr, digest, NULL) < 0 ||
                              memcmp(digest, s->digest, EH_FRAME_DIGEST_SIZE) != 0)) {
                log_debug("The CFI of %s is not that of its table: the file is looked at again.", s->name);
                return -ESTALE;
        }
        r = unwinder_table_build_new(as, addr, &s->build);
        /* The table is the bytes the build reads: under the slot's key only when their digest is the key. */
        if (r >= 0 && (!s->has_digest || memcmp(unwinder_table_build_digest(s->build), s->digest,
                                                EH_FRAME_DIGEST_SIZE) != 0)) {
                s->build = unwinder_table_build_free(s->build);
                return -ESTALE;
        }
        if (r >= 0)
                r = queue_add(u, s);
        if (r < 0) {
                s->build = unwinder_table_build_free(s->build);
                log_debug_errno(r, "No unwind table for %s: %m", s->name);
                if (r == -ENOENT)
                        u->stats.no_cfi++;
                else
                        u->stats.failed++;
                unwind_slot_set_state(s, r == -ENOENT ? SLOT_NO_CFI : SLOT_FAILED);
                u->push_all = true;
                return 0;
        }
        unwind_slot_set_state(s, SLOT_COMPILING);
        update_build_source(u);
        return 0;
}

/* digest: NULL for a file without CFI. */
static Slot *slot_new(UnwindTables *u, const char *key, const uint8_t *digest, const char *path)
{
        const char *slash = strrchr(path, '/');
        Slot *s = calloc(1, sizeof(*s));

        if (!s)
                return NULL;
        if (digest) {
                memcpy(s->digest, digest, EH_FRAME_DIGEST_SIZE);
                s->has_digest = true;
        }
        s->key = strdup(key);
        s->name = strdup(slash ? slash + 1 : path);
        if (!s->key || !s->name || hashmap_put(u->by_key, s->key, s) < 0) {
                slot_free(s);
                return NULL;
        }
        return s;
}

static PushedTarget *pushed_get(UnwindTables *u, pid_t pid)
{
        return hashmap_get(u->pushed, UINT64_TO_PTR((uint64_t)pid));
}

/* The by_key key of a digest. */
#define DIGEST_KEY_MAX (4 + 2 * EH_FRAME_DIGEST_SIZE + 1)
static void digest_key(const uint8_t digest[static EH_FRAME_DIGEST_SIZE], char buf[static DIGEST_KEY_MAX])
{
        static const char hex[] = "0123456789abcdef";

        memcpy(buf, "cfi:", 4);
        for (size_t i = 0; i < EH_FRAME_DIGEST_SIZE; i++) {
                buf[4 + 2 * i] = hex[digest[i] >> 4];
                buf[4 + 2 * i + 1] = hex[digest[i] & 15];
        }
        buf[4 + 2 * EH_FRAME_DIGEST_SIZE] = 0;
}

/* A file's stale entry in by_file out: the next record that falls back in it finds its slot anew. */
static void forget_file(UnwindTables *u, const char *fkey)
{
        void *key;

        for (size_t i = 0; hashmap_iterate(u->by_file, &i, &key, NULL);)
                if (strcmp(key, fkey) == 0) {
                        hashmap_remove(u->by_file, key);
                        free(key);
                        return;
                }
}

void unwind_tables_note(UnwindTables *u, Target *t, uint64_t addr, bool unknown_pc)
{
        char fkey[64], key[DIGEST_KEY_MAX], *fkey_copy;
        uint8_t digest[EH_FRAME_DIGEST_SIZE];
        const ProcMap *m;
        PushedTarget *p;
        Slot *s = NULL;
        int r;

        if (!u || !t->address_space || t->exited)
                return;
        /* Code mapped since the maps were read (dlopen()): read them again, and push them at the next sync. */
        if (unknown_pc)
                (void)address_space_refresh(t->address_space);
        if (addr == 0)
                return;
        m = proc_maps_find(address_space_maps(t->address_space, NULL), addr);
        if (!m) {
                (void)address_space_refresh(t->address_space);
                return;
        }
        if (!m->executable || !m->path || m->path[0] != '/')
                return;
        p = pushed_get(u, t->pid);
        file_key(m, fkey);
        s = hashmap_get(u->by_file, fkey);
        if (s) {
                uint64_t now = now_usec(CLOCK_MONOTONIC);

                /* An evicted table compiled again after a while; else a record taken before the last push,
                 * or a push that missed this table: push again. */
                if (s->state == SLOT_EVICTED && now - s->state_usec >= EVICTED_RETRY_USEC) {
                        if (start_build(u, s, t->address_space, addr) == -ESTALE)
                                forget_file(u, fkey);
                } else if (p && (s->state == SLOT_LOADED || state_final(s->state)) &&
                           p->push_usec < s->state_usec)
                        p->dirty = true;
                return;
        }

        /* A file not seen before (or not since no mapping held its table): the table of the same CFI,
         * compiled from another file or not. Not by build-id: a file's owner chooses its build-id and its
         * CFI apart, and a copy of another's program with other CFI would give that program its table. */
        r = unwinder_cfi_digest(t->address_space, addr, digest, NULL);
        if (r == -ENOENT) {
                /* No CFI: the file's own slot, which its build finds without CFI too. */
                snprintf(key, sizeof(key), "file:%s", fkey);
                s = hashmap_get(u->by_key, key) ?: slot_new(u, key, NULL, m->path);
        } else if (r >= 0) {
                digest_key(digest, key);
                s = hashmap_get(u->by_key, key) ?: slot_new(u, key, digest, m->path);
        }
        if (!s)
                return;
        fkey_copy = strdup(fkey);
        if (!fkey_copy || hashmap_put(u->by_file, fkey_copy, s) < 0) {
                free(fkey_copy);
                return;
        }
        if (s->state == SLOT_NEW ||
            (s->state == SLOT_EVICTED && now_usec(CLOCK_MONOTONIC) - s->state_usec >= EVICTED_RETRY_USEC)) {
                if (start_build(u, s, t->address_space, addr) == -ESTALE)
                        forget_file(u, fkey);
        } else if (p)
                p->dirty = true;
}

/* Every file of code in t's maps asked for as a fallback in it would ask: those not known yet start compiling. */
static void note_files(UnwindTables *u, Target *t)
{
        uint64_t addrs[VPROF_MAX_MAPPINGS];
        const ProcMaps *maps = address_space_maps(t->address_space, NULL);
        size_t n = 0;

        /* The addresses first: a note may read the maps again, and free the ones iterated. */
        for (size_t i = 0; maps && i < maps->n && n < ELEMENTSOF(addrs); i++)
                if (maps->maps[i].executable && maps->maps[i].path && maps->maps[i].path[0] == '/')
                        addrs[n++] = maps->maps[i].start;
        for (size_t i = 0, before; i < n; i++) {
                before = hashmap_size(u->by_file);
                unwind_tables_note(u, t, addrs[i], false);
                u->stats.prefetched += hashmap_size(u->by_file) > before;
        }
}

/* The slots that no mapping references any more lose their files: a file's device and inode stand for it only
 * while something maps it (the inode may be reused after). */
static void slot_unref(UnwindTables *u, Slot *s)
{
        void *key, *value;

        if (--s->refs > 0)
                return;
        for (size_t i = 0; hashmap_iterate(u->by_file, &i, &key, &value);)
                if (value == s) {
                        hashmap_remove(u->by_file, key);
                        free(key);
                }
}

/* Whether the file mapped at addr has the CFI of s's table (and its bias then), or none when s is a file's
 * slot without CFI. A device and inode name a file only while it lives, and a slot in a final state keeps
 * its files for good: another file may have them by now (a user's copy deleted, its inode given to a file of
 * root's), or its owner may have rewritten it. So each mapping is checked at the point where a table is
 * given to it. */
static bool slot_fits(const Slot *s, AddressSpace *as, uint64_t addr, uint64_t *ret_bias)
{
        uint8_t digest[EH_FRAME_DIGEST_SIZE];
        int r;

        r = unwinder_cfi_digest(as, addr, digest, ret_bias);
        if (!s->has_digest)
                return r == -ENOENT;
        return r >= 0 && memcmp(digest, s->digest, EH_FRAME_DIGEST_SIZE) == 0;
}

static void push_target(UnwindTables *u, Target *t, bool force)
{
        struct vprof_mapping m[VPROF_MAX_MAPPINGS];
        Slot *refs[VPROF_MAX_MAPPINGS], **copy = NULL;
        const ProcMaps *maps;
        uint64_t generation;
        PushedTarget *p;
        size_t n = 0, n_refs = 0;
        int r;

        if (!t->address_space || t->exited)
                return;
        maps = address_space_maps(t->address_space, &generation);
        p = pushed_get(u, t->pid);
        if (p && !force && !p->dirty && p->generation == generation)
                return;
        /* New maps (a new target, dlopen(), exec()): all new files' tables at once, before any fallback. */
        if (!p || p->generation != generation) {
                note_files(u, t);
                maps = address_space_maps(t->address_space, &generation);
        }

        for (size_t i = 0; i < maps->n; i++) {
                const ProcMap *pm = &maps->maps[i];
                char fkey[64];
                uint64_t bias;
                Slot *s;

                /* The walk's search takes addresses for positive numbers: no [vsyscall]. */
                if (!pm->executable || pm->start >= pm->end || pm->end > (UINT64_C(1) << 63))
                        continue;
                if (n == ELEMENTSOF(m)) {
                        u->stats.mappings_dropped++;
                        continue;
                }
                m[n] = (struct vprof_mapping){ .start = pm->start, .end = pm->end };
                if (!pm->path || pm->path[0] != '/') {
                        m[n++].flags = VPROF_MAPPING_FP_ONLY; /* anonymous code (JIT), the vDSO */
                        continue;
                }
                file_key(pm, fkey);
                s = hashmap_get(u->by_file, fkey);
                /* Not its file's slot: no table, so that its next fallback finds the file's own. */
                if (s && (s->state == SLOT_LOADED || state_final(s->state)) &&
                    !slot_fits(s, t->address_space, pm->start, &bias)) {
                        log_debug("The file of %s at %" PRIx64 " in %d is not its slot's: looked at again.",
                                  s->name, pm->start, (int)t->pid);
                        forget_file(u, fkey);
                        s = NULL;
                }
                if (s && state_final(s->state))
                        m[n].flags = VPROF_MAPPING_FP_ONLY;
                else if (s && s->state == SLOT_LOADED) {
                        m[n].table = s->id;
                        m[n].adj = bias + s->base;
                        refs[n_refs++] = s;
                }
                n++;
        }

        if (!p) {
                p = calloc(1, sizeof(*p));
                if (!p || hashmap_put(u->pushed, UINT64_TO_PTR((uint64_t)t->pid), p) < 0) {
                        free(p);
                        return;
                }
        }
        if (n_refs > 0) {
                copy = malloc(n_refs * sizeof(*copy));
                if (!copy) {
                        p->dirty = true;
                        return;
                }
                memcpy(copy, refs, n_refs * sizeof(*copy));
        }
        r = sampler_set_mappings(u->sampler, (uint32_t)t->pid, m, n, (uint32_t)generation);
        if (r < 0) {
                log_debug_errno(r, "Cannot push the mappings of %d for the unwind tables: %m", (int)t->pid);
                free(copy);
                p->dirty = true;
                return;
        }
        for (size_t i = 0; i < n_refs; i++)
                copy[i]->refs++;
        for (size_t i = 0; i < p->n_refs; i++)
                slot_unref(u, p->refs[i]);
        free(p->refs);
        p->refs = copy;
        p->n_refs = n_refs;
        p->generation = generation;
        p->push_usec = now_usec(CLOCK_MONOTONIC);
        p->dirty = false;
}

/* A slot of t's files still compiling, or NULL. */
static Slot *compiling_slot(UnwindTables *u, Target *t)
{
        const ProcMaps *maps = address_space_maps(t->address_space, NULL);

        for (size_t i = 0; maps && i < maps->n; i++) {
                const ProcMap *pm = &maps->maps[i];
                char fkey[64];
                Slot *s;

                if (!pm->executable || !pm->path || pm->path[0] != '/')
                        continue;
                file_key(pm, fkey);
                s = hashmap_get(u->by_file, fkey);
                if (s && s->state == SLOT_COMPILING)
                        return s;
        }
        return NULL;
}

/* Now, not at the next drain (up to DRAIN_INTERVAL_USEC away): the tables another target loaded, and the
 * builds of its own files run here, before its first sample is kept, for at most PREFETCH_BUDGET_USEC of CPU;
 * what is left goes on in slices, counted. A child, a group member, shares its parent's files: nothing to
 * build then. */
void unwind_tables_prefetch(UnwindTables *u, Target *t)
{
        bool built = false;
        uint64_t start;
        Slot *s;

        if (!u || !t->address_space || t->exited)
                return;
        push_target(u, t, false);
        start = now_usec(CLOCK_THREAD_CPUTIME_ID);
        while ((s = compiling_slot(u, t))) {
                if (now_usec(CLOCK_THREAD_CPUTIME_ID) - start >= PREFETCH_BUDGET_USEC) {
                        u->stats.prefetch_unfinished++;
                        break;
                }
                build_slice(u, s);
                built = true;
        }
        if (!built) /* a member of a storm: its parent's tables, pushed once */
                return;
        update_build_source(u);
        push_target(u, t, true);
}

void unwind_tables_sync(UnwindTables *u)
{
        bool all;
        Target *t;

        if (!u)
                return;
        all = u->push_all;
        u->push_all = false;
        HASHMAP_FOREACH(t, u->targets)
                push_target(u, t, all);
}

void unwind_tables_forget(UnwindTables *u, pid_t pid)
{
        PushedTarget *p;

        if (!u)
                return;
        p = hashmap_remove(u->pushed, UINT64_TO_PTR((uint64_t)pid));
        if (!p)
                return;
        for (size_t i = 0; i < p->n_refs; i++)
                slot_unref(u, p->refs[i]);
        pushed_free(p);
}

void unwind_tables_get_stats(const UnwindTables *u, UnwindTablesStats *ret)
{
        PushedTarget *p;
        Slot *s;

        if (!u) {
                *ret = (UnwindTablesStats){};
                return;
        }
        *ret = u->stats;
        ret->tables = 0;
        ret->memory = sizeof(*u) + unwind_arena_memory(u->arena) + hashmap_memory(u->by_key) +
                      hashmap_memory(u->by_file) + hashmap_memory(u->pushed) + u->cap_queue * sizeof(Slot *);
        HASHMAP_FOREACH(s, u->by_key) {
                ret->tables += s->state == SLOT_LOADED;
                ret->memory += sizeof(*s) + strlen(s->key) + 1 + (s->name ? strlen(s->name) + 1 : 0) +
                               (s->table ? unwind_table_size(s->table) : 0);
        }
        HASHMAP_FOREACH(p, u->pushed)
                ret->memory += sizeof(*p) + p->n_refs * sizeof(Slot *);
        ret->bytes = (uint64_t)unwind_arena_used(u->arena) * sizeof(struct vprof_unwind_entry);
}
