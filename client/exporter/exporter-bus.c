/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <pthread.h>

#include "exporter-bus.h"
#include "log.h"
#include "macros.h"

static pthread_key_t bus_key;
static uint64_t bus_timeout_usec;

/* A worker thread's end (the server stopping) closes its connection. */
static void bus_free(void *p)
{
        sd_bus_flush_close_unref(p);
}

int exporter_bus_setup(uint64_t timeout_usec)
{
        bus_timeout_usec = timeout_usec;
        return -pthread_key_create(&bus_key, bus_free);
}

int exporter_bus_get(sd_bus **ret)
{
        _cleanup_(sd_bus_unrefp) sd_bus *bus = pthread_getspecific(bus_key);
        int r;

        if (bus) {
                if (sd_bus_is_open(bus) > 0) {
                        *ret = TAKE_PTR(bus);
                        return 0;
                }
                (void)pthread_setspecific(bus_key, NULL);
                sd_bus_close(bus);
                bus = sd_bus_unref(bus);
        }
        /* Not bus_connect_system(): a client's error line for each request would flood the log while the bus is
         * away; the request's answer says it. */
        r = sd_bus_open_system(&bus);
        if (r < 0)
                return log_debug_errno(r, "Cannot connect to the system bus: %m");
        r = sd_bus_set_method_call_timeout(bus, bus_timeout_usec);
        if (r < 0)
                return r;
        r = -pthread_setspecific(bus_key, bus);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(bus);
        return 0;
}

void exporter_bus_check(int r)
{
        sd_bus *bus;

        if (!IN_SET(r, -ECONNRESET, -ENOTCONN, -EPIPE, -ESHUTDOWN, -ECONNREFUSED))
                return;
        bus = pthread_getspecific(bus_key);
        if (!bus)
                return;
        (void)pthread_setspecific(bus_key, NULL);
        sd_bus_flush_close_unref(bus);
}
