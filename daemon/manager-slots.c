/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>

#include "log.h"
#include "manager-slots.h"
#include "time-util.h"

#define ANY_OWNER ((uid_t)-1)

/* Root has no limit but MaxTargets=. */
static bool has_user_limit(ManagerSlots *s, uid_t owner)
{
        return owner != 0 && s->max_targets_per_user > 0;
}

void manager_slots_done(ManagerSlots *s)
{
        s->retention_timer = sd_event_source_disable_unref(s->retention_timer);
}

int manager_slots_check(ManagerSlots *s, uid_t owner)
{
        unsigned owner_running = 0;
        Target *t;

        /* The user's own limit first: when both are full, that is the one the user can do something about. */
        if (has_user_limit(s, owner)) {
                HASHMAP_FOREACH(t, s->running)
                        if (t->owner_uid == owner)
                                owner_running++;
                if (owner_running >= s->max_targets_per_user)
                        return -EDQUOT;
        }
        if (hashmap_size(s->running) >= s->max_targets)
                return -E2BIG;
        return 0;
}

static unsigned count_owned(ManagerSlots *s, uid_t owner)
{
        unsigned n = 0;
        Target *t;

        HASHMAP_FOREACH(t, s->targets)
                if (t->owner_uid == owner)
                        n++;
        return n;
}

/* The exited target of owner (ANY_OWNER: of anyone) that exited longest ago, the PID deciding between equal
 * times; NULL when there is none. */
static Target *oldest_exited(ManagerSlots *s, uid_t owner)
{
        Target *t, *oldest = NULL;

        HASHMAP_FOREACH(t, s->targets) {
                if (!t->exited || (owner != ANY_OWNER && t->owner_uid != owner))
                        continue;
                if (!oldest || t->exit_usec < oldest->exit_usec ||
                    (t->exit_usec == oldest->exit_usec && t->pid < oldest->pid))
                        oldest = t;
        }
        return oldest;
}

static uint64_t now_realtime(ManagerSlots *s)
{
        uint64_t now = 0;

        /* Before the loop runs (a restore), the current time. */
        (void)sd_event_now(s->event, CLOCK_REALTIME, &now);
        return now;
}

static uint64_t seconds_since(uint64_t now, uint64_t then)
{
        return now > then ? (now - then) / USEC_PER_SEC : 0;
}

static void evict(ManagerSlots *s, Target *victim, const Target *newcomer, TargetGroup *group, const char *setting,
                  uint32_t limit)
{
        /* Logged once per cause: a target attached by a call (which the log says too), or a group's first. */
        if (!group || ++group->evicted == 1)
                log_info("Detached the exited target %d (%s) of UID %u, which exited %" PRIu64 " s ago, to make "
                         "room for PID %d of UID %u (%s=%" PRIu32 ")%s%s%s.", (int)victim->pid, victim->info.comm,
                         (unsigned)victim->owner_uid, seconds_since(now_realtime(s), victim->exit_usec),
                         (int)newcomer->pid, (unsigned)newcomer->owner_uid, setting, limit,
                         group ? "; further evictions for the members of " : "", group ? group->spec : "",
                         group ? " are counted (ListGroups)" : "");
        else
                log_debug("Detached the exited target %d (%s) to make room for PID %d of %s (%s=%" PRIu32 ").",
                          (int)victim->pid, victim->info.comm, (int)newcomer->pid, group->spec, setting, limit);
        s->remove(s->userdata, victim); /* exited: out of the sampler already, nothing can fail */
}

void manager_slots_make_room(ManagerSlots *s, const Target *newcomer, TargetGroup *group)
{
        uid_t owner = newcomer->owner_uid;
        Target *victim;

        /* While, not if: a limit lowered across a restart can leave a user above it. The timer stays as it is
         * (manager_slots_exited()). */
        while (has_user_limit(s, owner) && count_owned(s, owner) >= s->max_targets_per_user &&
               (victim = oldest_exited(s, owner)))
                evict(s, victim, newcomer, group, "MaxTargetsPerUser", s->max_targets_per_user);
        while (hashmap_size(s->targets) >= s->max_targets && (victim = oldest_exited(s, ANY_OWNER)))
                evict(s, victim, newcomer, group, "MaxTargets", s->max_targets);
}

bool manager_slots_expired(ManagerSlots *s, const Target *t)
{
        return t->exited && s->exited_retention_usec > 0 &&
               t->exit_usec + s->exited_retention_usec <= now_realtime(s);
}

/* The timer at the time of the exited target that exited longest ago; off without one. */
static void update_retention(ManagerSlots *s)
{
        Target *oldest = oldest_exited(s, ANY_OWNER);
        int r;

        if (!oldest)
                r = sd_event_source_set_enabled(s->retention_timer, SD_EVENT_OFF);
        else {
                r = sd_event_source_set_time(s->retention_timer, oldest->exit_usec + s->exited_retention_usec);
                if (r >= 0)
                        r = sd_event_source_set_enabled(s->retention_timer, SD_EVENT_ONESHOT);
        }
        if (r < 0)
                log_warning_errno(r, "Failed to set the retention timer of exited targets: %m");
}

void manager_slots_exited(ManagerSlots *s, const Target *t)
{
        uint64_t at = t->exit_usec + s->exited_retention_usec, armed;
        int r;

        if (!s->retention_timer)
                return;
        if (sd_event_source_get_enabled(s->retention_timer, NULL) > 0 &&
            sd_event_source_get_time(s->retention_timer, &armed) >= 0 && armed <= at)
                return;
        r = sd_event_source_set_time(s->retention_timer, at);
        if (r >= 0)
                r = sd_event_source_set_enabled(s->retention_timer, SD_EVENT_ONESHOT);
        if (r < 0)
                log_warning_errno(r, "Failed to set the retention timer of exited targets: %m");
}

static int on_retention_timer(sd_event_source *source _unused_, uint64_t usec _unused_, void *userdata)
{
        ManagerSlots *s = userdata;
        _cleanup_free_ Target **expired = calloc(MAX(hashmap_size(s->targets), (size_t)1), sizeof(Target *));
        uint64_t now = now_realtime(s);
        size_t n = 0;
        Target *t;

        if (!expired) {
                log_warning_errno(-ENOMEM, "Out of memory: exited targets stay past their retention time for now.");
                return 0;
        }
        /* Collected first: the map changes as they go. */
        HASHMAP_FOREACH(t, s->targets)
                if (manager_slots_expired(s, t))
                        expired[n++] = t;
        for (size_t i = 0; i < n; i++) {
                TargetGroup *g = expired[i]->group;

                /* A group's members at debug level, counted in the group: their exits were, too, and thousands
                 * of them would fill the log; the group's detach sums them up. */
                if (g)
                        g->expired++;
                log_full_errno(g ? LOG_DEBUG : LOG_INFO, 0,
                               "Detached the exited target %d (%s) of UID %u: it exited %" PRIu64
                               " s ago (ExitedTargetRetentionSec=%" PRIu64 ").", (int)expired[i]->pid,
                               expired[i]->info.comm, (unsigned)expired[i]->owner_uid,
                               seconds_since(now, expired[i]->exit_usec), s->exited_retention_usec / USEC_PER_SEC);
                s->remove(s->userdata, expired[i]);
        }
        /* Early, when the target it was set for was detached: set again for the next one. */
        update_retention(s);
        if (n > 0)
                s->expired(s->userdata);
        return 0;
}

int manager_slots_enable_retention(ManagerSlots *s, uint64_t usec)
{
        int r;

        if (usec == 0)
                return -EINVAL;
        s->exited_retention_usec = usec;
        /* The wall clock, as the exit times outlive the daemon; to the second is close enough. */
        r = sd_event_add_time(s->event, &s->retention_timer, CLOCK_REALTIME, 0, USEC_PER_SEC, on_retention_timer, s);
        if (r < 0)
                return r;
        update_retention(s);
        return 0;
}
