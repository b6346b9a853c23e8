#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Lint test: "systemd-analyze security" on the configured unit must rate its exposure at most MAX (0.0 best,
# 10.0 worst). Offline (--offline=true, systemd 250 and later), in a scratch root holding only the unit, so that
# it works before installation, where PID 1 is not systemd, and without the host's drop-ins. Prints the score,
# and the whole table when it is too high; skips (77) when systemd-analyze is too old for --offline.
#   security-unit.sh SYSTEMD_ANALYZE UNIT_FILE MAX
set -eu
analyze=$1 unit=$2 max=$3

version=$("$analyze" --version | sed -n '1s/^systemd \([0-9]*\).*/\1/p')
if [ "${version:-0}" -lt 250 ]; then
        echo "SKIP: systemd-analyze ${version:-?} has no security --offline (needs 250)"
        exit 77
fi

root=$(mktemp -d "${TMPDIR:-/tmp}/vprof-security.XXXXXX")
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/etc/systemd/system"
cp "$unit" "$root/etc/systemd/system/"
name=$(basename "$unit")

# The threshold is in tenths: 2.5 -> 25.
threshold=$(echo "$max" | awk -F. '{ printf "%d", $1 * 10 + substr($2 "0", 1, 1) }')
rc=0
"$analyze" security --offline=true --root="$root" --no-pager --threshold="$threshold" "$name" \
        >"$root/table" 2>&1 || rc=$?
score=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' "$root/table")
if [ -z "$score" ]; then
        cat "$root/table"
        echo "FAIL: no exposure level in the output (status $rc)"
        exit 1
fi
if [ "$rc" -ne 0 ]; then
        cat "$root/table"
        echo "FAIL: $name exposure $score, above $max"
        exit 1
fi
echo "$name exposure $score (at most $max)"
