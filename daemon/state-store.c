/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "file-util.h"
#include "log.h"
#include "manager.h"
#include "state-internal.h"
#include "state-restore.h"
#include "state-store.h"
#include "target-serialize.h"
#include "time-util.h"

/* One file for all targets rather than one each: a snapshot is then one consistent picture that a single
 * rename replaces whole (a target detached since the last one is simply not in it, and no stray files need
 * reconciling at start), and it costs one fsync however many targets there are, which keeps a periodic
 * snapshot short on the event loop. A snapshot whose targets did not change is not written at all. Between
 * snapshots the journal (journal.h) keeps what the tables gained, a record a second. */

/* After an attach, a detach or a reset: soon, but a burst of calls makes one save. */
#define REQUESTED_SAVE_DELAY_USEC USEC_PER_SEC
/* A journal larger than this and than the snapshot it continues is folded into a new snapshot: replaying it
 * would take longer than reading one. */
#define JOURNAL_COMPACT_MIN ((uint64_t)16 << 20)

int state_directory_choose(const char *arg, char **ret)
{
        const char *e = getenv("STATE_DIRECTORY");
        char *d;

        if (arg)
                d = strdup(arg);
        else if (e && *e)
                d = strndup(e, strcspn(e, ":")); /* one entry per StateDirectory= name */
        else
                d = strdup(STATE_DIRECTORY_DEFAULT);
        if (!d)
                return -ENOMEM;
        *ret = d;
        return 0;
}

StateStore *state_store_free(StateStore *s)
{
        if (!s)
                return NULL;
        if (s->manager->observer.userdata == s)
                s->manager->observer = (ManagerObserver){};
        sd_event_source_disable_unref(s->timer);
        journal_free(s->journal);
        safe_close(s->dir_fd);
        free(s->directory);
        free(s);
        return NULL;
}

static int compare_targets(const void *a, const void *b)
{
        const Target *x = *(Target *const *)a, *y = *(Target *const *)b;
        return x->pid < y->pid ? -1 : x->pid > y->pid;
}

typedef struct Snapshot {
        void *data;
        size_t size;
        uint32_t crc;          /* of the file, as its header has it: the journal names it */
        uint32_t targets_crc;  /* of the targets' part, which says whether anything changed */
        size_t targets_size;
        size_t n;
} Snapshot;

/* The whole state in memory: SAVE first, so that the rest (by PID: unchanged targets make unchanged bytes) can be
 * compared with the last snapshot's. */
static int serialize(StateStore *s, uint32_t flags, Snapshot *ret)
{
        Manager *m = s->manager;
        _cleanup_free_ Target **targets = calloc(MAX(hashmap_size(m->targets), (size_t)1), sizeof(Target *));
        char boot_id[BOOT_ID_SIZE];
        size_t n = 0, section, start;
        Snapshot snap = {};
        SectionWriter w;
        Target *t;
        int r;

        if (!targets)
                return -ENOMEM;
        HASHMAP_FOREACH(t, m->targets)
                targets[n++] = t;
        qsort(targets, n, sizeof(Target *), compare_targets);

        state_read_boot_id(boot_id);
        section_writer_init(&w, STATE_MAGIC);
        section = section_begin(&w, TAG_SAVE, 0);
        section_write_u64(&w, s->generation + 1);
        section_write_u64(&w, now_usec(CLOCK_REALTIME));
        section_write_u32(&w, flags);
        section_write_u32(&w, 0);
        section_end(&w, section);
        start = w.size;
        section = section_begin(&w, TAG_BOOT, SECTION_REQUIRED);
        section_write_string(&w, boot_id);
        section_end(&w, section);
        for (size_t i = 0; i < n; i++)
                target_serialize_write(targets[i], &w);
        r = section_writer_finish(&w, &snap.data, &snap.size, &snap.crc);
        if (r < 0)
                return r;
        snap.targets_crc = section_crc32(0, (const uint8_t *)snap.data + start, snap.size - start);
        snap.targets_size = snap.size - start;
        snap.n = n;
        *ret = snap;
        return 0;
}

/* The journal's record of the deltas gathered, now. */
static void flush_journal(StateStore *s)
{
        if (!s->journal)
                return;
        s->journal_ok = journal_flush(s->journal) >= 0;
        s->next_flush_usec = now_usec(CLOCK_MONOTONIC) + s->journal_usec;
}

/* A snapshot of the tables as they are when a second has just closed (manager_close_second()): every delta
 * begun at the tables the snapshot has, so that the journal it starts continues it exactly. Nothing may drain
 * between the close and this. */
static int save_closed(StateStore *s, int level, bool final)
{
        _cleanup_free_ void *data = NULL;
        uint64_t start, serialized, written;
        Snapshot snap;
        int r;

        start = now_usec(CLOCK_MONOTONIC);
        r = serialize(s, final ? SAVE_CLEAN_STOP : 0, &snap);
        if (r < 0)
                return log_full_errno(final ? LOG_ERR : LOG_WARNING, r, "Failed to save the targets' tables: %m");
        data = snap.data;
        serialized = now_usec(CLOCK_MONOTONIC);
        /* The final save is written whatever changed: it says that the daemon stopped cleanly. */
        if (!final && s->saved && snap.targets_crc == s->saved_targets_crc &&
            snap.targets_size == s->saved_targets_size) {
                log_full_errno(level, 0, "Saved state unchanged (%zu target%s, %zu bytes, %.1f ms to serialize).",
                               snap.n, snap.n == 1 ? "" : "s", snap.size,
                               (double)(serialized - start) / USEC_PER_MSEC);
                return 0;
        }
        r = write_file_atomic(s->dir_fd, STATE_FILE, data, snap.size, 0600);
        if (r < 0)
                return log_full_errno(final ? LOG_ERR : LOG_WARNING, r,
                                      "Failed to save the targets' tables to %s/%s: %m", s->directory, STATE_FILE);
        written = now_usec(CLOCK_MONOTONIC);
        s->generation++;
        s->saved = true;
        s->saved_targets_crc = snap.targets_crc;
        s->saved_targets_size = snap.targets_size;
        s->saved_size = snap.size;
        s->saved_usec = written;
        /* What the journal held is in the snapshot now: a new journal continues it. */
        if (s->journal)
                (void)journal_start(s->journal, s->generation, snap.crc);
        log_full_errno(level, 0, "Saved %zu target%s to %s/%s: %zu bytes in %.1f ms (%.1f ms to serialize).",
                       snap.n, snap.n == 1 ? "" : "s", s->directory, STATE_FILE, snap.size,
                       (double)(written - start) / USEC_PER_MSEC,
                       (double)(serialized - start) / USEC_PER_MSEC);
        return 0;
}

/* The second closes now (the ring buffer drained, the deltas to the journal and the windows), then the
 * snapshot. */
static int save(StateStore *s, int level, bool final)
{
        s->in_save = true;
        manager_close_second(s->manager);
        s->in_save = false;
        flush_journal(s);
        return save_closed(s, level, final);
}

int state_store_save(StateStore *s)
{
        return s ? save(s, LOG_INFO, false) : 0;
}

int state_store_stop(StateStore *s)
{
        char age[64];
        int r;

        if (!s)
                return 0;
        /* The last second goes into the journal first (save() closes it): should the snapshot fail, the next
         * start still has it all. */
        r = save(s, LOG_INFO, true);
        if (r >= 0)
                return 0;
        if (journal_writing(s->journal) && s->journal_ok)
                log_error("The tables were not saved when stopping: the final snapshot failed; the journal %s/%s "
                          "has their counts up to now, which the next start replays.", s->directory, JOURNAL_FILE);
        else if (s->saved) {
                state_format_age(age, sizeof(age), now_usec(CLOCK_MONOTONIC) - s->saved_usec);
                log_error("The tables were not saved when stopping: neither the final snapshot nor the journal could "
                          "be written; the next start restores the last snapshot, of %s ago, and the journal after "
                          "it up to its last whole record.", age);
        } else
                log_error("The tables were not saved when stopping: neither the final snapshot nor the journal could "
                          "be written, and this daemon never saved them.");
        return r;
}

static int on_snapshot_timer(sd_event_source *source, uint64_t usec _unused_, void *userdata)
{
        StateStore *s = userdata;

        /* While the manager closes seconds, the snapshot waits for the next one (within a second): a save
         * closes the second it is in, which would cut a window's bucket short. */
        if (manager_closing(s->manager)) {
                s->save_due = true;
                s->save_due_usec = 0; /* the next close */
        } else
                (void)save(s, LOG_DEBUG, false);
        if (s->snapshot_usec == 0)
                return sd_event_source_set_enabled(source, SD_EVENT_OFF);
        (void)sd_event_source_set_time_relative(source, s->snapshot_usec);
        return sd_event_source_set_enabled(source, SD_EVENT_ONESHOT);
}

/* The targets changed (attach, detach, reset): save within a second, coalescing bursts. */
static void request_save(StateStore *s)
{
        uint64_t now, next;

        /* The manager closes a second every second: the snapshot goes with the first close a second after the
         * request or later (on_second_closed()), so within two. A request while one waits changes nothing. */
        if (manager_closing(s->manager)) {
                if (!s->save_due) {
                        s->save_due = true;
                        s->save_due_usec = now_usec(CLOCK_MONOTONIC) + REQUESTED_SAVE_DELAY_USEC;
                }
                return;
        }
        if (!s->timer || sd_event_now(s->manager->event, CLOCK_MONOTONIC, &now) < 0)
                return;
        if (sd_event_source_get_enabled(s->timer, NULL) > 0 && sd_event_source_get_time(s->timer, &next) >= 0 &&
            next <= now + REQUESTED_SAVE_DELAY_USEC)
                return; /* due soon anyway */
        if (sd_event_source_set_time(s->timer, now + REQUESTED_SAVE_DELAY_USEC) >= 0)
                (void)sd_event_source_set_enabled(s->timer, SD_EVENT_ONESHOT);
}

static bool any_running_target(Manager *m)
{
        Target *t;

        HASHMAP_FOREACH(t, m->targets)
                if (!t->exited)
                        return true;
        return false;
}

/* A second closed (manager_close_second()): its deltas were gathered for the journal, which writes its record
 * when due (every JournalIntervalSec), then a snapshot when one waits or the journal outgrew the last one. */
static void on_second_closed(void *userdata)
{
        StateStore *s = userdata;

        if (s->in_save)
                return; /* save() goes on itself */
        /* Half a second early counts: the closes come a second apart, give or take the timer's accuracy. */
        if (s->journal && now_usec(CLOCK_MONOTONIC) + USEC_PER_SEC / 2 >= s->next_flush_usec)
                flush_journal(s);
        if (journal_writing(s->journal) && journal_size(s->journal) > MAX(JOURNAL_COMPACT_MIN, (uint64_t)s->saved_size)) {
                s->save_due = true;
                s->save_due_usec = 0;
        }
        if (!s->save_due)
                return;
        /* Closes come a second apart, give or take the timer's 50 ms: one a little early is the one due. */
        if (now_usec(CLOCK_MONOTONIC) + 100 * USEC_PER_MSEC >= s->save_due_usec) {
                s->save_due = false;
                (void)save_closed(s, LOG_DEBUG, false);
        } else if (!any_running_target(s->manager) && s->timer) {
                /* This was the last close (no target runs): the snapshot timer takes the save over. */
                s->save_due = false;
                if (sd_event_source_set_time(s->timer, s->save_due_usec) >= 0)
                        (void)sd_event_source_set_enabled(s->timer, SD_EVENT_ONESHOT);
        }
}

static void on_delta_closed(void *userdata, const Target *t)
{
        StateStore *s = userdata;

        if (s->journal)
                journal_add_delta(s->journal, t);
}

/* The ManagerObserver: the manager calls these as its targets change. */
static void on_targets_changed(void *userdata)
{
        request_save(userdata);
}

/* t was reset or is being detached: the journal says so at once, a snapshot follows within a second. */
static void on_target_reset(void *userdata, const Target *t)
{
        StateStore *s = userdata;

        if (journal_writing(s->journal))
                (void)journal_write_reset(s->journal, t);
        request_save(s);
}

static void on_target_detached(void *userdata, const Target *t)
{
        StateStore *s = userdata;

        if (journal_writing(s->journal))
                (void)journal_write_detach(s->journal, t);
        request_save(s);
}

static int store_new(Manager *m, const char *directory, uint64_t snapshot_usec, uint64_t journal_usec,
                     StateStore **ret)
{
        _cleanup_(state_store_freep) StateStore *s = calloc(1, sizeof(*s));
        int r;

        if (!s)
                return -ENOMEM;
        s->dir_fd = -1;
        s->manager = m;
        s->snapshot_usec = snapshot_usec;
        s->journal_usec = journal_usec;
        s->directory = strdup(directory);
        if (!s->directory)
                return -ENOMEM;
        r = mkdir_p(directory, 0700);
        if (r < 0)
                return r;
        s->dir_fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (s->dir_fd < 0)
                return negative_errno();
        /* Two daemons on one directory would restore each other's targets and overwrite each other's saves. */
        if (flock(s->dir_fd, LOCK_EX | LOCK_NB) < 0)
                return errno == EWOULDBLOCK ? -EBUSY : negative_errno();
        /* The same timer for periodic and requested saves; off until one is due. */
        r = sd_event_add_time_relative(m->event, &s->timer, CLOCK_MONOTONIC, snapshot_usec ?: UINT64_C(1),
                                       250 * USEC_PER_MSEC, on_snapshot_timer, s);
        if (r < 0)
                return r;
        if (snapshot_usec == 0)
                (void)sd_event_source_set_enabled(s->timer, SD_EVENT_OFF);
        if (journal_usec > 0) {
                r = journal_new(s->dir_fd, directory, &s->journal);
                if (r < 0)
                        return r;
                /* The manager's timer that closes the seconds writes it (manager_close_second()): every
                 * second with windows, else every journal interval. */
                m->journal_usec = journal_usec;
        }
        *ret = TAKE_PTR(s);
        return 0;
}

void state_store_setup(Manager *m, const char *directory, uint64_t snapshot_usec, uint64_t journal_usec,
                       StateStore **ret)
{
        StateStore *s;
        char journal[128] = "";
        int r;

        *ret = NULL;
        if (!directory[0]) {
                log_info("No state directory: the tables will not outlive the daemon.");
                return;
        }
        r = store_new(m, directory, snapshot_usec, journal_usec, &s);
        if (r < 0) {
                log_warning_errno(r, "Cannot use the state directory %s, the tables will not outlive the daemon: %s",
                                  directory, r == -EBUSY ? "another vprofd uses it" : strerror(-r));
                return;
        }
        /* Targets restored and attached from here on keep deltas for the journal. */
        m->keep_deltas = s->journal != NULL;
        s->generation = state_restore(s);
        /* From now on: what the restore attached is in the snapshot below. */
        m->observer = (ManagerObserver){
                .targets_changed = on_targets_changed,
                .target_reset = on_target_reset,
                .target_detached = on_target_detached,
                .delta_closed = on_delta_closed,
                .second_closed = on_second_closed,
                .userdata = s,
        };
        *ret = s;
        /* The file now says what this daemon has: an old snapshot (or journal) is never applied twice. */
        if (save(s, LOG_DEBUG, false) < 0) {
                if (unlinkat(s->dir_fd, STATE_FILE, 0) < 0 && errno != ENOENT)
                        log_error_errno(negative_errno(), "Failed to remove the old state %s/%s: %m", directory,
                                        STATE_FILE);
                if (unlinkat(s->dir_fd, JOURNAL_FILE, 0) < 0 && errno != ENOENT)
                        log_error_errno(negative_errno(), "Failed to remove the old journal %s/%s: %m", directory,
                                        JOURNAL_FILE);
        }
        /* Without a journal, an old one would only continue an old snapshot. */
        if (!s->journal && unlinkat(s->dir_fd, JOURNAL_FILE, 0) >= 0)
                log_info("Removed the journal %s/%s: this daemon keeps none.", directory, JOURNAL_FILE);
        if (journal_usec > 0)
                snprintf(journal, sizeof(journal), ", and a journal record every %" PRIu64 " s between them",
                         journal_usec / USEC_PER_SEC);
        if (snapshot_usec > 0)
                log_info("State directory %s: snapshots every %" PRIu64 " s and when stopping%s.", directory,
                         snapshot_usec / USEC_PER_SEC, journal);
        else
                log_info("State directory %s: saved when stopping%s.", directory, journal);
}
