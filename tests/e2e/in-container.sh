#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The end-to-end test's steps, run inside the booted container by vprof-e2e.service once systemd reached
# multi-user.target: what a user does with the Debian package. Every command is printed as "$ command", then its
# output and its exit status when not 0; every step ends with "step N: NAME: ok|FAILED, SECONDS s". A failed step
# does not stop the ones after it. The results go to /var/log/vprof-e2e/results for the host side (run-e2e.sh);
# the exit status is the number of failed steps, which the unit passes out as the container's exit status.
#
# Inputs, put in place by run-e2e.sh: /root/vprof-e2e/vprofd_*.deb, /usr/local/bin/vprof-demo, /usr/local/bin/vprof-fork
# with its unit vprof-fork-test.service, and /root/vprof-e2e/bpf-programs (the names of bpf/vprof.bpf.c's
# programs).
# The small predicates below run through check(), which shellcheck does not follow:
# shellcheck disable=SC2317
set -u

in=/root/vprof-e2e
out=/var/log/vprof-e2e
results=$out/results
user=vprof-e2e-user
demo_seconds=600           # longer than the test: the workload is killed at the end
sample_wait=5              # seconds of sampling before the first look
sample_wait_max=15         # ... and at most this long for the first samples to arrive
command_timeout=90         # any one command

mkdir -p "$out"
: >"$results"
# Everything to the console (which systemd-nspawn copies to the host) and to a log file; the commands' output goes
# to a pipe, not a terminal, so systemctl and vprofctl print no colors, no pager and no ellipsis.
exec > >(tee -a "$out/log" >/dev/console) 2>&1
tee_pid=$!

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
echo "started $(now)" >>"$results"

# The command as one would type it: words with spaces or shell characters in single quotes.
show_cmd() {
  local w line='$'
  for w in "$@"; do
    if [[ $w =~ ^[A-Za-z0-9_./:=@%+,-]+$ ]]; then line+=" $w"; else line+=" '${w//\'/\'\\\'\'}'"; fi
  done
  printf '%s\n' "$line"
}

# run CMD...: prints "$ CMD", runs it (under a timeout), prints its output; leaves it in $OUT and the status in $RC.
run() {
  show_cmd "$@"
  OUT=$(timeout --kill-after=5 "$command_timeout" "$@" 2>&1)
  RC=$?
  [ -z "$OUT" ] || printf '%s\n' "$OUT"
  if [ $RC = 124 ]; then
    echo "[timed out after $command_timeout s]"
  elif [ $RC != 0 ]; then
    echo "[exit status $RC]"
  fi
}

# A step: step_begin N NAME, then checks with check/fail, then step_end.
step_no=0
step_name=
step_failed=0
step_t0=
failed_steps=0
passed_steps=0
step_begin() {
  step_no=$1
  step_name=$2
  step_failed=0
  echo
  echo "=== step $step_no: $step_name"
  step_t0=$(now)
}
fail() {
  echo "FAILED: $*"
  step_failed=1
}
# check DESCRIPTION TEST...: runs the test (a shell command, not logged), and says which check failed.
check() {
  local what=$1
  shift
  if "$@"; then
    echo "ok: $what"
  else
    fail "$what"
  fi
}
step_end() {
  local secs verdict
  secs=$(elapsed "$step_t0" "$(now)")
  if [ $step_failed = 0 ]; then
    verdict=ok
    passed_steps=$((passed_steps + 1))
  else
    verdict=FAILED
    failed_steps=$((failed_steps + 1))
    diagnostics
  fi
  echo "step $step_no: $step_name: $verdict, $secs s"
  printf 'step\t%s\t%s\t%s\t%s\n' "$step_no" "$verdict" "$secs" "$step_name" >>"$results"
}
diagnostics() {
  echo "--- diagnostics after the failed step"
  run systemctl status vprofd --no-pager --full --lines=0
  run journalctl -u vprofd --no-pager -o short-monotonic --lines=40
  echo "---"
}

is_uint() { [[ $1 =~ ^[0-9]+$ ]]; }
ge() { is_uint "$1" && is_uint "$2" && [ "$1" -ge "$2" ]; }
# The value after "NAME:" in vprofctl status's output.
status_value() { awk -F': *' -v k="$1" '{ sub(/^ +/, "", $1) } $1 == k { print $2 }' <<<"$2"; }
# The samples of PID in vprofctl list --no-headings's output (PID COMMAND STATE SAMPLES ...), empty if absent.
list_samples() { awk -v p="$1" '$1 == p { print $4 }' <<<"$2"; }
# N from "Total samples: N" of vprofctl report and top.
report_total() { sed -n 's/^Total samples: \([0-9]*\).*/\1/p' <<<"$1" | head -n 1; }
# The first function row of a report or top table (after the total and the column headings).
first_function() { awk '/^FUNCTION /{ getline; print $1; exit }' <<<"$1"; }
# The BPF program IDs that PID holds: an fd of a program, or of a link, whose fdinfo names it.
bpf_prog_ids() { cat /proc/"$1"/fdinfo/* 2>/dev/null | awk '$1 == "prog_id:" { print $2 }' | sort -un | xargs; }
# differ_nonzero A B: A is a PID other than 0 and B.
differ_nonzero() { [ "$1" != "$2" ] && [ "$1" != 0 ] && [ -n "$1" ]; }
# all_gone HELD LEFT: there were programs, and none is left.
all_gone() { [ -n "$1" ] && [ -z "$2" ]; }
not_listed() { ! grep -qE "^ *$1 " <<<"$2"; }
not_grep() { ! grep -q "$1" "$2"; }
# The state (running, exited) of PID in vprofctl list, empty if it is not listed.
target_status() { vprofctl list --no-headings | awk -v p="$1" '$1 == p { print $3 }'; }
main_pid() { systemctl show -p MainPID --value vprofd; }

echo "vprof end-to-end test in $(systemd-detect-virt) container $(hostname), $(uname -r)"
echo "systemd $(systemctl --version | awk 'NR == 1 { print $2 }') is PID 1; the system bus is dbus-daemon $(dbus-daemon --version | awk 'NR == 1 { print $NF }')"
run systemctl is-active dbus.socket dbus.service systemd-logind.service

# --- 1. install ----------------------------------------------------------------------------------------------
deb=
for f in "$in"/vprofd_*.deb; do
  [ -f "$f" ] && deb=$f && break
done
step_begin 1 "install the Debian package"
if [ -z "$deb" ]; then
  fail "no vprofd_*.deb in $in"
else
  run dpkg -i "$deb"
  check "dpkg -i succeeded" [ $RC = 0 ]
  run dpkg-query -W -f '${Package} ${Version} ${db:Status-Status}\n' vprofd
  check "vprofd is installed" grep -q ' installed$' <<<"$OUT"
  run systemctl is-enabled vprofd
  check "the unit is enabled" [ "$OUT" = enabled ]
  run getent group vprof
  check "the package made the group vprof (sysusers.d)" grep -qE '^vprof:x:[0-9]+:' <<<"$OUT"
  run systemctl is-enabled vprof-exporter.socket
  check "vprof-exporter.socket is enabled" [ "$OUT" = enabled ]
  run systemctl is-active vprof-exporter.socket
  check "vprof-exporter.socket listens" [ "$OUT" = active ]
  run systemctl is-active vprof-exporter.service
  check "vprof-exporter.service is not started by the install" [ "$OUT" = inactive ]
fi
step_end

# --- 2. start ------------------------------------------------------------------------------------------------
step_begin 2 "systemctl start vprofd"
run systemctl start vprofd
check "systemctl start succeeded" [ $RC = 0 ]
step_end

# --- 3. status -----------------------------------------------------------------------------------------------
step_begin 3 "systemctl status vprofd"
run systemctl status vprofd --no-pager --full --lines=5
check "Active: active (running)" grep -q 'Active: active (running)' <<<"$OUT"
check "the daemon's Status: line says what it samples" grep -q 'Status: "Sampling with' <<<"$OUT"
run systemctl is-active vprofd
check "systemctl is-active says active" [ "$OUT" = active ]
run vprofctl status
check "vprofctl status answers" [ $RC = 0 ]
step_end

# --- 4. workload ---------------------------------------------------------------------------------------------
step_begin 4 "start the workload"
printf '$ vprof-demo --threads 1 --seconds %s >/var/log/vprof-e2e/demo.out &\n' "$demo_seconds"
vprof-demo --threads 1 --seconds "$demo_seconds" >"$out/demo.out" 2>&1 &
demo_pid=$!
echo "[1] $demo_pid"
sleep 0.2
run ps -o pid,stat,time,comm -p "$demo_pid"
check "vprof-demo runs" kill -0 "$demo_pid"
# The container has a PID namespace of its own (PID 1 is its systemd): the daemon sees these PIDs, its BPF program
# the host's.
run ps -o pid,comm -p 1
check "PID 1 here is systemd: the workload's PID $demo_pid is one of this container's PID namespace" \
  grep -qE '^ *1 systemd$' <<<"$OUT"
step_end

# --- 5. attach -----------------------------------------------------------------------------------------------
step_begin 5 "vprofctl attach PID (the PID in the container)"
attach_t=$SECONDS
run vprofctl attach "$demo_pid"
check "vprofctl attach succeeded" [ $RC = 0 ]
run vprofctl list
check "vprofctl list shows PID $demo_pid" grep -qE "^ *$demo_pid +vprof-demo " <<<"$OUT"
step_end

# --- 6. samples ----------------------------------------------------------------------------------------------
step_begin 6 "the workload's samples arrive"
run sleep "$sample_wait"
while :; do
  run vprofctl list --no-headings
  samples=$(list_samples "$demo_pid" "$OUT")
  if ge "${samples:-0}" 1 || [ $((SECONDS - attach_t)) -ge $sample_wait_max ]; then
    break
  fi
  run sleep 2
done
check "PID $demo_pid has samples (vprofctl list: ${samples:-none})" ge "${samples:-0}" 1
run vprofctl status
kept=$(status_value "Samples kept" "$OUT")
check "vprofctl status: Samples kept > 0 (${kept:-none})" ge "${kept:-0}" 1
run vprofctl report "$demo_pid" -n 8
total=$(report_total "$OUT")
check "vprofctl report: Total samples > 0 (${total:-none})" ge "${total:-0}" 1
step_end

# --- 7. top --------------------------------------------------------------------------------------------------
step_begin 7 "vprofctl top shows the hot function"
run vprofctl top "$demo_pid" -n 5 --iterations 1
check "vprofctl top succeeded" [ $RC = 0 ]
hot=$(first_function "$OUT")
check "the hottest function is work_alpha, the demo's 50% leaf (top shows ${hot:-nothing})" [ "$hot" = work_alpha ]
step_end

# --- 8. unprivileged user ------------------------------------------------------------------------------------
step_begin 8 "an unprivileged user is refused for root's workload"
id "$user" >/dev/null 2>&1 || run useradd --create-home --shell /bin/bash "$user"
run runuser -u "$user" -- id
run runuser -u "$user" -- vprofctl attach "$demo_pid"
check "attach as $user fails" [ $RC = 1 ]
check "attach as $user: access denied" grep -q 'Access denied' <<<"$OUT"
run runuser -u "$user" -- vprofctl report "$demo_pid"
check "report as $user fails" [ $RC = 1 ]
check "report as $user: access denied" grep -q 'Access denied' <<<"$OUT"
run runuser -u "$user" -- dbus-send --system --print-reply --dest=org.vprof.Profiler1 /org/vprof/Profiler1 \
  org.vprof.Profiler1.Detach "string:$demo_pid"
check "the D-Bus error is org.freedesktop.DBus.Error.AccessDenied" \
  grep -q 'org.freedesktop.DBus.Error.AccessDenied' <<<"$OUT"
run runuser -u "$user" -- vprofctl list
check "vprofctl list as $user does not show root's target" not_listed "$demo_pid" "$OUT"
run vprofctl list --no-headings
check "the target is still attached (root's vprofctl list)" ge "$(list_samples "$demo_pid" "$OUT")" 0
step_end

# --- 9. restart ----------------------------------------------------------------------------------------------
step_begin 9 "systemctl restart vprofd keeps the target and its counts"
old_pid=$(main_pid)
old_progs=$(bpf_prog_ids "$old_pid")
run vprofctl list --no-headings
before=$(list_samples "$demo_pid" "$OUT")
run vprofctl report "$demo_pid" -n 3
before_total=$(report_total "$OUT")
echo "before: MainPID $old_pid, BPF programs ${old_progs:-none}, samples ${before:-none}, report total ${before_total:-none}"
run systemctl restart vprofd
check "systemctl restart succeeded" [ $RC = 0 ]
run systemctl is-active vprofd
check "active again" [ "$OUT" = active ]
new_pid=$(main_pid)
check "a new daemon process (MainPID $old_pid -> $new_pid)" differ_nonzero "$new_pid" "$old_pid"
run vprofctl list --no-headings
after=$(list_samples "$demo_pid" "$OUT")
check "PID $demo_pid is still attached" [ -n "$after" ]
check "its samples are kept: ${after:-none} >= ${before:-none}" ge "${after:-x}" "${before:-x}"
run vprofctl report "$demo_pid" -n 3
after_total=$(report_total "$OUT")
check "its report total is kept: ${after_total:-none} >= ${before_total:-none}" ge "${after_total:-x}" "${before_total:-x}"
run sleep 2
run vprofctl list --no-headings
later=$(list_samples "$demo_pid" "$OUT")
check "and the new daemon samples it: ${later:-none} > ${after:-none}" ge "${later:-x}" "$((${after:-0} + 1))"
left=
for id in $old_progs; do
  bpftool prog show id "$id" >/dev/null 2>&1 && left="$left $id"
done
check "the old daemon's BPF programs (${old_progs:-none}) are gone" all_gone "$old_progs" "$left"
step_end

# --- 10. crash -----------------------------------------------------------------------------------------------
step_begin 10 "kill -9 of vprofd: Restart=on-failure brings it back with its target and counts"
old_pid=$(main_pid)
old_restarts=$(systemctl show -p NRestarts --value vprofd)
run vprofctl list --no-headings
before=$(list_samples "$demo_pid" "$OUT")
run sleep 1.5
echo "\$ kill -9 $old_pid    # MainPID; PID $demo_pid had ${before:-no} samples 1.5 s ago"
kill -9 "$old_pid"
new_pid=
for _ in $(seq 1 150); do
  sleep 0.2
  pid=$(main_pid)
  if differ_nonzero "$pid" "$old_pid" && [ "$(systemctl is-active vprofd)" = active ]; then
    new_pid=$pid
    break
  fi
done
run systemctl show -p NRestarts -p ActiveState -p MainPID vprofd
check "systemd started a new daemon (MainPID $old_pid -> ${new_pid:-none})" differ_nonzero "${new_pid:-0}" "$old_pid"
restarts=$(systemctl show -p NRestarts --value vprofd)
check "through Restart=on-failure (NRestarts ${old_restarts:-?} -> ${restarts:-?})" \
  ge "${restarts:-0}" "$((${old_restarts:-0} + 1))"
run vprofctl list --no-headings
after=$(list_samples "$demo_pid" "$OUT")
check "PID $demo_pid is attached again" [ -n "$after" ]
check "its counts are back: ${after:-none} >= ${before:-none}, read 1.5 s before the kill" ge "${after:-x}" "${before:-x}"
run sh -c "journalctl --no-pager -o cat _PID=$new_pid | grep -E 'did not stop cleanly|Replayed|Restored $demo_pid'"
check "the new daemon says the previous one did not stop cleanly" grep -q 'did not stop cleanly' <<<"$OUT"
check "and replayed the journal" grep -q 'Replayed .* of the journal' <<<"$OUT"
step_end

# --- 11. a service by its unit name --------------------------------------------------------------------------
# vprof-fork-test.service: a main process that keeps two workers, each burning CPU in fork_worker_spin() for a
# second, and replaces each as it exits; every one logs "worker PID" (or "main PID") as it starts.
fork_unit=vprof-fork-test.service
fork_log=$out/fork-workers.log
# The PIDs of the log's lines of KIND after the first SKIP of them.
logged() { awk -v k="$1" '$1 == k { print $2 }' "$fork_log" 2>/dev/null | tail -n +$(($2 + 1)); }
count_logged() { logged "$1" 0 | wc -l; }
# The samples of PID in vprofctl report --by process's output (PID COMMAND SAMPLES PERCENT), empty if absent.
process_samples() { awk -v p="$1" '$1 == p { print $3 }' <<<"$2"; }
# check_workers SKIP ROWS: the workers logged after the first SKIP, but the two running now, are each in ROWS
# with samples.
check_workers() {
  local w s missing= nosamples= n=0
  for w in $(logged worker "$1" | head -n -2); do
    n=$((n + 1))
    s=$(process_samples "$w" "$2")
    [ -n "$s" ] || missing+=" $w"
    ge "${s:-0}" 1 || nosamples+=" $w"
  done
  check "$n workers started since then and done (at least 4)" ge "$n" 4
  check "each of them is in the unit's tables (missing:${missing:- none})" [ -z "$missing" ]
  check "each of them has samples (none for:${nosamples:- none})" [ -z "$nosamples" ]
  last_worker=$(logged worker "$1" | head -n -2 | tail -n 1)
}

step_begin 11 "vprofctl attach $fork_unit: its workers, those started after the attach included"
run systemctl start "$fork_unit"
check "systemctl start $fork_unit succeeded" [ $RC = 0 ]
for _ in $(seq 1 50); do
  [ "$(count_logged worker)" -ge 2 ] && break
  sleep 0.1
done
before=$(count_logged worker)
main=$(systemctl show -p MainPID --value "$fork_unit")
echo "main process $main, $before workers started before the attach"
run vprofctl attach "$fork_unit"
check "vprofctl attach $fork_unit succeeded" [ $RC = 0 ]
run vprofctl list
check "vprofctl list shows the unit as a group" grep -qE "^$fork_unit +unit +/system.slice/$fork_unit " <<<"$OUT"
run sleep 7
run vprofctl report --by process "$fork_unit"
check "vprofctl report --by process $fork_unit succeeded" [ $RC = 0 ]
check "its main process $main is in its tables" [ -n "$(process_samples "$main" "$OUT")" ]
check_workers "$before" "$OUT"
run vprofctl report "$last_worker" -n 3
hot=$(first_function "$OUT")
check "worker $last_worker's hottest function is fork_worker_spin (${hot:-nothing})" [ "$hot" = fork_worker_spin ]
step_end

# --- 12. the service restarted ---------------------------------------------------------------------------------
step_begin 12 "systemctl restart $fork_unit: the new main process and its workers are profiled"
old_main=$(systemctl show -p MainPID --value "$fork_unit")
before=$(count_logged worker)
run systemctl restart "$fork_unit"
check "systemctl restart succeeded" [ $RC = 0 ]
new_main=$(systemctl show -p MainPID --value "$fork_unit")
check "a new main process ($old_main -> $new_main)" differ_nonzero "$new_main" "$old_main"
run sleep 6
run vprofctl report --by process "$fork_unit"
check "the new main process $new_main is in the unit's tables" [ -n "$(process_samples "$new_main" "$OUT")" ]
check "the old one $old_main stays, exited" [ "$(target_status "$old_main")" = exited ]
# The new instance's workers: those logged after its main process's line. The old instance may have replaced a
# worker between the count above and the stop, one killed at once, perhaps before its first sample.
before=$(awk -v m="$new_main" '$1 == "main" && $2 == m { print n + 0; exit } $1 == "worker" { n++ }' "$fork_log")
check_workers "${before:-0}" "$OUT"
step_end

# --- 13. the service and an unprivileged user -------------------------------------------------------------------
step_begin 13 "an unprivileged user is refused a unit; vprofctl detach $fork_unit"
run runuser -u "$user" -- vprofctl attach "$fork_unit"
check "attach $fork_unit as $user fails" [ $RC = 1 ]
check "attach $fork_unit as $user: access denied" grep -q 'Access denied: attaching a unit or a cgroup is for root' <<<"$OUT"
run runuser -u "$user" -- vprofctl report --by process "$fork_unit"
check "report as $user fails, access denied" grep -q 'Access denied' <<<"$OUT"
run runuser -u "$user" -- vprofctl list
check "vprofctl list as $user shows no group" not_grep "$fork_unit" <(printf '%s\n' "$OUT")
run vprofctl detach "$fork_unit"
check "vprofctl detach $fork_unit succeeded" [ $RC = 0 ]
run vprofctl list
check "the unit and its processes are gone from the list" not_grep "$fork_unit" <(printf '%s\n' "$OUT")
run systemctl stop "$fork_unit"
step_end

# --- 14. the exporter, socket-activated ------------------------------------------------------------------------
# The package enabled vprof-exporter.socket; nothing runs until the first request, which starts the service as its
# own system user in the group vprof, reading root's target from vprofd.
exporter_diagnostics() {
  run systemctl status vprof-exporter.socket vprof-exporter.service --no-pager --full --lines=0
  run journalctl -u vprof-exporter.service -u vprof-exporter.socket --no-pager -o short-monotonic --lines=40
}
# gzip's magic number, 1f 8b, at the start of FILE.
is_gzip() { [ "$(head -c 2 "$1" | od -An -tx1 | tr -d ' \n')" = 1f8b ]; }
step_begin 14 "the first request starts vprof-exporter.service, which answers with a pprof profile"
url=http://127.0.0.1:6068
run systemctl is-active vprof-exporter.service
check "vprof-exporter.service is inactive before the first request" [ "$OUT" = inactive ]
run curl -sS --max-time 60 -o "$out/profile.pb.gz" -w '%{http_code} %{content_type}' \
  "$url/debug/pprof/profile?seconds=1&target=$demo_pid"
check "GET /debug/pprof/profile?seconds=1&target=$demo_pid: 200 ($OUT)" grep -q '^200 ' <<<"$OUT"
check "the body is gzip (1f 8b)" is_gzip "$out/profile.pb.gz"
run sh -c "gzip -dc $out/profile.pb.gz >$out/profile.pb && wc -c <$out/profile.pb"
check "it decompresses to a non-empty protobuf ($OUT bytes)" ge "${OUT:-0}" 1
# The profile's string table holds the function names: the workload's hottest (step 7) among them.
run sh -c "grep -c -a work_alpha $out/profile.pb || true"
check "the profile names the workload's hottest function, work_alpha" ge "${OUT:-0}" 1
run systemctl is-active vprof-exporter.service
check "vprof-exporter.service runs now" [ "$OUT" = active ]
run curl -sS --max-time 30 "$url/targets"
check "GET /targets lists PID $demo_pid" grep -qE "\"pid\": *\"$demo_pid\"" <<<"$OUT"
[ $step_failed = 0 ] || exporter_diagnostics
step_end

# --- 15. the exporter's user -----------------------------------------------------------------------------------
step_begin 15 "the exporter runs as the user vprof-exporter in the group vprof, sandboxed by DynamicUser="
exporter_pid=$(systemctl show -p MainPID --value vprof-exporter.service)
run grep -E '^(Uid|Gid|Groups):' "/proc/$exporter_pid/status"
exporter_uid=$(awk '$1 == "Uid:" { print $3 }' <<<"$OUT")
vprof_gid=$(getent group vprof | cut -d: -f3)
user_uid=$(getent passwd vprof-exporter | cut -d: -f3)
check "its effective UID $exporter_uid is the package's user vprof-exporter (${user_uid:-missing}), not root" \
  differ_nonzero "$exporter_uid" "-1"
check "... the same UID" [ "$exporter_uid" = "$user_uid" ]
check "the group vprof ($vprof_gid) is among its groups" grep -qE "^Groups:.*\b$vprof_gid\b" <<<"$OUT"
run systemctl show -p User -p DynamicUser -p SupplementaryGroups --no-pager vprof-exporter.service
check "DynamicUser=yes (its sandbox)" grep -qx 'DynamicUser=yes' <<<"$OUT"
[ $step_failed = 0 ] || exporter_diagnostics
step_end

# --- 16. the exporter's exposure -------------------------------------------------------------------------------
step_begin 16 "systemd-analyze security vprof-exporter.service: 2.3 at most"
run systemd-analyze security --no-pager vprof-exporter.service
exposure=$(sed -n 's/.*Overall exposure level for vprof-exporter.service: \([0-9.]*\).*/\1/p' <<<"$OUT")
check "exposure ${exposure:-?} <= 2.3" awk -v e="${exposure:-99}" 'BEGIN { exit !(e <= 2.3) }'
step_end

# --- 17. who reads what through the exporter --------------------------------------------------------------------
# The shipped socket as it is: each client reads what its own user may read of vprofd, on the unix socket and on
# 127.0.0.1:6068; an unprivileged user not in vprof reads its own workload and nothing of root's.
sock=/run/vprof-exporter/exporter.sock
# http_as USER|root unix|tcp PATH [CURL-ARGS...]: the status in $OUT, the body in $out/http.body.
http_as() {
  local who=$1 via=$2 path=$3
  shift 3
  local cmd=(curl -sS --max-time 60 -o "$out/http.body" -w '%{http_code}' "$@")
  # A file the user may write, made anew for each answer.
  install -m 0666 /dev/null "$out/http.body"
  if [ "$via" = unix ]; then cmd+=(--unix-socket "$sock" "http://localhost$path"); else cmd+=("$url$path"); fi
  if [ "$who" = root ]; then run "${cmd[@]}"; else run runuser -u "$who" -- "${cmd[@]}"; fi
  printf 'body: %s\n' "$(head -c 300 "$out/http.body" | tr -c '[:print:]\n' '.')"
}
body_lacks() { ! grep -qaE -e "$1" "$out/http.body"; }
body_has() { grep -qaE -e "$1" "$out/http.body"; }
# PID as the answers name a target: "PID" in JSON and labels, target=PID in links, >PID< in cells.
pid_re() { printf '("|=|>)%s("|&|<|$)' "$1"; }
step_begin 17 "through the shipped sockets a user outside vprof gets nothing of root's workload; root reads it"
run stat -c '%A %U %n' "$sock"
check "the unix socket of vprof-exporter.socket is there, mode 0666" grep -q '^srw-rw-rw- ' <<<"$OUT"
run id "$user"
check "$user is not in the group vprof" not_grep '(vprof)' <(printf '%s\n' "$OUT")
for via in unix tcp; do
  http_as "$user" $via "/debug/pprof/profile?seconds=1&target=$demo_pid"
  check "$user, $via: root's target is 403 ($OUT)" [ "$OUT" = 403 ]
  check "... 'access denied', naming nothing" body_lacks "$demo_pid"
  check "... nor its command" body_lacks vprof-demo
  http_as "$user" $via "/flamegraph?target=$demo_pid"
  check "$user, $via: root's flame graph is 403 ($OUT)" [ "$OUT" = 403 ]
  for path in /targets /metrics /; do
    http_as "$user" $via "$path"
    check "$user, $via: GET $path is 200 ($OUT)" [ "$OUT" = 200 ]
    check "... without root's target $demo_pid" body_lacks "$(pid_re "$demo_pid")"
  done
  http_as root $via /targets
  check "root, $via: GET /targets lists root's $demo_pid" body_has "$(pid_re "$demo_pid")"
  http_as root $via "/debug/pprof/profile?seconds=1&target=$demo_pid"
  check "root, $via: root's target's profile is 200 ($OUT)" [ "$OUT" = 200 ]
  http_as "$user" $via /targets -H 'Host: attacker.example'
  check "$user, $via: Host: attacker.example is 421 ($OUT)" [ "$OUT" = 421 ]
done
[ $step_failed = 0 ] || exporter_diagnostics
step_end

# --- 18. the user's own workload through the exporter ------------------------------------------------------------
step_begin 18 "through the shipped sockets a user outside vprof reads its own workload"
# The user's own workload (setpriv execs: $! is the workload), attached by root: vprofd lets the user read it
# as its own process.
setpriv --reuid="$user" --regid="$user" --init-groups vprof-demo --threads 1 --seconds "$demo_seconds" \
  >"$out/user-demo.out" 2>&1 &
user_demo_pid=$!
echo "$user's vprof-demo: PID $user_demo_pid"
# Attached once setpriv has become the user and exec()ed the workload, not while its credentials change.
for ((i = 0; i < 50; i++)); do
  [ "$(ps -o user=,comm= -p "$user_demo_pid" | xargs)" = "$user vprof-demo" ] && break
  sleep 0.1
done
run ps -o pid,user,comm -p "$user_demo_pid"
run vprofctl attach "$user_demo_pid"
check "root attaches $user's workload" [ $RC = 0 ]
run sleep 3
for via in unix tcp; do
  for path in /targets /metrics /; do
    http_as "$user" $via "$path"
    check "$user, $via: GET $path lists its own $user_demo_pid" body_has "$(pid_re "$user_demo_pid")"
  done
  http_as "$user" $via "/debug/pprof/profile?seconds=1&target=$user_demo_pid"
  check "$user, $via: its own target's profile is 200 ($OUT)" [ "$OUT" = 200 ]
  check "... gzip" is_gzip "$out/http.body"
  http_as root $via /targets
  check "root, $via: GET /targets lists $user's $user_demo_pid too" body_has "$(pid_re "$user_demo_pid")"
done
run vprofctl detach "$user_demo_pid"
kill "$user_demo_pid" 2>/dev/null
[ $step_failed = 0 ] || exporter_diagnostics
step_end

# --- 19. MaxTargets ------------------------------------------------------------------------------------------
# Every target holds a pidfd: under the unit's LimitNOFILE= the daemon reaches MaxTargets= (1024 by default) with
# no "Too many open files", and the next attach is refused for the target limit, not for the open files.
step_begin 19 "the unit's open file limit holds MaxTargets attached sleeps"
pid=$(main_pid)
run systemctl show -p LimitNOFILE --value vprofd
check "the unit sets LimitNOFILE=131072 ($OUT)" [ "$OUT" = 131072 ]
# systemd gives the service the closest it can: a container whose PID 1 has a lower hard limit (the host's)
# gets that one.
run grep 'Max open files' /proc/1/limits
ceiling=$(awk '{ print $5 }' <<<"$OUT")
want=131072
if is_uint "$ceiling" && [ "$ceiling" -lt "$want" ]; then want=$ceiling; fi
run grep 'Max open files' /proc/"$pid"/limits
nofile=$(awk '{ print $4 }' <<<"$OUT")
check "vprofd's soft open file limit is $want (${nofile:-none})" [ "${nofile:-0}" = "$want" ]
run vprofctl status
limits=$(status_value "Limits" "$OUT")
max=${limits%% *}
have=$(status_value "Targets" "$OUT")
n=$((${max:-0} - ${have:-0}))
check "vprofctl status: MaxTargets is the default 1024 (${max:-none}), $n slots free" [ "${max:-0}" = 1024 ]
sleepers=()
for ((i = 0; i < n; i++)); do
  sleep 600 &
  sleepers+=($!)
done
echo "started $n sleeps"
# Four attaches at a time: one after the other they took 31 s; four at a time overlap the clients' starts with the
# daemon's work (which answers one call at a time): 300 on a private bus, 7.1 s -> 6.0 s. A failed attach writes
# its PID to attach-many.failed.
# shellcheck disable=SC2016,SC2028
echo '$ printf "%s\n" $sleeps | xargs -P4 -I{} vprofctl attach {}'
attach_t0=$(now)
: >"$out/attach-many.failed"
# shellcheck disable=SC2016
printf '%s\n' "${sleepers[@]}" |
  xargs -P4 -I{} sh -c 'timeout 30 vprofctl attach "$1" >>"$2" 2>&1 || echo "$1" >>"$3"' attach {} \
    "$out/attach-many.err" "$out/attach-many.failed"
attach_failed=$(wc -l <"$out/attach-many.failed")
attach_secs=$(elapsed "$attach_t0" "$(now)")
echo "attached $((n - attach_failed)) of $n sleeps in $attach_secs s, 4 at a time"
printf 'measure\tattach %s targets, 4 at a time\t%s\n' "$n" "$attach_secs" >>"$results"
head -n 3 "$out/attach-many.err"
check "every attach succeeded ($attach_failed failed)" [ "$attach_failed" = 0 ]
check "no attach failed for the open file limit" not_grep 'open files' "$out/attach-many.err"
run vprofctl status
check "vprofctl status: $max targets" [ "$(status_value "Targets" "$OUT")" = "$max" ]
sleep 600 &
extra=$!
run vprofctl attach "$extra"
check "one more attach fails" [ $RC = 1 ]
check "... for the target limit of $max" grep -q "the limit of $max targets is reached" <<<"$OUT"
run sh -c "journalctl -u vprofd --no-pager -o cat | grep -ci 'open file' || true"
check "the journal says nothing of the open file limit" [ "$OUT" = 0 ]
# Once they exit, the next attach takes the slot of the one that exited first; the others stay until the stop.
kill "${sleepers[0]}"
wait "${sleepers[0]}" 2>/dev/null
for ((i = 0; i < 100; i++)); do
  [ "$(target_status "${sleepers[0]}")" = exited ] && break
  sleep 0.1
done
kill "${sleepers[@]:1}" 2>/dev/null
wait "${sleepers[@]:1}" 2>/dev/null
run vprofctl attach "$extra"
check "an attach after they exited succeeds" [ $RC = 0 ]
run sh -c "journalctl -u vprofd --no-pager -o cat | grep 'to make room for PID $extra ' || true"
check "... in the slot of the one that exited first (${sleepers[0]})" \
  grep -q "exited target ${sleepers[0]} (sleep) of UID 0, which exited [0-9]* s ago, to make room for PID $extra of UID 0 (MaxTargets=1024)" <<<"$OUT"
kill "$extra" 2>/dev/null
step_end

# --- 20. stop ------------------------------------------------------------------------------------------------
step_begin 20 "systemctl stop vprofd leaves no BPF program loaded"
pid=$(main_pid)
progs=$(bpf_prog_ids "$pid")
echo "vprofd (MainPID $pid) holds BPF programs: ${progs:-none}"
names=$(xargs <"$in/bpf-programs")
# The kernel keeps 15 characters of a name; bpftool prints the whole one from BTF where it has it.
pattern=
for name in $names; do
  pattern+="${pattern:+|}${name:0:15}[A-Za-z0-9_]*"
done
shown=
for id in $progs; do
  run bpftool prog show id "$id"
  shown+=$OUT$'\n'
done
seen=
for name in $names; do
  grep -qE " name ${name:0:15}[A-Za-z0-9_]* " <<<"$shown" && seen="$seen $name"
done
check "the running daemon holds its sampling program (of: $names; held:${seen:- none})" \
  grep -qw vprof_sample <<<"$seen"
run systemctl stop vprofd
check "systemctl stop succeeded" [ $RC = 0 ]
run systemctl is-active vprofd
check "inactive" [ "$OUT" = inactive ]
# The kernel frees a tracing program (the mapping-change programs, tp_btf) after its link's release, a moment
# after the process has gone: up to 5 s.
for attempt in $(seq 50); do
  left=
  for id in $progs; do
    bpftool prog show id "$id" >/dev/null 2>&1 && left="$left $id"
  done
  [ -z "$left" ] && break
  sleep 0.1
done
for id in $progs; do
  run bpftool prog show id "$id"
done
check "none of its programs is loaded any more within 5 s (left:${left:- none})" all_gone "$progs" "$left"
# Machine-wide, for information only: this container shares the host's kernel, where another vprofd may run.
echo "programs of these names anywhere on the machine (another vprofd on the host would hold some):"
run sh -c "bpftool prog show | grep -E ' name ($pattern) ' || echo none"
printf 'progs\t%s\n' "$old_progs $progs" >>"$results"
step_end

# --- end -----------------------------------------------------------------------------------------------------
kill "$demo_pid" 2>/dev/null
echo
echo "--- the daemon's journal"
run journalctl -u vprofd --no-pager -o short-monotonic
echo
echo "in-container steps: $passed_steps passed, $failed_steps failed"
printf 'done\t%s\t%s\n' "$passed_steps" "$failed_steps" >>"$results"
echo "finished $(now)" >>"$results"
# Let tee write the last lines before the container goes down. The unit's SuccessAction= and FailureAction=
# hand the exit status to systemd-nspawn.
exec >&- 2>&-
wait "$tee_pid" 2>/dev/null
exit $((failed_steps > 125 ? 125 : failed_steps))
