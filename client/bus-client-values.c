/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>

#include "bus-client-values.h"
#include "bus-client.h"
#include "bus-names.h"

/* The four replies share one shape: the elapsed and application totals, then an array of rows made of a
 * name part that depends on the kind and the ten numbers in ReportValue order. */
static int read_values_table(sd_bus_message *reply, ReportKind kind, const char *method, sd_bus_error *error,
                             ReportTable **ret)
{
        /* The array's element type, and the same without the parentheses for entering one row. */
        static const char *const row_signature[_REPORT_KIND_MAX][2] = {
                [REPORT_FUNCTIONS] = {"(ssdddddddddd)", "ssdddddddddd"},
                [REPORT_MODULES] = {"(sdddddddddd)", "sdddddddddd"},
                [REPORT_THREADS] = {"(usdddddddddd)", "usdddddddddd"},
                [REPORT_PROCESSES] = {"(usdddddddddd)", "usdddddddddd"},
        };
        _cleanup_(report_table_freep) ReportTable *t = NULL;
        const char *sig = row_signature[kind][0], *contents = row_signature[kind][1];
        int r;

        r = report_table_new_values(kind, &t);
        if (r < 0)
                return r;

        r = sd_bus_message_read(reply, "dd", &t->elapsed_total, &t->application_total);
        if (r < 0)
                return bus_bad_reply(error, method, r);
        r = sd_bus_message_enter_container(reply, 'a', sig);
        if (r < 0)
                return bus_bad_reply(error, method, r);
        for (;;) {
                const char *name = NULL, *module = NULL;
                double values[_REPORT_VALUE_MAX];
                uint32_t id = 0;

                r = sd_bus_message_enter_container(reply, 'r', contents);
                if (r < 0)
                        return bus_bad_reply(error, method, r);
                if (r == 0)
                        break;

                if (kind == REPORT_FUNCTIONS)
                        r = sd_bus_message_read(reply, "ss", &name, &module);
                else if (kind == REPORT_MODULES)
                        r = sd_bus_message_read(reply, "s", &name);
                else
                        r = sd_bus_message_read(reply, "us", &id, &name);
                for (size_t i = 0; r >= 0 && i < _REPORT_VALUE_MAX; i++)
                        r = sd_bus_message_read_basic(reply, 'd', &values[i]);
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
                if (r < 0)
                        return bus_bad_reply(error, method, r);

                r = report_table_append_values(t, id, name, module, values);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_exit_container(reply);
        if (r < 0)
                return bus_bad_reply(error, method, r);

        *ret = TAKE_PTR(t);
        return 0;
}

int bus_get_function_values(sd_bus *bus, uint32_t pid, ProfileSort sort, uint32_t limit, sd_bus_error *error,
                            ReportTable **ret)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_call_method(bus, VPROF_BUS_NAME, VPROF_BUS_PATH, VPROF_BUS_INTERFACE, "GetFunctionValues",
                               error, &reply, "usu", pid, profile_sort_to_string(sort), limit);
        if (r < 0)
                return r;
        return read_values_table(reply, REPORT_FUNCTIONS, "GetFunctionValues", error, ret);
}

int bus_get_module_values(sd_bus *bus, uint32_t pid, sd_bus_error *error, ReportTable **ret)
{
        return bus_get_table(bus, "GetModuleValues", REPORT_MODULES, pid, read_values_table, error, ret);
}

int bus_get_thread_values(sd_bus *bus, uint32_t pid, sd_bus_error *error, ReportTable **ret)
{
        return bus_get_table(bus, "GetThreadValues", REPORT_THREADS, pid, read_values_table, error, ret);
}

int bus_get_process_values(sd_bus *bus, sd_bus_error *error, ReportTable **ret)
{
        return bus_get_table(bus, "GetProcessValues", REPORT_PROCESSES, 0, read_values_table, error, ret);
}
