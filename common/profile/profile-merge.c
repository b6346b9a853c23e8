/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One profile's counts added into another's, by name (profile_merge() in profile.h): the tables of a service,
 * whose processes are each a target with its own profile. */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>

#include "profile-internal.h"

static bool values_zero(const ProfileValues *v)
{
        return !v->user_samples && !v->kernel_samples && !v->blocked_ns && !v->preempted_ns;
}

static bool counts_zero(const Counts *c)
{
        return c->inclusive == 0 && c->exclusive == 0 && values_zero(&c->inclusive_values) &&
               values_zero(&c->exclusive_values);
}

static void counts_add(Counts *c, const Counts *add)
{
        c->inclusive += add->inclusive;
        c->exclusive += add->exclusive;
        profile_values_add(&c->inclusive_values, &add->inclusive_values);
        profile_values_add(&c->exclusive_values, &add->exclusive_values);
}

/* Everything of src in dst that can fail, before any count moves: functions, modules, stacks and threads. */
static int define(ProfileTranslation *t, uint32_t *module_ids)
{
        const Profile *src = t->src;
        const Thread *thread;
        uint32_t id;
        Stack *stack;
        int r = 0;

        for (size_t i = 0; i < src->n_functions; i++)
                if (!counts_zero(&src->functions[i]->counts)) {
                        r = profile_translate_function(t, (uint32_t)i, &id);
                        if (r < 0)
                                return r;
                }
        for (size_t i = 0; i < src->n_modules; i++)
                if (!counts_zero(&src->modules[i]->counts)) {
                        r = profile_intern_module(t->dst, src->modules[i]->name, &module_ids[i]);
                        if (r < 0)
                                return r;
                }
        for (size_t i = 0; i < src->n_stacks; i++) {
                r = profile_translate_stack(t, (uint32_t)i, &stack);
                if (r < 0)
                        return r;
        }
        HASHMAP_FOREACH(thread, src->threads)
                if (!profile_count_thread(t->dst, thread->tid, thread->name, &r))
                        return r;
        return 0;
}

int profile_merge(Profile *dst, const Profile *src)
{
        _cleanup_(profile_translation_done) ProfileTranslation t = {};
        _cleanup_free_ uint32_t *module_ids = NULL;
        const Thread *thread;
        int r;

        assert(dst);
        assert(src);

        r = profile_translation_init(&t, src, dst);
        if (r < 0)
                return r;
        module_ids = calloc(MAX(src->n_modules, (size_t)1), sizeof(uint32_t));
        if (!module_ids)
                return -ENOMEM;
        r = define(&t, module_ids);
        if (r < 0)
                return r;

        /* The samples of src are not those of dst (another process): every count is a sum. */
        for (size_t i = 0; i < src->n_functions; i++)
                if (t.functions[i] > 0)
                        counts_add(&dst->functions[t.functions[i] - 1]->counts, &src->functions[i]->counts);
        for (size_t i = 0; i < src->n_modules; i++)
                if (!counts_zero(&src->modules[i]->counts))
                        counts_add(&dst->modules[module_ids[i]]->counts, &src->modules[i]->counts);
        for (size_t i = 0; i < src->n_stacks; i++) {
                Stack *d = dst->stack_by_id[t.stacks[i] - 1];
                d->samples += src->stack_by_id[i]->samples;
                profile_values_add(&d->values, &src->stack_by_id[i]->values);
        }
        HASHMAP_FOREACH(thread, src->threads) {
                Thread *d = hashmap_get(dst->threads, UINT64_TO_PTR(thread->tid));
                d->samples += thread->samples;
                profile_values_add(&d->values, &thread->values);
        }
        dst->total += src->total;
        profile_values_add(&dst->total_values, &src->total_values);
        dst->other_stack_samples += src->other_stack_samples;
        profile_values_add(&dst->other_stack_values, &src->other_stack_values);
        return 0;
}
