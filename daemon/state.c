/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>

#include "file-util.h"
#include "log.h"
#include "manager.h"
#include "profile-state.h"
#include "state-record.h"
#include "state.h"

/* One file for all targets rather than one each: a snapshot is then one consistent picture that a single
 * rename replaces whole (a target detached since the last one is simply not in it, and no stray files need
 * reconciling at start), and it costs one fsync however many targets there are, which keeps a periodic
 * snapshot short on the event loop. A snapshot whose bytes did not change is not written at all. */
#define STATE_FILE "targets.state"
#define STATE_FILE_REJECTED "targets.state.rejected"
#define STATE_MAGIC "VPROFDST"

#define TAG_BOOT STATE_TAG('B', 'O', 'O', 'T')
#define BOOT_ID_SIZE 37 /* a UUID and its NUL */

/* After an attach, a detach or a reset: soon, but a burst of calls makes one save. */
#define REQUESTED_SAVE_DELAY_USEC (1000 * 1000)

struct StateStore {
        Manager *manager;
        char *directory;
        int dir_fd; /* locked: one daemon per directory */
        sd_event_source *timer;
        uint64_t snapshot_usec; /* 0: no periodic snapshots */
        bool saved;             /* saved_crc and saved_size describe the file */
        uint32_t saved_crc;
        size_t saved_size;
};

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
        sd_event_source_disable_unref(s->timer);
        safe_close(s->dir_fd);
        free(s->directory);
        free(s);
        return NULL;
}

static uint64_t now_usec(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* The running kernel's boot: a PID and a start time only name a process within one boot. "" when unknown,
 * which matches no saved boot. */
static void read_boot_id(char id[BOOT_ID_SIZE])
{
        _cleanup_fclose_ FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");

        id[0] = '\0';
        if (!f || !fgets(id, BOOT_ID_SIZE, f))
                id[0] = '\0';
        id[strcspn(id, "\n")] = '\0';
}

static int compare_targets(const void *a, const void *b)
{
        const Target *x = *(Target *const *)a, *y = *(Target *const *)b;
        return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* The whole state in memory; by PID, so that unchanged targets make unchanged bytes. */
static int serialize(StateStore *s, void **ret, size_t *ret_size, uint32_t *ret_crc, size_t *ret_n)
{
        Manager *m = s->manager;
        _cleanup_free_ Target **targets = calloc(MAX(hashmap_size(m->targets), (size_t)1), sizeof(Target *));
        char boot_id[BOOT_ID_SIZE];
        StateWriter w;
        size_t n = 0, section;
        Target *t;

        if (!targets)
                return -ENOMEM;
        HASHMAP_FOREACH(t, m->targets)
                targets[n++] = t;
        qsort(targets, n, sizeof(Target *), compare_targets);

        read_boot_id(boot_id);
        state_writer_init(&w, STATE_MAGIC);
        section = state_begin_section(&w, TAG_BOOT, STATE_SECTION_REQUIRED);
        state_write_string(&w, boot_id);
        state_end_section(&w, section);
        for (size_t i = 0; i < n; i++)
                state_record_write(targets[i], &w);
        *ret_n = n;
        return state_writer_finish(&w, ret, ret_size, ret_crc);
}

static int save(StateStore *s, int level)
{
        _cleanup_free_ void *data = NULL;
        uint64_t start, serialized, written;
        size_t size, n;
        uint32_t crc;
        int r;

        start = now_usec();
        manager_sync(s->manager);
        r = serialize(s, &data, &size, &crc, &n);
        if (r < 0)
                return log_warning_errno(r, "Failed to save the targets' tables: %m");
        serialized = now_usec();
        if (s->saved && crc == s->saved_crc && size == s->saved_size) {
                log_full_errno(level, 0, "Saved state unchanged (%zu target%s, %zu bytes, %.1f ms to serialize).", n,
                               n == 1 ? "" : "s", size, (double)(serialized - start) / 1000);
                return 0;
        }
        r = write_file_atomic(s->dir_fd, STATE_FILE, data, size, 0600);
        if (r < 0) {
                s->saved = false;
                return log_warning_errno(r, "Failed to save the targets' tables to %s/%s: %m", s->directory,
                                         STATE_FILE);
        }
        written = now_usec();
        s->saved = true;
        s->saved_crc = crc;
        s->saved_size = size;
        log_full_errno(level, 0, "Saved %zu target%s to %s/%s: %zu bytes in %.1f ms (%.1f ms to serialize).", n,
                       n == 1 ? "" : "s", s->directory, STATE_FILE, size, (double)(written - start) / 1000,
                       (double)(serialized - start) / 1000);
        return 0;
}

int state_store_save(StateStore *s)
{
        return s ? save(s, LOG_INFO) : 0;
}

static int on_snapshot_timer(sd_event_source *source, uint64_t usec _unused_, void *userdata)
{
        StateStore *s = userdata;

        (void)save(s, LOG_DEBUG);
        if (s->snapshot_usec == 0)
                return sd_event_source_set_enabled(source, SD_EVENT_OFF);
        (void)sd_event_source_set_time_relative(source, s->snapshot_usec);
        return sd_event_source_set_enabled(source, SD_EVENT_ONESHOT);
}

void state_store_request_save(StateStore *s)
{
        uint64_t now, next;

        if (!s || !s->timer || sd_event_now(s->manager->event, CLOCK_MONOTONIC, &now) < 0)
                return;
        if (sd_event_source_get_enabled(s->timer, NULL) > 0 && sd_event_source_get_time(s->timer, &next) >= 0 &&
            next <= now + REQUESTED_SAVE_DELAY_USEC)
                return; /* due soon anyway */
        if (sd_event_source_set_time(s->timer, now + REQUESTED_SAVE_DELAY_USEC) >= 0)
                (void)sd_event_source_set_enabled(s->timer, SD_EVENT_ONESHOT);
}

/* Install the saved tables in t, attached a moment ago: nothing was counted in its own yet, and the frame
 * caches, which hold ids of that profile, are empty. */
static void install_profile(Target *t, SavedTarget *saved)
{
        profile_free(t->profile);
        t->profile = TAKE_PTR(saved->profile);
        profile_set_limits(t->profile, t->manager->max_functions, t->manager->max_stacks);
        frame_cache_clear(t->user_frames);
        frame_cache_clear(t->kernel_frames);
        t->attach_usec = saved->attach_usec;
}

/* Keep the tables of a target whose process is gone, as an exited target. Its tables count no more, so they keep
 * the frequency they were counted at, whatever this daemon's: every count stays exact (the bus converts values to
 * time with each target's own frequency). */
static int keep_exited(StateStore *s, SavedTarget *saved, const char *why)
{
        _cleanup_(target_freep) Target *t = NULL;
        uint32_t frequency = profile_frequency(saved->profile);
        pid_t pid = saved->info.tgid;
        char counted_at[64] = "";
        int r;

        r = target_new_exited(s->manager, &saved->info, saved->flags, saved->attach_uid, saved->attach_usec,
                              &saved->profile, &t);
        if (r >= 0)
                r = manager_add_exited(s->manager, t);
        if (r < 0)
                return log_warning_errno(r, "Dropping the saved tables of %d (%s), which %s: %s", (int)pid,
                                         saved->info.comm, why,
                                         r == -E2BIG ? "the target limit is reached" : strerror(-r));
        if (frequency != s->manager->config.frequency)
                snprintf(counted_at, sizeof(counted_at), ", its counts at the %" PRIu32 " Hz they were taken at",
                         frequency);
        log_info("Restored the tables of %d (%s), which %s: kept as exited%s.", (int)pid, saved->info.comm, why,
                 counted_at);
        TAKE_PTR(t);
        return 0;
}

/* 1: attached again; 0: kept as exited; negative: dropped. */
static int restore_target(StateStore *s, SavedTarget *saved, bool same_boot)
{
        Manager *m = s->manager;
        pid_t pid = saved->info.tgid, tgid;
        uint32_t saved_frequency = profile_frequency(saved->profile);
        Target *t;
        int r;

        if (saved->exited)
                return keep_exited(s, saved, "had exited");
        if (!same_boot)
                return keep_exited(s, saved, "ran during another boot");

        /* The normal attach, as the caller who attached it: the authorization rules hold as they would for
         * that caller now. The start time is checked on the pinned process. */
        r = manager_attach_started(m, pid, saved->info.start_time, saved->attach_uid, saved->flags, &t, &tgid);
        switch (r) {
        case 0:
                if (saved_frequency != m->config.frequency) {
                        /* Its tables go on counting, in one unit: converting beats refusing, the counts keep their
                         * meaning in CPU time. Rounded down, so that every part stays within its whole. */
                        profile_state_convert_frequency(saved->profile, m->config.frequency);
                        log_notice("The tables of %d (%s) were counted at %" PRIu32 " Hz and vprofd samples at %" PRIu32
                                   " Hz now: its sample counts are converted to %" PRIu32 " Hz (times %" PRIu32
                                   "/%" PRIu32 ", rounded down), its off-CPU times stay.",
                                   (int)pid, saved->info.comm, saved_frequency, m->config.frequency,
                                   m->config.frequency, m->config.frequency, saved_frequency);
                }
                install_profile(t, saved);
                log_info("Restored %d (%s): attached again, counting on from %" PRIu64 " samples.", (int)pid,
                         t->info.comm, profile_total(t->profile));
                return 1;
        case -ESRCH:
                return keep_exited(s, saved, "has exited");
        case -ESTALE:
        case -ECHILD:
        case -EINVAL:
                /* The PID now names another process (or a thread, or a kernel thread). */
                return keep_exited(s, saved, "has exited (its PID is another process's now)");
        case -EPERM:
                return log_warning_errno(r, "Not attaching %d (%s) again: UID %u may no longer profile it (it "
                                         "changed user or became non-dumpable); its saved tables are dropped.",
                                         (int)pid, saved->info.comm, (unsigned)saved->attach_uid);
        default:
                return log_warning_errno(r, "Failed to attach %d (%s) again; its saved tables are dropped: %s",
                                         (int)pid, saved->info.comm,
                                         r == -E2BIG ? "the target limit is reached" : strerror(-r));
        }
}

static void reject_file(StateStore *s, int error, const char *reason)
{
        log_error_errno(error, "Ignoring the saved state %s/%s: %s; kept as %s.", s->directory, STATE_FILE,
                        reason, STATE_FILE_REJECTED);
        if (renameat(s->dir_fd, STATE_FILE, s->dir_fd, STATE_FILE_REJECTED) < 0)
                log_warning_errno(negative_errno(), "Failed to rename %s: %m", STATE_FILE);
}

/* The BOOT section, and a check that no section it does not know is required. */
static int read_boot(StateReader list, char boot_id[BOOT_ID_SIZE])
{
        bool have_boot = false;
        StateSection s;
        const char *id;
        int k;

        while ((k = state_next_section(&list, &s)) > 0) {
                if (s.tag == STATE_TAG_TARGET)
                        continue;
                if (s.tag != TAG_BOOT) {
                        k = state_skip_section(&s);
                        if (k < 0)
                                return k;
                        continue;
                }
                if (have_boot)
                        return state_fail(&list, "two boot sections");
                k = state_read_string(&s.contents, BOOT_ID_SIZE - 1, false, &id);
                if (k >= 0)
                        k = state_check_end(&s.contents);
                if (k < 0)
                        return k;
                strcpy(boot_id, id);
                have_boot = true;
        }
        if (k < 0)
                return k;
        return have_boot ? 0 : state_fail(&list, "no boot section");
}

/* Named by PID and command when that part of the record is whole, in a sentence either way. */
static void log_dropped_record(StateStore *s, StateReader record, int error, const char *reason)
{
        ProcInfo info;

        if (error == -ENOMEM) {
                log_error("Dropping a saved target of %s/%s: out of memory.", s->directory, STATE_FILE);
                return;
        }
        if (state_record_read_info(record, &info) >= 0)
                log_error("Dropping the saved tables of %d (%s) in %s/%s: its record is damaged (%s).",
                          (int)info.tgid, info.comm, s->directory, STATE_FILE, reason ?: strerror(-error));
        else
                log_error("Dropping a saved target in %s/%s whose record is damaged before its PID (%s).",
                          s->directory, STATE_FILE, reason ?: strerror(-error));
}

static void restore(StateStore *s)
{
        _cleanup_free_ void *data = NULL;
        char saved_boot[BOOT_ID_SIZE], boot[BOOT_ID_SIZE];
        unsigned attached = 0, exited = 0, dropped = 0;
        const char *error = NULL;
        StateReader list;
        StateSection section;
        size_t size;
        bool same_boot;
        int r;

        r = read_file_full(s->dir_fd, STATE_FILE, STATE_FILE_MAX, &data, &size);
        if (r == -ENOENT) {
                log_debug("No saved state in %s.", s->directory);
                return;
        }
        if (r == -EFBIG) {
                reject_file(s, r, "larger than the limit of 1 GiB");
                return;
        }
        if (r < 0) {
                log_error_errno(r, "Failed to read the saved state %s/%s: %m", s->directory, STATE_FILE);
                return;
        }
        r = state_open(data, size, STATE_MAGIC, &error, &list);
        if (r >= 0)
                r = read_boot(list, saved_boot);
        if (r < 0) {
                reject_file(s, r, error ?: strerror(-r));
                return;
        }

        read_boot_id(boot);
        same_boot = boot[0] && strcmp(boot, saved_boot) == 0;
        while (state_next_section(&list, &section) > 0) {
                const char *record_error = NULL;
                SavedTarget saved = {};
                StateReader record;

                if (section.tag != STATE_TAG_TARGET)
                        continue;
                /* Each record on its own: a bad one costs only itself. */
                section.contents.error = &record_error;
                record = section.contents; /* read again to name it if refused */
                r = state_record_read(&section.contents, &saved);
                if (r < 0) {
                        log_dropped_record(s, record, r, record_error);
                        dropped++;
                        continue;
                }
                r = restore_target(s, &saved, same_boot);
                saved_target_done(&saved);
                if (r > 0)
                        attached++;
                else if (r == 0)
                        exited++;
                else
                        dropped++;
        }
        log_info("Restored the saved state of %s%s: %u target%s attached again, %u kept as exited, %u dropped.",
                 s->directory, same_boot ? "" : " (from another boot)", attached, attached == 1 ? "" : "s", exited,
                 dropped);
}

static int store_new(Manager *m, const char *directory, uint64_t snapshot_usec, StateStore **ret)
{
        _cleanup_(state_store_freep) StateStore *s = calloc(1, sizeof(*s));
        int r;

        if (!s)
                return -ENOMEM;
        s->dir_fd = -1;
        s->manager = m;
        s->snapshot_usec = snapshot_usec;
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
                                       250 * 1000, on_snapshot_timer, s);
        if (r < 0)
                return r;
        if (snapshot_usec == 0)
                (void)sd_event_source_set_enabled(s->timer, SD_EVENT_OFF);
        *ret = TAKE_PTR(s);
        return 0;
}

void state_store_setup(Manager *m, const char *directory, uint64_t snapshot_usec)
{
        StateStore *s;
        int r;

        if (!directory[0]) {
                log_info("No state directory: the tables will not outlive the daemon.");
                return;
        }
        r = store_new(m, directory, snapshot_usec, &s);
        if (r < 0) {
                log_warning_errno(r, "Cannot use the state directory %s, the tables will not outlive the daemon: %s",
                                  directory, r == -EBUSY ? "another vprofd uses it" : strerror(-r));
                return;
        }
        restore(s);
        m->state = s;
        /* The file now says what this daemon has: an old snapshot is never applied twice. */
        if (save(s, LOG_DEBUG) < 0 && unlinkat(s->dir_fd, STATE_FILE, 0) < 0 && errno != ENOENT)
                log_error_errno(negative_errno(), "Failed to remove the old state %s/%s: %m", directory,
                                STATE_FILE);
        if (snapshot_usec > 0)
                log_info("State directory %s: snapshots every %" PRIu64 " s and when stopping.", directory,
                         snapshot_usec / 1000000);
        else
                log_info("State directory %s: saved when stopping.", directory);
}
