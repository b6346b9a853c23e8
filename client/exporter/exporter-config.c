/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config-file.h"
#include "exporter-address.h"
#include "exporter-config.h"
#include "log.h"
#include "parse-util.h"
#include "target-spec.h"

void exporter_config_init(ExporterConfig *c)
{
        *c = (ExporterConfig){
                .max_connections = EXPORTER_MAX_CONNECTIONS_DEFAULT,
                .request_timeout_sec = EXPORTER_REQUEST_TIMEOUT_SEC_DEFAULT,
                .max_seconds = EXPORTER_MAX_SECONDS_DEFAULT,
                .max_response_bytes = EXPORTER_MAX_RESPONSE_BYTES_DEFAULT,
                .threads = EXPORTER_THREADS_DEFAULT,
        };
}

static void free_allow_targets(ExporterConfig *c)
{
        for (size_t i = 0; i < c->n_allow_targets; i++)
                free(c->allow_targets[i]);
        free(c->allow_targets);
        c->allow_targets = NULL;
        c->n_allow_targets = 0;
}

static void free_allow_hosts(ExporterConfig *c)
{
        for (size_t i = 0; i < c->n_allow_hosts; i++)
                free(c->allow_hosts[i]);
        free(c->allow_hosts);
        c->allow_hosts = NULL;
        c->n_allow_hosts = 0;
}

void exporter_config_done(ExporterConfig *c)
{
        free(c->listen);
        free(c->bearer_token_file);
        free_allow_targets(c);
        free_allow_hosts(c);
        exporter_config_init(c);
}

static int bad_value(const char *key, const char *value, const char *where, const char *why)
{
        if (where)
                return log_error_errno(-EINVAL, "%s: invalid %s=%s: %s.", where, key, value, why);
        return log_error_errno(-EINVAL, "Invalid %s=%s: %s.", key, value, why);
}

static int set_allow_targets(ExporterConfig *c, const char *value, const char *where)
{
        _cleanup_free_ char *copy = strdup(value);
        char *save = NULL, *word;

        if (!copy)
                return log_error_errno(-ENOMEM, "Out of memory.");
        /* A later assignment replaces the list, as an option replaces the file's. */
        free_allow_targets(c);
        for (word = strtok_r(copy, " \t", &save); word; word = strtok_r(NULL, " \t", &save)) {
                TargetSpec spec;
                char **n;

                if (target_spec_parse(word, &spec) < 0)
                        return bad_value("AllowTargets", word, where,
                                         "expected PIDs, unit names or cgroup paths separated by spaces");
                if (c->n_allow_targets >= EXPORTER_ALLOW_TARGETS_MAX)
                        return bad_value("AllowTargets", word, where, "too many targets");
                n = reallocarray(c->allow_targets, c->n_allow_targets + 1, sizeof(char *));
                if (!n)
                        return log_error_errno(-ENOMEM, "Out of memory.");
                c->allow_targets = n;
                c->allow_targets[c->n_allow_targets] = strdup(word);
                if (!c->allow_targets[c->n_allow_targets])
                        return log_error_errno(-ENOMEM, "Out of memory.");
                c->n_allow_targets++;
        }
        return 0;
}

/* A name of AllowHosts=: a DNS name or an address as a Host header carries it ("[2001:db8::1]"), no port. */
static bool host_name_valid(const char *s)
{
        size_t len = strlen(s);

        if (len == 0 || len > 255)
                return false;
        if (s[0] == '[')
                return len > 2 && s[len - 1] == ']' && strspn(s + 1, "0123456789abcdefABCDEF:.") == len - 2;
        return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") == len;
}

static int set_allow_hosts(ExporterConfig *c, const char *value, const char *where)
{
        _cleanup_free_ char *copy = strdup(value);
        char *save = NULL, *word;

        if (!copy)
                return log_error_errno(-ENOMEM, "Out of memory.");
        free_allow_hosts(c);
        for (word = strtok_r(copy, " \t", &save); word; word = strtok_r(NULL, " \t", &save)) {
                char **n;

                if (!host_name_valid(word))
                        return bad_value("AllowHosts", word, where,
                                         "expected host names or addresses ([IPv6-ADDRESS]) without a port, "
                                         "separated by spaces");
                if (c->n_allow_hosts >= EXPORTER_ALLOW_HOSTS_MAX)
                        return bad_value("AllowHosts", word, where, "too many names");
                n = reallocarray(c->allow_hosts, c->n_allow_hosts + 1, sizeof(char *));
                if (!n)
                        return log_error_errno(-ENOMEM, "Out of memory.");
                c->allow_hosts = n;
                c->allow_hosts[c->n_allow_hosts] = strdup(word);
                if (!c->allow_hosts[c->n_allow_hosts])
                        return log_error_errno(-ENOMEM, "Out of memory.");
                c->n_allow_hosts++;
        }
        return 0;
}

int exporter_config_set(ExporterConfig *c, const char *key, const char *value, const char *where)
{
        uint64_t u64;
        int r;

        if (strcmp(key, "Listen") == 0) {
                ExporterAddress a;
                char *s;

                if (exporter_address_parse(value, &a) < 0)
                        return bad_value(key, value, where, "expected ADDRESS:PORT or [IPv6-ADDRESS]:PORT");
                s = strdup(value);
                if (!s)
                        return log_error_errno(-ENOMEM, "Out of memory.");
                free(c->listen);
                c->listen = s;
                return 0;
        }
        if (strcmp(key, "MaxConnections") == 0) {
                if (parse_u32(value, 1, EXPORTER_MAX_CONNECTIONS_MAX, &c->max_connections) < 0)
                        return bad_value(key, value, where, "expected a number from 1 to 65536");
                return 0;
        }
        if (strcmp(key, "MaxConnectionsPerIP") == 0) {
                if (parse_u32(value, 0, EXPORTER_MAX_CONNECTIONS_MAX, &c->max_connections_per_ip) < 0)
                        return bad_value(key, value, where, "expected a number from 0 (no limit) to 65536");
                return 0;
        }
        if (strcmp(key, "RequestTimeoutSec") == 0) {
                if (parse_u32(value, 1, 3600, &c->request_timeout_sec) < 0)
                        return bad_value(key, value, where, "expected seconds from 1 to 3600");
                return 0;
        }
        if (strcmp(key, "MaxSeconds") == 0) {
                if (parse_u32(value, 1, 86400, &c->max_seconds) < 0)
                        return bad_value(key, value, where, "expected seconds from 1 to 86400");
                return 0;
        }
        if (strcmp(key, "MaxResponseBytes") == 0) {
                r = parse_u64(value, &u64);
                if (r < 0 || u64 < 1024 || u64 > (UINT64_C(1) << 32))
                        return bad_value(key, value, where, "expected bytes from 1024 to 4294967296");
                c->max_response_bytes = u64;
                return 0;
        }
        if (strcmp(key, "Threads") == 0) {
                if (parse_u32(value, 1, EXPORTER_THREADS_MAX, &c->threads) < 0)
                        return bad_value(key, value, where, "expected a number from 1 to 64");
                return 0;
        }
        if (strcmp(key, "AllowTargets") == 0)
                return set_allow_targets(c, value, where);
        if (strcmp(key, "AllowHosts") == 0)
                return set_allow_hosts(c, value, where);
        if (strcmp(key, "BearerTokenFile") == 0) {
                char *s;

                /* Read at the start (exporter_token_load()), after the file and the options: only the path
                 * here. Empty: none. */
                if (value[0] != '\0' && value[0] != '/')
                        return bad_value(key, value, where, "expected an absolute path");
                s = value[0] ? strdup(value) : NULL;
                if (value[0] && !s)
                        return log_error_errno(-ENOMEM, "Out of memory.");
                free(c->bearer_token_file);
                c->bearer_token_file = s;
                return 0;
        }

        if (where)
                return log_error_errno(-ENOENT, "%s: unknown key %s.", where, key);
        return log_error_errno(-ENOENT, "Unknown setting %s.", key);
}

static int assign(const char *key, const char *value, const char *where, void *userdata)
{
        return exporter_config_set(userdata, key, value, where);
}

int exporter_config_load_file(ExporterConfig *c, const char *path, bool must_exist)
{
        return config_file_parse(path, "Exporter", must_exist, assign, c);
}

static bool spec_equal(const char *a, const char *b)
{
        TargetSpec x, y;

        if (target_spec_parse(a, &x) < 0 || target_spec_parse(b, &y) < 0 || x.kind != y.kind)
                return false;
        if (x.kind == TARGET_SPEC_PID)
                return x.pid == y.pid;
        return strcmp(x.name, y.name) == 0;
}

bool exporter_config_allows(const ExporterConfig *c, const char *spec)
{
        if (c->n_allow_targets == 0)
                return true;
        for (size_t i = 0; i < c->n_allow_targets; i++)
                if (spec_equal(c->allow_targets[i], spec))
                        return true;
        return false;
}
