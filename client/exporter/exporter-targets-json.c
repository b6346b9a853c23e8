/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "exporter-address.h"
#include "exporter-bus.h"
#include "exporter-endpoints.h"
#include "exporter-targets.h"

/* /targets: Prometheus' HTTP service discovery (a list of {"targets": [...], "labels": {...}}), one entry per
 * scrape target, each naming this exporter's address as the connection reached it, and the target's spec in
 * __param_target, which Prometheus, Parca and Alloy turn into the scrape's ?target= parameter. */

static int add_label(struct json_object *labels, const char *key, const char *value)
{
        struct json_object *v = json_object_new_string(value);

        if (!v)
                return -ENOMEM;
        if (json_object_object_add(labels, key, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

static int add_entry(struct json_object *array, const char *address, const ScrapeTarget *t)
{
        struct json_object *entry = json_object_new_object(), *targets = json_object_new_array(),
                           *labels = json_object_new_object(), *a = json_object_new_string(address);
        char number[16];
        int r = -ENOMEM;

        if (!entry || !targets || !labels || !a)
                goto fail;
        if (json_object_array_add(targets, a) < 0)
                goto fail;
        a = NULL;
        if (add_label(labels, "__param_target", t->spec) < 0 || add_label(labels, "target", t->spec) < 0 ||
            add_label(labels, "kind", t->kind) < 0 || add_label(labels, "comm", t->comm) < 0 ||
            add_label(labels, "state", t->state) < 0)
                goto fail;
        if (t->pid > 0) {
                snprintf(number, sizeof(number), "%" PRIu32, t->pid);
                if (add_label(labels, "pid", number) < 0)
                        goto fail;
        }
        if (strcmp(t->kind, "process") != 0 && add_label(labels, strcmp(t->kind, "unit") == 0 ? "unit" : "group",
                                                         t->spec) < 0)
                goto fail;
        if (t->frequency > 0) {
                snprintf(number, sizeof(number), "%" PRIu32, t->frequency);
                if (add_label(labels, "frequency", number) < 0)
                        goto fail;
        }
        if (json_object_object_add(entry, "targets", targets) < 0)
                goto fail;
        targets = NULL;
        if (json_object_object_add(entry, "labels", labels) < 0)
                goto fail;
        labels = NULL;
        if (json_object_array_add(array, entry) < 0)
                goto fail;
        return 0;
fail:
        json_object_put(a);
        json_object_put(targets);
        json_object_put(labels);
        json_object_put(entry);
        return r;
}

/* The address that this connection reached: what a scraper that read this page can reach too. */
static void local_address(struct MHD_Connection *c, char *buf, size_t size)
{
        const union MHD_ConnectionInfo *info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);

        if (!info || exporter_socket_name(info->connect_fd, buf, size) < 0)
                snprintf(buf, size, "127.0.0.1:6068");
}

enum MHD_Result exporter_serve_targets(Exporter *e, struct MHD_Connection *c)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(scrape_target_list_freep) ScrapeTargetList *l = NULL;
        struct json_object *array;
        char address[64];
        const char *text;
        char *copy;
        size_t size;
        sd_bus *bus;
        int r;

        r = exporter_bus_get(&bus);
        if (r < 0)
                return exporter_respond_bus_error(e, c, r, NULL, NULL);
        r = exporter_targets_list(bus, e->config, &error, &l);
        if (r < 0)
                return exporter_respond_bus_error(e, c, r, &error, NULL);

        local_address(c, address, sizeof(address));
        array = json_object_new_array();
        if (!array)
                return exporter_respond_error(c, &e->counters, 500, "out of memory");
        for (size_t i = 0; i < l->n_targets; i++)
                if (add_entry(array, address, &l->targets[i]) < 0) {
                        json_object_put(array);
                        return exporter_respond_error(c, &e->counters, 500, "out of memory");
                }
        text = json_object_to_json_string_length(array, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
                                                 &size);
        copy = text ? strndup(text, size) : NULL;
        json_object_put(array);
        if (!copy)
                return exporter_respond_error(c, &e->counters, 500, "out of memory");
        return exporter_respond(c, &e->counters, 200, "application/json", NULL, copy, size, NULL, NULL);
}
