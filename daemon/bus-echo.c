/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdbool.h>
#include <string.h>

#include "bus-echo.h"
#include "macros.h"
#include "quote.h"

#define PROPERTIES_INTERFACE "org.freedesktop.DBus.Properties"

/* Whether quote_prefix() would quote s as it is. */
static bool quotable(const char *s)
{
        char buf[QUOTE_SIZE];

        return strcmp(quote_prefix(s, buf), s) == 0;
}

/* The interface and property names of a Properties call: NULL where the call has none, or its arguments are not
 * what the method takes (sd-bus then answers InvalidArgs, quoting only signatures). */
static void read_property_names(sd_bus_message *m, const char **ret_interface, const char **ret_property)
{
        const char *member = sd_bus_message_get_member(m);

        *ret_interface = *ret_property = NULL;
        if (!member)
                return;
        if (strcmp(member, "GetAll") == 0)
                (void)sd_bus_message_read(m, "s", ret_interface);
        else if ((strcmp(member, "Get") == 0 || strcmp(member, "Set") == 0) &&
                 sd_bus_message_read(m, "ss", ret_interface, ret_property) < 0)
                *ret_interface = *ret_property = NULL;
        (void)sd_bus_message_rewind(m, true);
}

static int on_message(sd_bus_message *m, void *userdata _unused_, sd_bus_error *ret_error _unused_)
{
        const char *path, *interface, *property;
        char quoted[QUOTE_SIZE];

        if (sd_bus_message_is_method_call(m, NULL, NULL) <= 0)
                return 0;
        /* Only paths of other objects are this long: vprofd's and its parents' are short. */
        path = sd_bus_message_get_path(m);
        if (path && !quotable(path)) {
                (void)sd_bus_reply_method_errorf(m, SD_BUS_ERROR_UNKNOWN_OBJECT, "Unknown object '%s'.",
                                                 quote_prefix(path, quoted));
                return 1;
        }
        if (sd_bus_message_is_method_call(m, PROPERTIES_INTERFACE, NULL) <= 0)
                return 0;
        read_property_names(m, &interface, &property);
        /* The errors sd-bus gives: Get and Set say UnknownProperty for an unknown interface too. */
        if (interface && !quotable(interface)) {
                (void)sd_bus_reply_method_errorf(m, property ? SD_BUS_ERROR_UNKNOWN_PROPERTY
                                                             : SD_BUS_ERROR_UNKNOWN_INTERFACE,
                                                 "Unknown interface '%s'.", quote_prefix(interface, quoted));
                return 1;
        }
        if (property && !quotable(property)) {
                (void)sd_bus_reply_method_errorf(m, SD_BUS_ERROR_UNKNOWN_PROPERTY, "Unknown property '%s'.",
                                                 quote_prefix(property, quoted));
                return 1;
        }
        return 0;
}

int bus_add_echo_filter(sd_bus *bus)
{
        /* Floating: it lives as long as the connection. */
        return sd_bus_add_filter(bus, NULL, on_message, NULL);
}
