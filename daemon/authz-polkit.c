/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "authz-polkit.h"
#include "log.h"
#include "macros.h"
#include "time-util.h"

/* Long enough for a person to answer an authentication dialog; a non-interactive call is answered at once. */
#define POLKIT_TIMEOUT_USEC (120 * USEC_PER_SEC)

typedef struct PolkitQuery {
        Hashmap *registry; /* the one holding it */
        sd_bus_message *call;
        sd_bus_slot *slot;
        bool done;
        bool authorized;
        char *error_name;  /* polkit's D-Bus error, when the question failed */
        char *error_message;
} PolkitQuery;

static PolkitQuery *polkit_query_free(PolkitQuery *q)
{
        if (!q)
                return NULL;
        sd_bus_slot_unref(q->slot);
        sd_bus_message_unref(q->call);
        free(q->error_name);
        free(q->error_message);
        free(q);
        return NULL;
}

Hashmap *polkit_registry_free(Hashmap *registry)
{
        PolkitQuery *q;

        HASHMAP_FOREACH(q, registry)
                polkit_query_free(q);
        hashmap_free(registry);
        return NULL;
}

static int on_polkit_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error _unused_)
{
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        PolkitQuery *q = userdata;
        int authorized, challenge, r;

        q->slot = sd_bus_slot_unref(q->slot);
        q->done = true;
        if (e) {
                q->error_name = strdup(e->name ?: "");
                q->error_message = strdup(e->message ?: "");
        } else {
                /* (is_authorized, is_challenge, details): the details do not matter here. */
                r = sd_bus_message_enter_container(reply, 'r', "bba{ss}");
                if (r >= 0)
                        r = sd_bus_message_read(reply, "bb", &authorized, &challenge);
                q->authorized = r >= 0 && authorized;
                if (r < 0)
                        q->error_message = strdup("malformed answer");
        }

        /* Run the call again: its handler finds the verdict. */
        r = sd_bus_message_rewind(q->call, true);
        if (r >= 0)
                r = sd_bus_enqueue_for_read(sd_bus_message_get_bus(q->call), q->call);
        if (r < 0) {
                log_warning_errno(r, "Failed to requeue a call after polkit answered: %m");
                (void)sd_bus_reply_method_errorf(q->call, SD_BUS_ERROR_ACCESS_DENIED,
                                                 "Access denied: the authorization could not be completed");
                hashmap_remove(q->registry, q->call);
                polkit_query_free(q);
        }
        return 1;
}

static int append_details(sd_bus_message *m, const char *const *details)
{
        int r;

        r = sd_bus_message_open_container(m, 'a', "{ss}");
        if (r < 0)
                return r;
        for (size_t i = 0; details && details[i] && details[i + 1]; i += 2) {
                r = sd_bus_message_append(m, "{ss}", details[i], details[i + 1]);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(m);
}

static int ask_polkit(Hashmap **registry, sd_bus_message *call, const char *action, const char *const *details)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *question = NULL;
        sd_bus *bus = sd_bus_message_get_bus(call);
        const char *sender = sd_bus_message_get_sender(call);
        bool interactive = sd_bus_message_get_allow_interactive_authorization(call) > 0;
        PolkitQuery *q;
        int r;

        if (!sender)
                return -EBADMSG;
        if (!*registry) {
                *registry = hashmap_new(&uint64_hash_ops);
                if (!*registry)
                        return -ENOMEM;
        }

        r = sd_bus_message_new_method_call(bus, &question, "org.freedesktop.PolicyKit1",
                                           "/org/freedesktop/PolicyKit1/Authority",
                                           "org.freedesktop.PolicyKit1.Authority", "CheckAuthorization");
        if (r < 0)
                return r;
        /* The subject is the caller's bus connection, which polkit resolves to its process and user itself. */
        r = sd_bus_message_append(question, "(sa{sv})s", "system-bus-name", 1, "name", "s", sender, action);
        if (r < 0)
                return r;
        r = append_details(question, details);
        if (r < 0)
                return r;
        r = sd_bus_message_append(question, "us", interactive ? 1u : 0u, "");
        if (r < 0)
                return r;

        q = calloc(1, sizeof(*q));
        if (!q)
                return -ENOMEM;
        q->registry = *registry;
        q->call = sd_bus_message_ref(call);
        r = hashmap_put(*registry, call, q);
        if (r < 0) {
                polkit_query_free(q);
                return r;
        }
        r = sd_bus_call_async(bus, &q->slot, question, on_polkit_reply, q,
                              interactive ? POLKIT_TIMEOUT_USEC : 0 /* the bus default */);
        if (r < 0) {
                hashmap_remove(*registry, call);
                polkit_query_free(q);
                return r;
        }
        return 0;
}

/* The answer as the call's error: why the local rules refused (refusal), and what polkit said. */
static int verdict(PolkitQuery *q, const char *refusal, sd_bus_error *error)
{
        if (q->authorized)
                return 1;
        if (q->error_name && (strcmp(q->error_name, "org.freedesktop.DBus.Error.ServiceUnknown") == 0 ||
                              strcmp(q->error_name, "org.freedesktop.DBus.Error.NameHasNoOwner") == 0))
                return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
                                         "Access denied: %s, and polkit is not running to ask", refusal);
        if (q->error_name || q->error_message)
                return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
                                         "Access denied: polkit could not be asked: %s",
                                         q->error_message ?: q->error_name);
        return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED, "Access denied: %s, and polkit did not allow it",
                                 refusal);
}

int polkit_verify_async(Hashmap **registry, sd_bus_message *call, const char *action, const char *const *details,
                        const char *refusal, sd_bus_error *error)
{
        PolkitQuery *q = *registry ? hashmap_get(*registry, call) : NULL;
        int r;

        if (q) {
                if (!q->done)
                        return 0; /* cannot happen: the call only runs again once answered */
                hashmap_remove(*registry, call);
                r = verdict(q, refusal, error);
                polkit_query_free(q);
                return r;
        }
        r = ask_polkit(registry, call, action, details);
        if (r < 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
                                         "Access denied: polkit could not be asked: %s", strerror(-r));
        return 0;
}
