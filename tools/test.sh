#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The whole test suite, from a fresh Debian 12 machine (as root): install the dependencies, build, run the lint
# tests, the benchmarks' smoke tests and the integration tests that measure the plain build (suite 'plain'),
# then the unit tests and
# every integration test (real BPF, a private dbus-daemon) with vprofd and the tests built with AddressSanitizer
# and UBSan, and the parser fuzzers built with clang and libFuzzer under the sanitizers. An
# integration test runs once, under the sanitizers, unless it is in 'plain': the same checks, and the memory
# errors too (tests/README.md). With CI=true a skipped test fails. Each stage's wall time is printed at the end.
# Then tools/build-packages.sh builds the Debian and RPM packages from a clean copy and checks them, and last the
# end-to-end suite installs that .deb in a Debian 12 container booted with systemd-nspawn (tests/e2e/run-e2e.sh).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

# stage NAME COMMAND...: runs COMMAND, notes its wall time for the summary; a failure sets status.
status=0
stages=()
stage() {
  local name=$1 start=$SECONDS rc=0
  shift
  "$@" || rc=$?
  stages+=("$(printf '%-58s %5d s%s' "$name" $((SECONDS - start)) "$([ $rc = 0 ] || echo '  FAILED')")")
  [ $rc = 0 ] || status=1
}
print_stages() {
  echo "tests: wall time per stage"
  printf '  %s\n' "${stages[@]}"
}
# must_pass NAME COMMAND...: a stage the rest cannot run without (dependencies, a build).
must_pass() {
  stage "$@"
  if [ $status != 0 ]; then
    print_stages
    exit 1
  fi
}

must_pass "dependencies (tools/install-deps.sh)" tools/install-deps.sh

[ -f build/build.ninja ] || meson setup build >/dev/null
must_pass "build" meson compile -C build
# The plain build: lint, the benchmarks' smoke tests, and the integration tests whose checks need it (suite
# 'plain'). The unit tests run under the sanitizers below, and in an optimized build in the .deb's build.
stage "lint, bench, integration 'plain' (build)" \
  meson test -C build --suite lint --suite bench --suite plain --print-errorlogs

[ -f build-asan/build.ninja ] || meson setup build-asan -Db_sanitize=address,undefined >/dev/null
must_pass "build with ASan and UBSan" meson compile -C build-asan
# Every integration test with the daemon under the sanitizers: they fail on any report in its log.
stage "unit, integration (build-asan)" env ASAN_OPTIONS=detect_leaks=1 \
  meson test -C build-asan --suite unit --suite integration --print-errorlogs
# The parser fuzzers (tests/fuzz/run-fuzz.py, 20 s each), built with clang and libFuzzer
# (-fsanitize=fuzzer,address,undefined): coverage-guided, under the sanitizers. Their gcc build's blind mutations
# (meson test -C build-asan --suite fuzz) reach nothing these do not, and are left to be run by hand. Cheap: meson
# test builds only the harnesses and their seed fixtures.
[ -f build-fuzz/build.ninja ] || CC=clang meson setup build-fuzz >/dev/null
stage "fuzz (build-fuzz, clang and libFuzzer)" meson test -C build-fuzz --suite fuzz --print-errorlogs

# The Debian and RPM packages, built from a clean copy of the tree and checked (lintian, contents), kept for the
# end-to-end test.
packages=$(mktemp -d /tmp/vprof-test-packages.XXXXXX)
trap 'rm -rf "$packages"' EXIT
stage "packages (tools/build-packages.sh)" tools/build-packages.sh "$packages"

# The end-to-end test: that .deb under a real systemd and system bus, as a user runs it; -v shows every command
# and its output. Its own log base, so that it does not replace the first run's testlog.json.
rm -f build/meson-logs/testlog-e2e.json
deb=$(find "$packages" -name 'vprofd_*.deb' | head -n 1)
if [ -z "$deb" ]; then
  echo "e2e: not run, tools/build-packages.sh made no vprofd .deb" >&2
  status=1
else
  stage "end-to-end (e2e, systemd-nspawn)" env VPROF_E2E_DEB="$deb" \
    meson test -C build --suite e2e --logbase testlog-e2e -v
fi
# vprofd on Debian 12's own kernel (6.1) under QEMU (tests/qemu/run-qemu.sh).
rm -f build/meson-logs/testlog-qemu.json
stage "Debian 12 kernel (qemu)" meson test -C build --suite qemu --logbase testlog-qemu -v
print_stages

# One summary line over all the runs, and no silent skips in CI.
python3 - "$status" build/meson-logs/testlog.json build-asan/meson-logs/testlog.json \
  build-fuzz/meson-logs/testlog.json \
  build/meson-logs/testlog-e2e.json build/meson-logs/testlog-qemu.json <<'PY'
import json, os, sys
status = int(sys.argv[1])
counts = {"OK": 0, "FAIL": 0, "SKIP": 0}
for path in sys.argv[2:]:
    if not os.path.exists(path) and path.endswith("-e2e.json"):
        continue  # not run: already a failure above
    with open(path) as f:
        for line in f:
            result = json.loads(line)["result"]
            key = "OK" if result == "OK" else "SKIP" if result == "SKIP" else "FAIL"
            counts[key] += 1
print(f"tests: {counts['OK']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped")
if counts["SKIP"] and os.environ.get("CI") == "true":
    print("tests: skipped tests are failures in CI", file=sys.stderr)
    status = 1
sys.exit(1 if status or counts["FAIL"] else 0)
PY
