/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "output-util.h"
#include "output.h"
#include "status-memory.h"
#include "time-util.h"

/* NSPID, the PID in the target's own namespace, only shows when some target is in a container. */
static const ColumnSpec target_columns[] = {
        {"PID", 1, SCOLS_FL_RIGHT},
        {"NSPID", 1, SCOLS_FL_RIGHT},
        {"COMMAND", 0.3, SCOLS_FL_TRUNC},
        {"STATE", 1, 0},
        {"SAMPLES", 1, SCOLS_FL_RIGHT},
        {"OFF-CPU", 1, 0},
        {"ATTACHED", 1, 0},
        {"GROUP", 0.3, SCOLS_FL_TRUNC},
};

/* The row's keys: the schema's columns of its kind, all but the text table's own. */
static int report_row_to_json(ReportKind kind, const ReportRow *row, json_object **ret)
{
        _cleanup_json_ json_object *o = NULL;
        const TableColumn *c;
        size_t n;
        int r = 0;

        c = table_schema_columns((TableKind)kind, &n);
        if (!c)
                return -EINVAL;
        o = json_object_new_object();
        if (!o)
                return -ENOMEM;
        for (size_t i = 0; r >= 0 && i < n; i++)
                if (!(c[i].flags & TABLE_COLUMN_TEXT_ONLY))
                        r = json_add_cell(o, &c[i], row);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(o);
        return 0;
}

int report_table_to_json(const ReportTable *t, uint32_t pid, json_object **ret)
{
        _cleanup_json_ json_object *o = NULL;
        json_object *rows;
        int r;

        o = json_object_new_object();
        if (!o)
                return -ENOMEM;
        if (pid > 0) {
                r = json_add_u64(o, "pid", pid);
                if (r < 0)
                        return r;
        }
        r = json_add_u64(o, "total_samples", t->total_samples);
        if (r >= 0)
                r = json_add_window(o, t);
        if (r < 0)
                return r;
        rows = json_object_new_array_ext((int)MIN(t->n_rows, (size_t)INT32_MAX));
        r = json_add(o, table_kind_to_string((TableKind)t->kind), rows);
        if (r < 0)
                return r;

        for (size_t i = 0; i < t->n_rows; i++) {
                json_object *row;

                r = report_row_to_json(t->kind, &t->rows[i], &row);
                if (r < 0)
                        return r;
                if (json_object_array_add(rows, row) < 0) {
                        json_object_put(row);
                        return -ENOMEM;
                }
        }

        *ret = TAKE_PTR(o);
        return 0;
}

static int report_table_json(const ReportTable *t, uint32_t pid, OutputFlags flags)
{
        _cleanup_json_ json_object *o = NULL;
        int r;

        r = report_table_to_json(t, pid, &o);
        if (r < 0)
                return r;
        return print_json(o, flags);
}

static bool report_table_has_symbols(const ReportTable *t)
{
        for (size_t i = 0; i < t->n_rows; i++)
                if (t->rows[i].symbols)
                        return true;
        return false;
}

/* What to do about a module whose frames go unnamed: its names come from its exported symbols only, or none. */
static void print_symbol_hints(const ReportTable *t)
{
        for (size_t i = 0; i < t->n_rows; i++) {
                const ReportSymbols *s = t->rows[i].symbols;

                if (!s || s->unnamed_samples == 0 || !s->source ||
                    (strcmp(s->source, "dynsym") != 0 && strcmp(s->source, "none") != 0))
                        continue;
                if (s->build_id && s->debuginfod && strcmp(s->debuginfod, "pending") == 0)
                        printf("%s: %.1f%% of its own samples in unnamed code; its debug symbols (build-id %s) are "
                               "being downloaded from debuginfod: later samples get their names.\n",
                               t->rows[i].name, profile_percent(s->unnamed_samples, s->samples),
                               s->build_id);
                else if (s->build_id)
                        printf("%s: %.1f%% of its own samples in unnamed code; its debug symbols (build-id %s) are "
                               "not installed%s: try its -dbgsym or -debuginfo package.\n",
                               t->rows[i].name, profile_percent(s->unnamed_samples, s->samples),
                               s->build_id, s->debuginfod ? " nor on the debuginfod servers" : "");
                else
                        printf("%s: %.1f%% of its own samples in unnamed code, and it has no build-id to find its "
                               "debug symbols by.\n",
                               t->rows[i].name, profile_percent(s->unnamed_samples, s->samples));
        }
}

int output_report_table(const ReportTable *t, uint32_t pid, const char *note, OutputFlags flags)
{
        _cleanup_(scols_unref_tablep) struct libscols_table *tb = NULL;
        const TableColumn *all, *shown[16];
        ColumnSpec specs[16];
        size_t n_all, n;
        int r;

        if (flags & OUTPUT_JSON)
                return report_table_json(t, pid, flags);

        all = table_schema_columns((TableKind)t->kind, &n_all);
        if (!all || n_all > ELEMENTSOF(shown))
                return -EINVAL;
        n = table_text_columns(all, n_all, flags, report_table_has_symbols(t), shown);
        for (size_t i = 0; i < n; i++)
                specs[i] = column_spec_from_schema(shown[i], false);
        r = table_new(specs, n, flags, &tb);
        if (r < 0)
                return r;

        for (size_t i = 0; i < t->n_rows; i++) {
                char text[16][1024]; /* a number, or a name with its "(inlined)" mark */
                const char *cells[16];

                for (size_t j = 0; j < n; j++)
                        cells[j] = table_cell_text(shown[j], &t->rows[i], false, 0, text[j], sizeof(text[j]));
                r = table_add_line(tb, n, cells);
                if (r < 0)
                        return r;
        }

        if (!(flags & OUTPUT_NO_HEADINGS)) {
                char window[128];

                /* The percents are of the window's samples: its total and its real length go together. */
                format_window(window, sizeof(window), t);
                if (note)
                        printf("Total samples: %" PRIu64 "%s (%s)\n", t->total_samples, window, note);
                else
                        printf("Total samples: %" PRIu64 "%s\n", t->total_samples, window);
        }
        r = scols_print_table(tb);
        if (r < 0 || t->kind != REPORT_MODULES || (flags & OUTPUT_NO_HEADINGS))
                return r;
        print_symbol_hints(t);
        return 0;
}

static int targets_json(const TargetList *l, const GroupList *groups, OutputFlags flags)
{
        _cleanup_json_ json_object *o = NULL;
        json_object *array;
        int r;

        o = json_object_new_object();
        if (!o)
                return -ENOMEM;
        array = json_object_new_array();
        r = json_add(o, "targets", array);
        if (r < 0)
                return r;

        for (size_t i = 0; i < l->n_targets; i++) {
                const TargetInfo *t = &l->targets[i];
                _cleanup_json_ json_object *e = NULL;

                e = json_object_new_object();
                if (!e)
                        return -ENOMEM;
                r = json_add_u64(e, "pid", t->pid);
                if (r >= 0)
                        r = json_add_string(e, "command", t->command);
                if (r >= 0)
                        r = json_add_string(e, "state", t->state);
                if (r >= 0)
                        r = json_add_u64(e, "samples", t->samples);
                if (r >= 0)
                        r = json_add_u64(e, "attached_usec", t->attached_usec);
                if (r >= 0)
                        r = json_add_bool(e, "off_cpu", t->flags & VPROF_ATTACH_OFF_CPU);
                if (r >= 0)
                        r = json_add_u64(e, "ns_pid", t->ns_pid);
                if (r >= 0)
                        r = json_add_u64(e, "frequency", t->frequency);
                if (r >= 0)
                        r = json_add_string(e, "group", t->group && t->group[0] ? t->group : NULL);
                if (r < 0)
                        return r;
                if (json_object_array_add(array, e) < 0)
                        return -ENOMEM;
                TAKE_PTR(e);
        }
        r = json_add(o, "groups", groups_to_json(groups));
        if (r < 0)
                return r;

        return print_json(o, flags);
}

int output_targets(const TargetList *l, const GroupList *groups, OutputFlags flags)
{
        _cleanup_(scols_unref_tablep) struct libscols_table *tb = NULL;
        bool namespaced = false, grouped = false;
        int r;

        if (flags & OUTPUT_JSON)
                return targets_json(l, groups, flags);

        for (size_t i = 0; i < l->n_targets; i++) {
                namespaced = namespaced || l->targets[i].ns_pid != l->targets[i].pid;
                grouped = grouped || (l->targets[i].group && l->targets[i].group[0]);
        }
        r = table_new(target_columns, ELEMENTSOF(target_columns), flags, &tb);
        if (r < 0)
                return r;
        if (!namespaced)
                scols_column_set_flags(scols_table_get_column(tb, 1),
                                       scols_column_get_flags(scols_table_get_column(tb, 1)) | SCOLS_FL_HIDDEN);
        /* GROUP, only when some target is a member of one. */
        if (!grouped)
                scols_column_set_flags(scols_table_get_column(tb, 7),
                                       scols_column_get_flags(scols_table_get_column(tb, 7)) | SCOLS_FL_HIDDEN);

        for (size_t i = 0; i < l->n_targets; i++) {
                const TargetInfo *t = &l->targets[i];
                char pid[16], ns_pid[16], samples[32], attached[64];

                snprintf(pid, sizeof(pid), "%" PRIu32, t->pid);
                snprintf(ns_pid, sizeof(ns_pid), "%" PRIu32, t->ns_pid);
                snprintf(samples, sizeof(samples), "%" PRIu64, t->samples);
                format_timestamp(attached, sizeof(attached), t->attached_usec);
                r = table_add_line(tb, 8,
                                   (const char *const[]){pid, ns_pid, t->command, t->state, samples,
                                                         t->flags & VPROF_ATTACH_OFF_CPU ? "yes" : "no",
                                                         attached, t->group && t->group[0] ? t->group : "-"});
                if (r < 0)
                        return r;
        }

        r = scols_print_table(tb);
        if (r < 0 || !groups || groups->n_groups == 0)
                return r;
        /* The groups after their members. */
        putchar('\n');
        return output_groups(groups, flags);
}

/* The unwind tables' and the walks' counters, by their JSON keys. */
static const struct {
        const char *key;
        size_t offset;
} status_unwind_counters[] = {
        {"unwind_table_size", offsetof(DaemonStatus, unwind_table_size)},
        {"unwind_table_used", offsetof(DaemonStatus, unwind_table_used)},
        {"unwind_tables_compiled", offsetof(DaemonStatus, unwind_tables_compiled)},
        {"unwind_tables_evicted", offsetof(DaemonStatus, unwind_tables_evicted)},
        {"unwind_tables_too_big", offsetof(DaemonStatus, unwind_tables_too_big)},
        {"unwind_tables_failed", offsetof(DaemonStatus, unwind_tables_failed)},
        {"unwind_files_without_cfi", offsetof(DaemonStatus, unwind_files_without_cfi)},
        {"unwind_compile_usec", offsetof(DaemonStatus, unwind_compile_usec)},
        {"unwind_mappings_dropped", offsetof(DaemonStatus, unwind_mappings_dropped)},
        {"unwind_files_prefetched", offsetof(DaemonStatus, unwind_files_prefetched)},
        {"unwind_attaches_unfinished", offsetof(DaemonStatus, unwind_attaches_unfinished)},
        {"python_interpreters", offsetof(DaemonStatus, python_interpreters)},
        {"python_not_interpreters", offsetof(DaemonStatus, python_not_interpreters)},
        {"python_unsupported", offsetof(DaemonStatus, python_unsupported)},
        {"python_push_failed", offsetof(DaemonStatus, python_push_failed)},
        {"python_detect_usec", offsetof(DaemonStatus, python_detect_usec)},
        {"python_walks_complete", offsetof(DaemonStatus, python_walks_complete)},
        {"python_walks_no_tstate", offsetof(DaemonStatus, python_walks_no_tstate)},
        {"python_walks_bad_frame", offsetof(DaemonStatus, python_walks_bad_frame)},
        {"python_walks_faulted", offsetof(DaemonStatus, python_walks_faulted)},
        {"python_walks_at_depth_limit", offsetof(DaemonStatus, python_walks_at_depth_limit)},
        {"python_frames_walked", offsetof(DaemonStatus, python_frames_walked)},
        {"python_frames_recorded", offsetof(DaemonStatus, python_frames_recorded)},
        {"python_frames_dropped", offsetof(DaemonStatus, python_frames_dropped)},
        {"python_frames_unknown", offsetof(DaemonStatus, python_frames_unknown)},
        {"walks_complete", offsetof(DaemonStatus, walks_complete)},
        {"walks_ended_at_frame_pointer", offsetof(DaemonStatus, walks_end_fp)},
        {"walks_at_depth_limit", offsetof(DaemonStatus, walks_depth)},
        {"walks_faulted", offsetof(DaemonStatus, walks_fault)},
        {"walks_bad", offsetof(DaemonStatus, walks_bad)},
        {"walks_fell_back", offsetof(DaemonStatus, walks_fell_back)},
        {"walks_outside_cfi", offsetof(DaemonStatus, walks_no_row)},
        {"walks_bad_rule", offsetof(DaemonStatus, walks_bad_rule)},
        {"walks_unknown_pc", offsetof(DaemonStatus, walks_unknown_pc)},
        {"walks_no_mappings", offsetof(DaemonStatus, walks_no_mappings)},
        {"self_check_agreed", offsetof(DaemonStatus, self_check_agreed)},
        {"self_check_disagreed", offsetof(DaemonStatus, self_check_disagreed)},
        {"self_check_unchecked", offsetof(DaemonStatus, self_check_unchecked)},
        {"self_check_lost", offsetof(DaemonStatus, self_check_lost)},
        {"members_refused", offsetof(DaemonStatus, members_refused)},
        {"mapping_changes", offsetof(DaemonStatus, mapping_changes)},
        {"mapping_changes_lost", offsetof(DaemonStatus, mapping_changes_lost)},
        {"mapping_changes_stale", offsetof(DaemonStatus, mapping_changes_stale)},
        {"mapping_changes_missed", offsetof(DaemonStatus, mapping_changes_missed)},
        {"samples_with_stale_mappings", offsetof(DaemonStatus, samples_stale_mappings)},
        {"pending_walks_copied", offsetof(DaemonStatus, pending_walks_copied)},
        {"pending_walks_finished", offsetof(DaemonStatus, pending_walks_finished)},
        {"pending_walks_unfinished", offsetof(DaemonStatus, pending_walks_unfinished)},
        {"pending_walks_over_rate", offsetof(DaemonStatus, pending_walks_over_rate)},
        {"pending_walks_no_room", offsetof(DaemonStatus, pending_walks_no_room)},
};

static int status_json(const DaemonStatus *s, OutputFlags flags)
{
        _cleanup_json_ json_object *o = NULL;
        int r;

        o = json_object_new_object();
        if (!o)
                return -ENOMEM;

        r = json_add_string(o, "version", s->version);
        if (r >= 0)
                r = json_add_string(o, "event", s->event);
        if (r >= 0)
                r = json_add_string(o, "event_reason", s->event_reason);
        if (r >= 0)
                r = json_add_string(o, "unwind_walk", s->unwind_walk);
        if (r >= 0)
                r = json_add_string(o, "python_unsupported_version", s->python_unsupported_version ?: "");
        if (r >= 0)
                r = json_add_u64(o, "python_targets", s->python_targets);
        if (r >= 0)
                r = json_add_u64(o, "frequency", s->frequency);
        if (r >= 0)
                r = json_add_u64(o, "cpus", s->cpus);
        if (r >= 0)
                r = json_add_u64(o, "targets", s->targets);
        if (r >= 0)
                r = json_add_u64(o, "samples_seen", s->samples_seen);
        if (r >= 0)
                r = json_add_u64(o, "samples_kept", s->samples_kept);
        if (r >= 0)
                r = json_add_u64(o, "samples_discarded", s->samples_discarded);
        if (r >= 0)
                r = json_add_u64(o, "samples_lost", s->samples_lost);
        if (r >= 0)
                r = json_add_u64(o, "stack_errors", s->stack_errors);
        if (r >= 0)
                r = json_add_u64(o, "stacks_truncated", s->stacks_truncated);
        if (r >= 0)
                r = json_add_u64(o, "samples_unclaimed", s->samples_unclaimed);
        if (r >= 0)
                r = json_add_bool(o, "off_cpu_default", s->off_cpu_default);
        if (r >= 0)
                r = json_add_u64(o, "off_cpu_blocked", s->off_cpu_blocked);
        if (r >= 0)
                r = json_add_u64(o, "off_cpu_preempted", s->off_cpu_preempted);
        if (r >= 0)
                r = json_add_u64(o, "off_cpu_lost", s->off_cpu_lost);
        if (r >= 0)
                r = json_add_u64(o, "off_cpu_unclaimed", s->off_cpu_unclaimed);
        if (r >= 0)
                r = json_add_u64(o, "max_targets", s->max_targets);
        if (r >= 0)
                r = json_add_u64(o, "max_targets_per_user", s->max_targets_per_user);
        if (r >= 0)
                r = json_add_u64(o, "exited_target_retention_sec", s->exited_retention_usec / USEC_PER_SEC);
        if (r >= 0)
                r = json_add_u64(o, "max_functions_per_target", s->max_functions);
        if (r >= 0)
                r = json_add_u64(o, "max_stacks_per_target", s->max_stacks);
        if (r >= 0)
                r = json_add_u64(o, "window_seconds", s->window_seconds);
        if (r >= 0)
                r = json_add_u64(o, "window_memory", s->window_memory);
        if (r >= 0)
                r = json_add_u64(o, "samples_in_other_functions", s->other_function_samples);
        if (r >= 0)
                r = json_add_u64(o, "samples_in_other_stacks", s->other_stack_samples);
        if (r >= 0)
                r = json_add_u64(o, "targets_at_limit", s->targets_at_limit);
        if (r >= 0)
                r = json_add_u64(o, "symbol_cache_size", s->symbol_cache_size);
        if (r >= 0)
                r = json_add_u64(o, "symbol_cache_used", s->symbol_cache_used);
        if (r >= 0)
                r = json_add_u64(o, "symbol_files_skipped", s->symbol_files_skipped);
        if (r >= 0)
                r = json_add_u64(o, "symbol_files_damaged", s->symbol_files_damaged);
        if (r >= 0)
                r = json_add_u64(o, "inline_expansions", s->inline_expansions);
        if (r >= 0)
                r = json_add_u64(o, "inline_addresses", s->inline_addresses);
        if (r >= 0)
                r = json_add_u64(o, "inline_files_size", s->inline_files_size);
        if (r >= 0)
                r = json_add_u64(o, "unwind_tables_loaded", s->unwind_tables_loaded);
        if (r >= 0)
                r = json_add_u64(o, "unwind_self_check", s->unwind_self_check);
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(status_unwind_counters); i++)
                r = json_add_u64(o, status_unwind_counters[i].key,
                                 *(const uint64_t *)((const uint8_t *)s + status_unwind_counters[i].offset));
        if (r >= 0)
                r = status_memory_json(o, &s->memory);
        if (r < 0)
                return r;

        return print_json(o, flags);
}

/* Three lines: the tables, how the walks ended, and what made them take frame-pointer steps. */
static void format_unwind_status(const DaemonStatus *s, char *tables, size_t tables_size, char *walks,
                                 size_t walks_size, char *fell_back, size_t fell_back_size)
{
        if (s->unwind_table_size == 0) {
                snprintf(tables, tables_size, "off");
                return;
        }
        snprintf(tables, tables_size,
                 "%" PRIu32 " loaded, %.1f of %.0f MiB; %" PRIu64 " compiled in %.1f ms, %" PRIu64
                 " evicted, %" PRIu64 " too big, %" PRIu64 " failed, %" PRIu64 " files without CFI; %" PRIu64
                 " asked for before any fallback, %" PRIu64 " attaches before all were",
                 s->unwind_tables_loaded, (double)s->unwind_table_used / (1 << 20),
                 (double)s->unwind_table_size / (1 << 20), s->unwind_tables_compiled,
                 (double)s->unwind_compile_usec / 1000.0, s->unwind_tables_evicted, s->unwind_tables_too_big,
                 s->unwind_tables_failed, s->unwind_files_without_cfi, s->unwind_files_prefetched,
                 s->unwind_attaches_unfinished);
        snprintf(walks, walks_size,
                 "%" PRIu64 " complete, %" PRIu64 " ended at a frame pointer, %" PRIu64 " at the depth limit, %" PRIu64
                 " faulted, %" PRIu64 " bad",
                 s->walks_complete, s->walks_end_fp, s->walks_depth, s->walks_fault, s->walks_bad);
        snprintf(fell_back, fell_back_size,
                 "%" PRIu64 " without a table, %" PRIu64 " outside CFI, %" PRIu64 " at a rule not walked, %" PRIu64
                 " at an unknown address, %" PRIu64 " without mappings; %" PRIu64 " mappings not pushed",
                 s->walks_fell_back, s->walks_no_row, s->walks_bad_rule, s->walks_unknown_pc,
                 s->walks_no_mappings, s->unwind_mappings_dropped);
}

int output_status(const DaemonStatus *s, OutputFlags flags)
{
        char frequency[32], cpus[16], targets[16], seen[32], kept[32], discarded[32], lost[32],
                stack_errors[32], truncated[32], unclaimed[32], off_cpu_blocked[32], off_cpu_preempted[32],
                off_cpu_lost[32], off_cpu_unclaimed[32], limits[96], folded[96], symbols[192], exited[64], tables[256],
                walks[192], fell_back[192], self_check[160], windows[96], members_refused[32], memory[256],
                mapping_changes[192], pending_walks[192], python[256], python_walks[384];
        const struct {
                const char *key;
                const char *value;
        } lines[] = {
                {"Version", s->version},
                {"Event", s->event},
                {"Event reason", s->event_reason},
                {"Frequency", frequency},
                {"CPUs", cpus},
                {"Targets", targets},
                {"Samples seen", seen},
                {"Samples kept", kept},
                {"Samples discarded", discarded},
                {"Samples lost", lost},
                {"Stack errors", stack_errors},
                {"Stacks truncated", truncated},
                {"Samples unclaimed", unclaimed},
                /* Attach follows the default; attach --off-cpu tracks off-CPU time anyway. */
                {"Off-CPU", s->off_cpu_default ? "on for every target" : "per target (default off)"},
                {"Off-CPU blocked", off_cpu_blocked},
                {"Off-CPU preempted", off_cpu_preempted},
                {"Off-CPU lost", off_cpu_lost},
                {"Off-CPU unclaimed", off_cpu_unclaimed},
                {"Limits", limits},
                {"Exited targets", exited},
                {"Time windows", windows},
                {"Members refused", members_refused},
                {"Past the limits", folded},
                {"Symbol cache", s->symbol_cache_size ? symbols : NULL},
                {"Unwind", s->unwind_walk},
                {"Unwind tables", tables},
                {"Stack walks", s->unwind_table_size ? walks : NULL},
                {"Walk fallbacks", s->unwind_table_size ? fell_back : NULL},
                {"Walk self-check", s->unwind_self_check ? self_check : "off"},
                {"Mapping changes", mapping_changes},
                {"Python", python},
                {"Python walks", python_walks},
                {"Walks awaiting tables", s->unwind_table_size ? pending_walks : NULL},
                {"Memory", memory},
        };
        int width = 0;

        if (flags & OUTPUT_JSON)
                return status_json(s, flags);

        snprintf(frequency, sizeof(frequency), "%" PRIu32 " Hz", s->frequency);
        snprintf(cpus, sizeof(cpus), "%" PRIu32, s->cpus);
        snprintf(targets, sizeof(targets), "%" PRIu32, s->targets);
        snprintf(seen, sizeof(seen), "%" PRIu64, s->samples_seen);
        snprintf(kept, sizeof(kept), "%" PRIu64, s->samples_kept);
        snprintf(discarded, sizeof(discarded), "%" PRIu64, s->samples_discarded);
        snprintf(lost, sizeof(lost), "%" PRIu64, s->samples_lost);
        snprintf(stack_errors, sizeof(stack_errors), "%" PRIu64, s->stack_errors);
        snprintf(truncated, sizeof(truncated), "%" PRIu64, s->stacks_truncated);
        snprintf(unclaimed, sizeof(unclaimed), "%" PRIu64, s->samples_unclaimed);
        snprintf(off_cpu_blocked, sizeof(off_cpu_blocked), "%" PRIu64, s->off_cpu_blocked);
        snprintf(off_cpu_preempted, sizeof(off_cpu_preempted), "%" PRIu64, s->off_cpu_preempted);
        snprintf(off_cpu_lost, sizeof(off_cpu_lost), "%" PRIu64, s->off_cpu_lost);
        snprintf(off_cpu_unclaimed, sizeof(off_cpu_unclaimed), "%" PRIu64, s->off_cpu_unclaimed);
        snprintf(members_refused, sizeof(members_refused), "%" PRIu64, s->members_refused);
        if (s->max_targets_per_user > 0)
                snprintf(limits, sizeof(limits),
                         "%" PRIu32 " targets, %" PRIu32 " per user; %" PRIu32 " functions, %" PRIu32
                         " stacks per target", s->max_targets, s->max_targets_per_user, s->max_functions,
                         s->max_stacks);
        else
                snprintf(limits, sizeof(limits),
                         "%" PRIu32 " targets; %" PRIu32 " functions, %" PRIu32 " stacks per target", s->max_targets,
                         s->max_functions, s->max_stacks);
        if (s->exited_retention_usec > 0)
                snprintf(exited, sizeof(exited), "kept until detached or needed, %" PRIu64 " s at most",
                         s->exited_retention_usec / USEC_PER_SEC);
        else
                snprintf(exited, sizeof(exited), "kept until detached or needed");
        if (s->window_seconds > 0)
                snprintf(windows, sizeof(windows), "the last %" PRIu32 " s of each target, %.1f MiB in use",
                         s->window_seconds, (double)s->window_memory / (1 << 20));
        else
                snprintf(windows, sizeof(windows), "off (WindowSeconds=0): tables since the attach only");
        snprintf(symbols, sizeof(symbols),
                 "%.1f of %.0f MiB; %" PRIu64 " files skipped, %" PRIu64 " damaged; inlined functions at %" PRIu64
                 " of %" PRIu64 " new addresses (%.1f MiB of DWARF in memory)",
                 (double)s->symbol_cache_used / (1 << 20), (double)s->symbol_cache_size / (1 << 20),
                 s->symbol_files_skipped, s->symbol_files_damaged, s->inline_addresses, s->inline_expansions,
                 (double)s->inline_files_size / (1 << 20));
        snprintf(folded, sizeof(folded),
                 "%" PRIu32 " targets; samples in [other] functions %" PRIu64 ", in no stack %" PRIu64,
                 s->targets_at_limit, s->other_function_samples, s->other_stack_samples);
        format_unwind_status(s, tables, sizeof(tables), walks, sizeof(walks), fell_back, sizeof(fell_back));
        status_memory_format(&s->memory, memory, sizeof(memory));
        snprintf(mapping_changes, sizeof(mapping_changes),
                 "%" PRIu64 " seen, %" PRIu64 " lost, %" PRIu64 " read late, %" PRIu64 " missed; %" PRIu64
                 " samples named with later mappings",
                 s->mapping_changes, s->mapping_changes_lost, s->mapping_changes_stale, s->mapping_changes_missed,
                 s->samples_stale_mappings);
        snprintf(pending_walks, sizeof(pending_walks),
                 "%" PRIu64 " sent with their stack: %" PRIu64 " finished by the daemon, %" PRIu64
                 " as walked; %" PRIu64 " over the rate, %" PRIu64 " without room",
                 s->pending_walks_copied, s->pending_walks_finished, s->pending_walks_unfinished,
                 s->pending_walks_over_rate, s->pending_walks_no_room);
        snprintf(python, sizeof(python),
                 "%" PRIu32 " targets walkable; %" PRIu64 " interpreters recognized in %.1f ms, %" PRIu64
                 " files named so that are none, %" PRIu64 " targets of a version not walked%s%s%s, %" PRIu64
                 " not pushed",
                 s->python_targets, s->python_interpreters, (double)s->python_detect_usec / 1000.0,
                 s->python_not_interpreters, s->python_unsupported,
                 s->python_unsupported_version && s->python_unsupported_version[0] ? " (last: " : "",
                 s->python_unsupported_version ?: "",
                 s->python_unsupported_version && s->python_unsupported_version[0] ? ")" : "",
                 s->python_push_failed);
        snprintf(python_walks, sizeof(python_walks),
                 "%" PRIu64 " complete (%" PRIu64 " frames), %" PRIu64 " without a thread state, %" PRIu64
                 " at a bad frame, %" PRIu64 " faulted, %" PRIu64 " at the depth limit; %" PRIu64
                 " frames in the samples (%" PRIu64 " unknown), %" PRIu64 " left out",
                 s->python_walks_complete, s->python_frames_walked, s->python_walks_no_tstate,
                 s->python_walks_bad_frame, s->python_walks_faulted, s->python_walks_at_depth_limit,
                 s->python_frames_recorded, s->python_frames_unknown, s->python_frames_dropped);
        snprintf(self_check, sizeof(self_check),
                 "1 in %" PRIu32 " samples: %" PRIu64 " agreed, %" PRIu64 " disagreed, %" PRIu64 " unchecked, %" PRIu64
                 " lost",
                 s->unwind_self_check, s->self_check_agreed, s->self_check_disagreed, s->self_check_unchecked,
                 s->self_check_lost);

        for (size_t i = 0; i < ELEMENTSOF(lines); i++)
                width = MAX(width, (int)strlen(lines[i].key));
        /* Keys right-aligned on the colon, as timedatectl and hostnamectl do. */
        for (size_t i = 0; i < ELEMENTSOF(lines); i++)
                printf("%*s: %s\n", width, lines[i].key, lines[i].value ?: "n/a");
        return 0;
}
