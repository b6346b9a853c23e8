#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Lint test: systemd-analyze verify on the configured unit, in a scratch root so that it works before
# installation and on machines where PID 1 is not systemd. The scratch root holds the unit and a stub at the
# unit's ExecStart path (verify checks that the command is executable). Dependencies are not verified
# (--recursive-errors=no): the scratch root has no sysinit.target or dbus.socket.
#   verify-unit.sh SYSTEMD_ANALYZE UNIT_FILE SBINDIR
set -eu
analyze=$1 unit=$2 sbindir=$3

root=$(mktemp -d "${TMPDIR:-/tmp}/vprof-verify.XXXXXX")
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/etc/systemd/system" "$root$sbindir"
cp "$unit" "$root/etc/systemd/system/"
printf '#!/bin/sh\n' >"$root$sbindir/vprofd"
chmod 0755 "$root$sbindir/vprofd"

exec "$analyze" verify --root="$root" --man=no --generators=no --recursive-errors=no \
        "$root/etc/systemd/system/$(basename "$unit")"
