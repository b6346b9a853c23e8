#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Two vprofctl binaries, an older one and this tree's, on one daemon and the same exited targets (vprof-demo, and
# vprof-cxx with off-CPU time and mangled names): reports, JSON, value tables and top -b must be the same bytes.
# For a change of the client's output code that should change nothing (the table schema did).
# Usage, as root, after meson compile -C build: tools/compare-vprofctl-output.sh OLD-VPROFCTL
# (an older tree's: git archive REV | tar -x -C DIR; meson setup DIR/b -Dtests=disabled; meson compile -C DIR/b
# client/vprofctl).
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
OLD=$1
NEW=$TOP/build/client/vprofctl
D=$(mktemp -d); mkdir -p $D/state
. $TOP/tools/private-bus.sh
start_private_bus $D $TOP
$TOP/build/daemon/vprofd --frequency 499 --state-directory=$D/state > $D/vprofd.log 2>&1 &
VPID=$!
for i in $(seq 100); do $NEW status >/dev/null 2>&1 && break; sleep 0.1; done
coproc DEMO { $TOP/build/tests/workloads/vprof-demo --seconds 3 --wait-stdin; }
read -r line <&${DEMO[0]}
DPID=${line#ready }
coproc CXX { $TOP/build/tests/workloads/vprof-cxx --seconds 3 --wait-stdin 2>/dev/null; }
read -r line <&${CXX[0]}
CXXPID=${line#ready }
$NEW attach $DPID >/dev/null; $NEW attach --off-cpu $CXXPID >/dev/null
echo go >&${DEMO[1]}; echo go >&${CXX[1]}
sleep 5
n=0; bad=0
for T in $DPID $CXXPID; do
for args in "" "-n 5" "--by module" "--by thread" "--by process" "-J" "-J --by module" "-J --by thread" "--by process -J" \
    "--values elapsed" "--values all --unit ms" "--values application" "--values all -J" "--by thread --values all" \
    "--by module --values elapsed --unit ms -J" "--by process --values elapsed" "--no-headings" "--sort inclusive -n 3"; do
  $OLD report $T $args > $D/old.out 2>&1; a=$?
  $NEW report $T $args > $D/new.out 2>&1; b=$?
  n=$((n+1))
  if [ $a != $b ] || ! cmp -s $D/old.out $D/new.out; then bad=$((bad+1)); echo "DIFF: report $T $args"; diff $D/old.out $D/new.out | head -5; fi
done; done
for args in "" "--by process" "-J"; do
  $OLD report $args > $D/old.out 2>&1; $NEW report $args > $D/new.out 2>&1; n=$((n+1))
  cmp -s $D/old.out $D/new.out || { bad=$((bad+1)); echo "DIFF: report $args"; }
done
$OLD top -b --iterations 1 $DPID | grep -v "^vprofctl top" > $D/old.out; $NEW top -b --iterations 1 $DPID | grep -v "^vprofctl top" > $D/new.out; n=$((n+1))
cmp -s $D/old.out $D/new.out || { bad=$((bad+1)); echo "DIFF: top -b"; diff $D/old.out $D/new.out | head; }
head -4 $D/new.out
echo "compared $n outputs, $bad differ; function rows: $($NEW report $DPID --no-headings | wc -l) (vprof-demo), $($NEW report $CXXPID --no-headings | wc -l) (vprof-cxx)"
kill $VPID; wait $VPID; kill $VPROF_BUS_PID
rm -rf $D
[ $bad = 0 ]
