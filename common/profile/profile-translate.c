/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One profile's function and stack ids in another, by name (profile-internal.h): what lets a merge or a window
 * count several targets into one table. Nothing here runs per sample. */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile-internal.h"

int profile_translation_init(ProfileTranslation *t, const Profile *src, Profile *dst)
{
        assert(t);
        assert(src);
        assert(dst);

        *t = (ProfileTranslation){ .src = src, .dst = dst };
        if (src == dst || src->frequency != dst->frequency)
                return -EINVAL;
        t->functions = calloc(MAX(src->n_functions, (size_t)1), sizeof(uint32_t));
        t->stacks = calloc(MAX(src->n_stacks, (size_t)1), sizeof(uint32_t));
        if (!t->functions || !t->stacks) {
                profile_translation_done(t);
                return -ENOMEM;
        }
        return 0;
}

void profile_translation_done(ProfileTranslation *t)
{
        free(t->functions);
        free(t->stacks);
        free(t->frames);
        *t = (ProfileTranslation){};
}

/* A reserved row of src ("[other]", "[unknown]") is the same row of dst: dst's own counting and limits must find
 * it as theirs. */
static void keep_reserved(const ProfileTranslation *t, uint32_t src_id, uint32_t dst_id)
{
        if (src_id == t->src->other_id && t->dst->other_id == UINT32_MAX)
                t->dst->other_id = dst_id;
        if (src_id == t->src->unknown_id && t->dst->unknown_id == UINT32_MAX)
                t->dst->unknown_id = dst_id;
}

int profile_translate_function(ProfileTranslation *t, uint32_t id, uint32_t *ret_id)
{
        const Function *f, *existing;
        const char *module;
        uint32_t dst_id;
        int r;

        if (id >= t->src->n_functions)
                return -EINVAL;
        if (t->functions[id] > 0) {
                *ret_id = t->functions[id] - 1;
                return 0;
        }
        f = t->src->functions[id];
        if (f->counted != f) { /* a line of a function: the function first */
                r = profile_translate_function(t, f->counted->id, &dst_id);
                if (r < 0)
                        return r;
        }
        module = t->src->modules[f->key.module_id]->name;
        existing = profile_find_function(t->dst, module, f->name, f->key.inlined, f->key.line);
        if (existing)
                dst_id = existing->id;
        else {
                r = profile_function_append(t->dst, module, f->name, f->key.inlined, f->key.line, &dst_id);
                if (r < 0)
                        return r;
        }
        keep_reserved(t, id, dst_id);
        if (f->mangled && !t->dst->functions[dst_id]->mangled) {
                r = profile_set_mangled(t->dst, dst_id, f->mangled);
                if (r < 0)
                        return r;
        }
        t->functions[id] = dst_id + 1;
        *ret_id = dst_id;
        return 0;
}

int profile_translate_frames(ProfileTranslation *t, const uint32_t *frames, size_t n, const uint32_t **ret)
{
        int r;

        if (n > t->allocated_frames) {
                size_t a = MAX(n, (size_t)128);
                uint32_t *p = realloc(t->frames, a * sizeof(uint32_t));
                if (!p)
                        return -ENOMEM;
                t->frames = p;
                t->allocated_frames = a;
        }
        for (size_t i = 0; i < n; i++) {
                r = profile_translate_function(t, frames[i], &t->frames[i]);
                if (r < 0)
                        return r;
        }
        *ret = t->frames;
        return 0;
}

int profile_translate_stack(ProfileTranslation *t, uint32_t stack_id, Stack **ret)
{
        const uint32_t *frames;
        const Stack *s;
        StackKey key;
        Stack *d;
        int r;

        if (stack_id >= t->src->n_stacks)
                return -EINVAL;
        if (t->stacks[stack_id] > 0) {
                *ret = t->dst->stack_by_id[t->stacks[stack_id] - 1];
                return 0;
        }
        s = t->src->stack_by_id[stack_id];
        r = profile_translate_frames(t, s->frames, s->key.n_frames, &frames);
        if (r < 0)
                return r;
        key = (StackKey){ .frames = frames, .n_frames = s->key.n_frames };
        d = hashmap_get(t->dst->stacks, &key);
        if (!d) {
                r = profile_stack_insert(t->dst, frames, s->key.n_frames, s->n_kernel_frames, &d);
                if (r < 0)
                        return r;
        }
        t->stacks[stack_id] = d->id + 1;
        *ret = d;
        return 0;
}

int profile_translate_thread_names(ProfileTranslation *t)
{
        const Thread *thread;
        int r;

        HASHMAP_FOREACH(thread, t->src->threads) {
                if (!thread->name)
                        continue;
                r = profile_thread_rename(t->dst, thread->tid, thread->name);
                if (r < 0 && r != -ENOENT)
                        return r;
        }
        return 0;
}
