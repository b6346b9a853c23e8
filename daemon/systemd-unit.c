/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup-util.h"
#include "quote.h"
#include "systemd-unit.h"
#include "target-spec.h"

#define SYSTEMD_NAME "org.freedesktop.systemd1"
#define SYSTEMD_PATH "/org/freedesktop/systemd1"
#define SYSTEMD_MANAGER SYSTEMD_NAME ".Manager"

/* The unit types that have a cgroup, and the interface that has their ControlGroup. */
static const struct {
        const char *suffix, *interface;
} unit_types[] = {
        { ".service", SYSTEMD_NAME ".Service" }, { ".scope", SYSTEMD_NAME ".Scope" },
        { ".slice", SYSTEMD_NAME ".Slice" },     { ".socket", SYSTEMD_NAME ".Socket" },
        { ".mount", SYSTEMD_NAME ".Mount" },     { ".swap", SYSTEMD_NAME ".Swap" },
};

struct UnitLookup {
        sd_bus *bus;
        sd_bus_slot *slot;        /* the call under way */
        sd_bus_slot *match;       /* following: the unit's PropertiesChanged */
        sd_bus_slot *subscribe;   /* following: the Subscribe call */
        bool again;               /* following: a signal came while a call was under way */
        char *unit, *path;        /* the unit's name and object */
        char quoted[QUOTE_SIZE]; /* the unit's name, for messages */
        const char *interface;
        unit_lookup_fn fn;
        void *userdata;
};

static const char *unit_interface(const char *name)
{
        size_t n = strlen(name);

        for (size_t i = 0; i < ELEMENTSOF(unit_types); i++) {
                size_t k = strlen(unit_types[i].suffix);

                if (n > k && strcmp(name + n - k, unit_types[i].suffix) == 0)
                        return unit_types[i].interface;
        }
        return NULL;
}

UnitLookup *unit_lookup_free(UnitLookup *l)
{
        if (!l)
                return NULL;
        sd_bus_slot_unref(l->slot);
        sd_bus_slot_unref(l->match);
        sd_bus_slot_unref(l->subscribe);
        sd_bus_unref(l->bus);
        free(l->unit);
        free(l->path);
        free(l);
        return NULL;
}

/* A call to systemd without auto-start: on a bus without it, the bus says so at once (NameHasNoOwner or
 * ServiceUnknown) rather than trying to start it. Two string arguments, or one (b NULL). */
static int call_systemd(UnitLookup *l, const char *path, const char *interface, const char *member,
                        sd_bus_message_handler_t callback, const char *a, const char *b)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_method_call(l->bus, &m, SYSTEMD_NAME, path, interface, member);
        if (r < 0)
                return r;
        r = sd_bus_message_set_auto_start(m, false);
        if (r < 0)
                return r;
        r = b ? sd_bus_message_append(m, "ss", a, b) : sd_bus_message_append(m, "s", a);
        if (r < 0)
                return r;
        return sd_bus_call_async(l->bus, &l->slot, m, callback, l, 0);
}

/* The error of a failed call as a result; systemd's own message, or the bus's, goes with it. */
static UnitLookupResult error_result(const sd_bus_error *e)
{
        if (sd_bus_error_has_names(e, SD_BUS_ERROR_SERVICE_UNKNOWN, SD_BUS_ERROR_NAME_HAS_NO_OWNER))
                return UNIT_LOOKUP_NO_SYSTEMD;
        if (sd_bus_error_has_name(e, SYSTEMD_NAME ".NoSuchUnit"))
                return UNIT_LOOKUP_NO_SUCH_UNIT;
        return UNIT_LOOKUP_FAILED;
}

static int on_control_group(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error _unused_);

/* The unit's ControlGroup, asked of its object. */
static int ask_control_group(UnitLookup *l)
{
        return call_systemd(l, l->path, "org.freedesktop.DBus.Properties", "Get", on_control_group, l->interface,
                            "ControlGroup");
}

static int on_control_group(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error _unused_)
{
        UnitLookup *l = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        const char *cgroup = NULL;
        char message[512], quoted[QUOTE_SIZE];
        int r;

        l->slot = sd_bus_slot_unref(l->slot);
        /* A change told meanwhile: asked again before fn runs, which may free l (and so cancel the call). */
        if (l->again) {
                l->again = false;
                if (ask_control_group(l) < 0)
                        l->slot = sd_bus_slot_unref(l->slot);
        }
        if (e) {
                l->fn(l, error_result(e), NULL, e->message ?: e->name, l->userdata);
                return 0;
        }
        r = sd_bus_message_read(reply, "v", "s", &cgroup);
        if (r < 0) {
                snprintf(message, sizeof(message), "Bad reply from systemd for the ControlGroup of %s: %s",
                         l->quoted, strerror(-r));
                l->fn(l, UNIT_LOOKUP_FAILED, NULL, message, l->userdata);
                return 0;
        }
        if (cgroup[0] == '\0') {
                snprintf(message, sizeof(message), "Unit %s has no cgroup: it is not running", l->quoted);
                l->fn(l, UNIT_LOOKUP_NO_CGROUP, NULL, message, l->userdata);
                return 0;
        }
        if (cgroup_path_check(cgroup) < 0) {
                snprintf(message, sizeof(message), "systemd gave unit %s the cgroup '%s', which vprofd does not "
                         "take", l->quoted, quote_prefix(cgroup, quoted));
                l->fn(l, UNIT_LOOKUP_FAILED, NULL, message, l->userdata);
                return 0;
        }
        l->fn(l, UNIT_LOOKUP_OK, cgroup, NULL, l->userdata);
        return 0;
}

static int on_get_unit(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error _unused_)
{
        UnitLookup *l = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        const char *path;
        char message[512];
        int r;

        l->slot = sd_bus_slot_unref(l->slot);
        if (e) {
                l->fn(l, error_result(e), NULL, e->message ?: e->name, l->userdata);
                return 0;
        }
        r = sd_bus_message_read(reply, "o", &path);
        if (r >= 0) {
                free(l->path);
                l->path = strdup(path);
                r = l->path ? ask_control_group(l) : -ENOMEM;
        }
        if (r < 0) {
                snprintf(message, sizeof(message), "Cannot ask systemd for the cgroup of %s: %s", l->quoted,
                         strerror(-r));
                l->fn(l, UNIT_LOOKUP_FAILED, NULL, message, l->userdata);
        }
        return 0;
}

int unit_lookup_start(sd_bus *bus, const char *unit, unit_lookup_fn fn, void *userdata, UnitLookup **ret)
{
        _cleanup_(unit_lookup_freep) UnitLookup *l = NULL;
        int r;

        if (!unit || !target_spec_is_unit_name(unit))
                return -EINVAL;
        l = calloc(1, sizeof(*l));
        if (!l)
                return -ENOMEM;
        l->bus = sd_bus_ref(bus);
        l->unit = strdup(unit);
        if (!l->unit)
                return -ENOMEM;
        quote_prefix(unit, l->quoted);
        l->interface = unit_interface(unit);
        l->fn = fn;
        l->userdata = userdata;
        r = call_systemd(l, SYSTEMD_PATH, SYSTEMD_MANAGER, "GetUnit", on_get_unit, unit, NULL);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(l);
        return 0;
}

static int on_properties_changed(sd_bus_message *m _unused_, void *userdata, sd_bus_error *ret_error _unused_)
{
        UnitLookup *l = userdata;

        /* Whatever changed (ActiveState, the cgroup's): its ControlGroup again, once at a time. */
        if (l->slot) {
                l->again = true;
                return 0;
        }
        if (ask_control_group(l) < 0)
                l->slot = sd_bus_slot_unref(l->slot);
        return 0;
}

static int on_subscribed(sd_bus_message *m _unused_, void *userdata, sd_bus_error *ret_error _unused_)
{
        UnitLookup *l = userdata;

        l->subscribe = sd_bus_slot_unref(l->subscribe);
        return 0;
}

int unit_lookup_follow(UnitLookup *l, unit_lookup_fn fn, void *userdata)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        if (!l->path)
                return -ENOENT;
        l->fn = fn;
        l->userdata = userdata;
        if (l->match)
                return 0;
        /* From any sender: a signal only makes the daemon ask systemd, whose answer is what counts. */
        r = sd_bus_match_signal_async(l->bus, &l->match, NULL, l->path, "org.freedesktop.DBus.Properties",
                                      "PropertiesChanged", on_properties_changed, NULL, l);
        if (r < 0)
                return r;
        /* systemd sends its units' signals only while some client has subscribed; one already subscribed gets an
         * error, which changes nothing. */
        r = sd_bus_message_new_method_call(l->bus, &m, SYSTEMD_NAME, SYSTEMD_PATH, SYSTEMD_MANAGER, "Subscribe");
        if (r < 0)
                return r;
        r = sd_bus_call_async(l->bus, &l->subscribe, m, on_subscribed, l, 0);
        return r < 0 ? r : 0;
}

const char *unit_lookup_unit(const UnitLookup *l)
{
        return l->unit;
}
