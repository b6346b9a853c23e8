#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The readers' group: a real user in a real group `vprof` (made by the test after the daemon started, removed
after) reads every target root attached, and changes none; the same user without the group reads nothing of
root's. The caller runs vprofctl through setpriv with the group as a supplementary group, as systemd's
SupplementaryGroups= gives it. Prints each call as 'readers:' lines."""
import grp
import json
import os
import re
import subprocess
import sys
import unittest

import vprof_env

ENV = None
GROUP = "vprof"
USER = "vprof-test-reader"
DENIED = re.compile(r"^vprofctl: Access denied")


def group_gid():
    try:
        return grp.getgrnam(GROUP).gr_gid
    except KeyError:
        return None


class Readers(vprof_env.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rows = []
        # A machine with the package installed has the group already: it stays, and the test of its removal
        # is skipped.
        cls.made_group = group_gid() is None
        if cls.made_group:
            subprocess.run(["groupadd", "--system", GROUP], check=True)
        cls.gid = group_gid()
        cls.uid = vprof_env.add_user(USER)
        # Root's targets: one process alone, one followed with its children (a group, named by its PID).
        cls.alone = ENV.spawn_demo("--seconds", "60")
        cls.parent = ENV.spawn_demo("--seconds", "60")
        for args in (["attach", cls.alone.pid], ["attach", "--children", cls.parent.pid]):
            r = ENV.ctl(*args)
            assert r.returncode == 0, r.stderr
        ENV.go(cls.alone)
        ENV.go(cls.parent)

    @classmethod
    def tearDownClass(cls):
        for line in cls.rows:
            print(f"\nreaders: {line}", end="", file=sys.stderr)
        for p in ENV.children:
            if p.poll() is None:
                p.kill()
                p.wait()
        vprof_env.remove_user(USER)
        if cls.made_group:
            subprocess.run(["groupdel", GROUP], capture_output=True)

    def run_as(self, who, groups, *args):
        """vprofctl as the test user with these supplementary groups (setpriv's --groups; none: cleared)."""
        group_args = [f"--groups={','.join(map(str, groups))}"] if groups else ["--clear-groups"]
        cmd = ["setpriv", f"--reuid={self.uid}", f"--regid={self.uid}", *group_args,
               ENV.public_copy(os.environ["VPROFCTL"]), *map(str, args)]
        r = subprocess.run(cmd, env=ENV.env, capture_output=True, text=True, timeout=30)
        shown = " ".join(str(a) for a in args).replace(str(self.alone.pid), "PID").replace(
            str(self.parent.pid), "PARENT")
        self.rows.append(f"{who:<14} {shown:<40} -> {'ok' if r.returncode == 0 else r.stderr.strip()}")
        return r

    def reader(self, *args):
        return self.run_as("in vprof", [self.gid], *args)

    def stranger(self, *args):
        return self.run_as("not in vprof", [], *args)

    def assert_refused(self, r):
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertRegex(r.stderr, DENIED)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)

    def test_reader_reads_every_target(self):
        for target in (self.alone.pid, self.parent.pid):
            for extra in ([], ["--by", "module"], ["--by", "thread"], ["--by", "stack"], ["--values", "all"],
                          ["--by", "process"]):
                r = self.reader("--json", "report", target, *extra)
                self.assertEqual(r.returncode, 0, r.stderr)
        # The lists are what root's are.
        listed = self.reader("--json", "list")
        self.assertEqual(listed.returncode, 0, listed.stderr)
        mine = json.loads(listed.stdout)
        roots = ENV.ctl_json("list")
        self.assertEqual(sorted(t["pid"] for t in mine["targets"]), sorted(t["pid"] for t in roots["targets"]))
        self.assertIn(self.alone.pid, [t["pid"] for t in mine["targets"]])
        self.assertEqual(len(mine.get("groups", [])), len(roots.get("groups", [])))
        self.assertGreater(len(mine.get("groups", [])), 0)
        status = self.reader("--json", "status")
        self.assertEqual(status.returncode, 0, status.stderr)
        self.assertEqual(json.loads(status.stdout)["targets"], ENV.ctl_json("status")["targets"])
        # Every target merged, as root reads them.
        self.assertEqual(self.reader("report").returncode, 0)
        self.assertIn(f"Group {GROUP} (GID {self.gid})", ENV.log_text())

    def test_reader_changes_nothing(self):
        other = ENV.spawn_demo("--seconds", "60")
        for args in (["attach", other.pid], ["attach", "--children", other.pid], ["reset", self.alone.pid],
                     ["detach", self.alone.pid], ["reset", self.parent.pid], ["detach", self.parent.pid]):
            self.assert_refused(self.reader(*args))
        pids = [t["pid"] for t in ENV.ctl_json("list")["targets"]]
        self.assertIn(self.alone.pid, pids)
        self.assertIn(self.parent.pid, pids)
        self.assertNotIn(other.pid, pids)

    def test_without_the_group_nothing_is_read(self):
        for args in (["report", self.alone.pid], ["report", self.parent.pid],
                     ["report", self.alone.pid, "--by", "stack"]):
            self.assert_refused(self.stranger(*args))
        listed = self.stranger("--json", "list")
        self.assertEqual(listed.returncode, 0, listed.stderr)
        data = json.loads(listed.stdout)
        self.assertEqual(data["targets"], [])
        self.assertEqual(data.get("groups", []), [])

    def test_primary_group_counts(self):
        # The bus's UnixGroupIDs hold the primary group too (SO_PEERCRED's GID): vprof as the primary group,
        # with no supplementary group, is membership as well.
        cmd = ["setpriv", f"--reuid={self.uid}", f"--regid={self.gid}", "--clear-groups",
               ENV.public_copy(os.environ["VPROFCTL"]), "report", str(self.alone.pid)]
        r = subprocess.run(cmd, env=ENV.env, capture_output=True, text=True, timeout=30)
        self.rows.append(f"{'primary vprof':<14} {'report PID':<40} -> "
                         f"{'ok' if r.returncode == 0 else r.stderr.strip()}")
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_zz_group_removed_grants_nothing(self):
        if not self.made_group:
            self.skipTest(f"the group {GROUP} is the machine's own")
        said = ENV.log_text().count(f"No group {GROUP}")
        subprocess.run(["groupdel", GROUP], check=True)
        try:
            self.assert_refused(self.reader("report", self.alone.pid))
            self.assertEqual(ENV.log_text().count(f"No group {GROUP}"), said + 1)
        finally:
            subprocess.run(["groupadd", "--system", "--gid", str(self.gid), GROUP], check=True)
        self.assertEqual(self.reader("report", self.alone.pid).returncode, 0)


def setUpModule():
    global ENV
    ENV = vprof_env.start_module_env(frequency=99)


if __name__ == "__main__":
    vprof_env.main()
