#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Build the Debian and the RPM package from a clean copy of this tree, on Debian 12 (as root), and check them:
#   1. the .deb with dpkg-buildpackage, unit and lint suites included; lintian must report no error;
#   2. the RPM with rpmbuild from the `meson dist` tarball (--nocheck: 1. ran its tests), the spec unchanged:
#      Debian's rpm lacks Fedora's macros, packaging/rpm/macros.fedora-compat supplies them; --nodeps, since the
#      build dependencies are Debian packages;
#   3. both packages must hold the daemon, the client, the unit, the D-Bus policy, activation file and interface
#      XML, the polkit action, the settings file and the four man pages, and otherwise the same files.
# The clean copy is the working tree's tracked and not-ignored files as they are now, uncommitted changes
# included. Everything happens in a directory under /tmp, removed at the end; with OUTDIR the packages are
# copied there first; BUILD_PACKAGES_KEEP=1 keeps the directory and its logs.
#   tools/build-packages.sh [OUTDIR]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
outdir=${1:-}
start=$SECONDS

say() { echo "build-packages: $*"; }
die() { echo "build-packages: $*" >&2; exit 1; }

# Runs a command with its output in a log, and shows the end of the log if it fails.
run_logged() {
  local log=$1
  shift
  if ! "$@" >"$log" 2>&1; then
    echo "build-packages: failed: $*" >&2
    tail -n 60 "$log" | sed 's/^/  | /' >&2
    if [ -n "${BUILD_PACKAGES_KEEP:-}" ]; then
      die "the whole log: $log"
    fi
    die "BUILD_PACKAGES_KEEP=1 keeps the whole log"
  fi
}

step_start=$SECONDS
step_done() {
  say "$1 ($((SECONDS - step_start)) s)"
  step_start=$SECONDS
}

# --- tools --------------------------------------------------------------------------------------------------
# The build dependencies come from debian/control below, with apt-get build-dep.
packages=(dpkg-dev debhelper lintian rpm git xz-utils python3)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
export DEBIAN_FRONTEND=noninteractive
apt_updated=0
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  apt-get update -qq
  apt_updated=1
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
git -C "$top" rev-parse --git-dir >/dev/null 2>&1 ||
  die "$top is not a git checkout: the clean copy needs git's file list"

# --- versions -----------------------------------------------------------------------------------------------
version=$(meson introspect --projectinfo "$top/meson.build" |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])')
deb_version=$(dpkg-parsechangelog -l "$top/packaging/debian/changelog" -S Version)
rpm_version=$(awk '$1 == "Version:" { print $2 }' "$top/packaging/rpm/vprofd.spec")
[ "$deb_version" = "$version" ] || die "packaging/debian/changelog says $deb_version, meson.build $version"
[ "$rpm_version" = "$version" ] || die "packaging/rpm/vprofd.spec says $rpm_version, meson.build $version"
arch=$(dpkg --print-architecture)
step_done "tools ready, version $version"

work=$(mktemp -d /tmp/vprof-packages.XXXXXX)
if [ -n "${BUILD_PACKAGES_KEEP:-}" ]; then
  trap 'say "kept $work"' EXIT
else
  trap 'rm -rf "$work"' EXIT
fi

# Copies the tree's tracked and untracked-but-not-ignored files (no .git, no build directories) to $1.
copy_tree() {
  mkdir -p "$1"
  (cd "$top" && git ls-files -z --cached --others --exclude-standard |
     while IFS= read -r -d '' f; do [[ -e $f || -L $f ]] && printf '%s\0' "$f"; done |
     tar --null --no-recursion -T - -cf -) | tar -C "$1" -xf -
}

# --- Debian ---------------------------------------------------------------------------------------------------
debsrc=$work/deb/vprof-$version
copy_tree "$debsrc"
cp -a "$top/packaging/debian" "$debsrc/debian"
if ! (cd "$debsrc" && dpkg-checkbuilddeps >/dev/null 2>&1); then
  say "installing the build dependencies of debian/control"
  [ $apt_updated = 1 ] || apt-get update -qq
  (cd "$debsrc" && apt-get build-dep -y -qq --no-install-recommends ./ >/dev/null)
fi
step_done "clean copy in $debsrc, build dependencies present"

# parallel= only: no nocheck, the unit and lint suites run as part of the build.
(cd "$debsrc" && run_logged "$work/dpkg-buildpackage.log" \
  env DEB_BUILD_OPTIONS="parallel=$(nproc)" dpkg-buildpackage -us -uc -b)
changes=$work/deb/vprof_${version}_${arch}.changes
deb=$work/deb/vprofd_${version}_${arch}.deb
for f in "$changes" "$deb"; do
  [ -f "$f" ] || die "dpkg-buildpackage made no $(basename "$f")"
done
grep -E '^(Ok|Fail|Skipped|Expected Fail|Unexpected Pass|Timeout):' "$work/dpkg-buildpackage.log" |
  sed 's/^/  deb tests: /' || true
step_done "dpkg-buildpackage -us -uc -b"

# lintian exits non-zero on errors (--fail-on error); the E: check covers an older lintian too.
lintian_status=0
lintian --fail-on error --tag-display-limit 0 "$changes" >"$work/lintian.log" 2>&1 || lintian_status=$?
sed 's/^/  lintian: /' "$work/lintian.log"
if [ $lintian_status -ne 0 ] || grep -q '^E: ' "$work/lintian.log"; then
  die "lintian reports errors (exit status $lintian_status)"
fi
errors=$(grep -c '^E: ' "$work/lintian.log" || true)
warnings=$(grep -c '^W: ' "$work/lintian.log" || true)
step_done "lintian: $errors errors, $warnings warnings"

# --- RPM ------------------------------------------------------------------------------------------------------
# meson dist archives a git commit: commit the same clean copy in a throwaway repository.
gitsrc=$work/git/vprof
copy_tree "$gitsrc"
git -C "$gitsrc" init -q
git -C "$gitsrc" add -A
git -C "$gitsrc" -c user.name=build-packages -c user.email=build-packages@localhost -c commit.gpgsign=false \
  commit -q -m "vprof $version snapshot"
run_logged "$work/meson-dist.log" meson setup "$work/git/build" "$gitsrc"
run_logged "$work/meson-dist.log" meson dist -C "$work/git/build" --no-tests --formats xztar
tarball=$work/git/build/meson-dist/vprof-$version.tar.xz
[ -f "$tarball" ] || die "meson dist made no $(basename "$tarball")"
tar -tJf "$tarball" >"$work/tarball.list"
grep -qx "vprof-$version/meson.build" "$work/tarball.list" ||
  die "$(basename "$tarball") has no vprof-$version/ top directory"
step_done "meson dist: $(basename "$tarball")"

# --nocheck: the .deb's build ran the spec's %check (the unit and lint suites) on the same sources a minute ago;
# the spec keeps it for builds elsewhere.
run_logged "$work/rpmbuild.log" rpmbuild -bb --nodeps --nocheck \
  --load "$top/packaging/rpm/macros.fedora-compat" \
  --define "_topdir $work/rpmbuild" \
  --define "_sourcedir $(dirname "$tarball")" \
  "$top/packaging/rpm/vprofd.spec"
rpm=$(find "$work/rpmbuild/RPMS" -name "vprofd-$version-*.rpm" ! -name '*-debug*' | head -n 1)
[ -n "$rpm" ] || die "rpmbuild made no vprofd-$version-*.rpm"
grep -E '^(Ok|Fail|Skipped|Expected Fail|Unexpected Pass|Timeout):' "$work/rpmbuild.log" |
  sed 's/^/  rpm tests: /' || true
step_done "rpmbuild -bb: $(basename "$rpm")"

# --- contents -------------------------------------------------------------------------------------------------
# Regular files and symlinks, one path a line without the leading / or ./; Debian 12's /lib/systemd becomes
# /usr/lib/systemd so that both lists compare.
dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { print $6 }' | sed -e 's|^\./||' -e 's|^lib/systemd/|usr/lib/systemd/|' |
  sort >"$work/deb.files"
rpm -qp --qf '[%{FILEMODES:perms} %{FILENAMES}\n]' "$rpm" | awk '$1 !~ /^d/ { print $2 }' | sed 's|^/||' |
  sort >"$work/rpm.files"

required=(
  usr/sbin/vprofd
  usr/bin/vprofctl
  usr/sbin/vprof-exporter
  usr/lib/systemd/system/vprofd.service
  usr/lib/systemd/system/vprof-exporter.service
  usr/lib/systemd/system/vprof-exporter.socket
  usr/lib/sysusers.d/vprof.conf
  usr/share/dbus-1/system.d/org.vprof.Profiler1.conf
  usr/share/dbus-1/system-services/org.vprof.Profiler1.service
  usr/share/dbus-1/interfaces/org.vprof.Profiler1.xml
  usr/share/polkit-1/actions/org.vprof.Profiler1.policy
  usr/share/man/man1/vprofctl.1.gz
  usr/share/man/man5/org.vprof.Profiler1.5.gz
  usr/share/man/man5/vprofd.conf.5.gz
  usr/share/man/man8/vprofd.8.gz
  usr/share/man/man8/vprof-exporter.8.gz
  etc/vprofd.conf
)
bad=0
for kind in deb rpm; do
  for f in "${required[@]}"; do
    grep -qxF "$f" "$work/$kind.files" || { echo "build-packages: the $kind lacks /$f" >&2; bad=1; }
  done
done
# Documentation differs by design (Debian adds changelog and copyright), and rpm adds /usr/lib/.build-id links
# to the binaries; everything else must match.
only_ours='^usr/share/doc/|^usr/lib/\.build-id/'
if ! diff -u --label deb --label rpm <(grep -Ev "$only_ours" "$work/deb.files") \
    <(grep -Ev "$only_ours" "$work/rpm.files") >"$work/files.diff"; then
  echo "build-packages: the two packages install different files:" >&2
  sed 's/^/  /' "$work/files.diff" >&2
  bad=1
fi
[ $bad = 0 ] || die "package contents check failed"
step_done "contents: all ${#required[@]} required files in both packages, same files apart from docs"

# --- result ---------------------------------------------------------------------------------------------------
mapfile -t built < <(find "$work/deb" -maxdepth 1 -name '*.deb'; find "$work/rpmbuild/RPMS" -name '*.rpm')
for f in "${built[@]}"; do
  printf '  %-44s %9s bytes\n' "$(basename "$f")" "$(stat -c %s "$f")"
done
if [ -n "$outdir" ]; then
  mkdir -p "$outdir"
  cp "${built[@]}" "$outdir"/
  say "copied to $outdir"
fi
say "done in $((SECONDS - start)) s"
