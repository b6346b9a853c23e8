#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Lint test: systemd-analyze verify on configured units, in a scratch root so that it works before
# installation and on machines where PID 1 is not systemd. The scratch root holds the units and a stub at
# SBINDIR/PROGRAM, the units' ExecStart= (verify checks that the command is executable); every unit given is
# verified, the later ones being there for the first's Requires= (a service and its socket). Dependencies
# outside them are not verified (--recursive-errors=no): the scratch root has no sysinit.target or dbus.socket.
#   verify-unit.sh SYSTEMD_ANALYZE SBINDIR PROGRAM UNIT_FILE...
set -eu
analyze=$1 sbindir=$2 program=$3
shift 3

root=$(mktemp -d "${TMPDIR:-/tmp}/vprof-verify.XXXXXX")
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/etc/systemd/system" "$root$sbindir"
printf '#!/bin/sh\n' >"$root$sbindir/$program"
chmod 0755 "$root$sbindir/$program"
units=
for unit in "$@"; do
        cp "$unit" "$root/etc/systemd/system/"
        units="$units $root/etc/systemd/system/$(basename "$unit")"
done

# shellcheck disable=SC2086 # the paths have no spaces: mktemp's and the units' names
exec "$analyze" verify --root="$root" --man=no --generators=no --recursive-errors=no $units
