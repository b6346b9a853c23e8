/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exporter-response.h"

static const unsigned status_codes[] = { EXPORTER_STATUS_CODES };

unsigned exporter_status_code_at(size_t i)
{
        return i < ELEMENTSOF(status_codes) ? status_codes[i] : 0;
}

static size_t status_index(unsigned status)
{
        for (size_t i = 0; i < ELEMENTSOF(status_codes); i++)
                if (status_codes[i] == status)
                        return i;
        return ELEMENTSOF(status_codes);
}

enum MHD_Result exporter_respond(struct MHD_Connection *c, ExporterCounters *counters, unsigned status,
                                 const char *content_type, const char *csp, char *data, size_t size,
                                 const char *extra_name, const char *extra_value)
{
        struct MHD_Response *response;
        enum MHD_Result ret;

        response = MHD_create_response_from_buffer(size, data, MHD_RESPMEM_MUST_FREE);
        if (!response) {
                free(data);
                return MHD_NO;
        }
        if (MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, content_type) != MHD_YES ||
            MHD_add_response_header(response, "X-Content-Type-Options", "nosniff") != MHD_YES ||
            MHD_add_response_header(response, "Content-Security-Policy", csp ?: "default-src 'none'") != MHD_YES ||
            MHD_add_response_header(response, "X-Frame-Options", "DENY") != MHD_YES ||
            MHD_add_response_header(response, "Referrer-Policy", "no-referrer") != MHD_YES ||
            MHD_add_response_header(response, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store") != MHD_YES ||
            (status == 405 && MHD_add_response_header(response, MHD_HTTP_HEADER_ALLOW, "GET, HEAD") != MHD_YES) ||
            (extra_name && MHD_add_response_header(response, extra_name, extra_value) != MHD_YES)) {
                MHD_destroy_response(response);
                return MHD_NO;
        }
        ret = MHD_queue_response(c, status, response);
        MHD_destroy_response(response);
        if (ret == MHD_YES)
                atomic_fetch_add_explicit(&counters->requests[status_index(status)], 1, memory_order_relaxed);
        return ret;
}

enum MHD_Result exporter_respond_error(struct MHD_Connection *c, ExporterCounters *counters, unsigned status,
                                       const char *format, ...)
{
        char *text = NULL;
        va_list ap;
        int n;

        va_start(ap, format);
        n = vasprintf(&text, format, ap);
        va_end(ap);
        if (n < 0)
                return MHD_NO;
        /* One line whatever the reason holds. */
        for (char *p = text; *p; p++)
                if ((unsigned char)*p < 0x20 || *p == 0x7f)
                        *p = ' ';
        {
                char *line = realloc(text, (size_t)n + 2);

                if (!line) {
                        free(text);
                        return MHD_NO;
                }
                line[n] = '\n';
                line[n + 1] = '\0';
                return exporter_respond(c, counters, status, "text/plain; charset=utf-8", NULL, line,
                                        (size_t)n + 1, NULL, NULL);
        }
}
