#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Where vprofd's memory goes: `vprofctl status` breaks its RSS down (the Memory property), and the parts come from
real counters: the RSS as the kernel has it, the BPF maps as /proc/PID/smaps has them, the daemon's tables and
windows non-zero once a target has samples, and no more in all than the RSS. The unwind arena (32 MiB by default)
is kernel memory, not mapped into the daemon: its mapping would put every page of it in the RSS."""
import os
import re
import time

import vprof_env

ENV = None
SECONDS = 4


def proc_status_bytes(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise AssertionError(f"no {key} in /proc/{pid}/status")


def smaps_bpf_maps(pid):
    """(resident bytes, mappings) of the BPF maps mapped into pid."""
    rss = n = 0
    in_map = False
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
                in_map = "anon_inode:bpf-map" in line
                n += in_map
            elif in_map and line.startswith("Rss:"):
                rss += int(line.split()[1]) * 1024
    return rss, n


PARTS = ["tables", "windows", "unwind", "symbols", "bpf_maps", "code", "malloc_free", "other"]


class MemoryBreakdown(vprof_env.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.demo = ENV.spawn_demo("--seconds", SECONDS + 30, "--threads", 2)
        r = ENV.ctl("attach", cls.demo.pid)
        assert r.returncode == 0, r.stderr
        ENV.go(cls.demo)
        time.sleep(SECONDS)  # a few closed seconds in the window, symbols and unwind tables loaded
        cls.status = ENV.ctl_json("status")
        cls.text = ENV.ctl("status").stdout

    @classmethod
    def tearDownClass(cls):
        ENV.ctl("detach", cls.demo.pid)
        cls.demo.kill()
        cls.demo.wait()

    def test_parts_add_up_to_no_more_than_the_rss(self):
        m = self.status["memory"]
        for key in PARTS + ["rss", "peak_rss", "bpf_mappings", "unwind_arena"]:
            self.assertIn(key, m)
            self.assertIsInstance(m[key], int)
        self.assertGreater(m["rss"], 0)
        self.assertLessEqual(m["rss"], m["peak_rss"])
        self.assertLessEqual(sum(m[k] for k in PARTS), m["rss"], m)
        print("memory: " + ", ".join(f"{k} {m[k] / 2**20:.2f} MiB" for k in ["rss", "peak_rss"] + PARTS))

    def test_counted_parts_are_there(self):
        m = self.status["memory"]
        # The demo's samples are in its tables and its window's closed seconds; its functions and the kernel's
        # symbols in the symbol part; the program and libc in the file-backed part.
        self.assertGreater(m["tables"], 0)
        self.assertGreater(m["windows"], 0)
        self.assertEqual(m["windows"], self.status["window_memory"])
        self.assertGreater(m["symbols"], 0)
        self.assertGreater(m["code"], 0)

    def test_rss_is_the_kernels(self):
        # Read a moment apart from the daemon's own reading: the same process, within a quarter.
        m = self.status["memory"]
        rss = proc_status_bytes(ENV.daemon.pid, "VmRSS")
        self.assertLess(abs(rss - m["rss"]), rss / 4, (rss, m["rss"]))
        self.assertLessEqual(m["peak_rss"], proc_status_bytes(ENV.daemon.pid, "VmHWM"))

    def test_bpf_maps_as_smaps_has_them(self):
        # The maps stay mapped at one size; a write to the arena maps a slice of it for a moment, so a reading
        # that caught one is taken again.
        for _ in range(10):
            m = ENV.ctl_json("status")["memory"]
            rss, n = smaps_bpf_maps(ENV.daemon.pid)
            if (rss, n) == (m["bpf_maps"], m["bpf_mappings"]):
                break
            time.sleep(0.2)
        self.assertEqual((m["bpf_maps"], m["bpf_mappings"]), (rss, n))
        self.assertGreater(m["bpf_mappings"], 0)  # the ring buffer at least

    def test_unwind_arena_is_not_in_the_rss(self):
        m = self.status["memory"]
        self.assertEqual(m["unwind_arena"], self.status["unwind_table_size"])
        self.assertGreater(m["unwind_arena"], 0)
        # The ring buffer (mapped twice) and the small maps, not the arena.
        self.assertLess(m["bpf_maps"], m["unwind_arena"] / 2)

    def test_text_line(self):
        line = next((l for l in self.text.splitlines() if l.strip().startswith("Memory:")), None)
        self.assertIsNotNone(line, self.text)
        self.assertRegex(line, r"Memory: RSS [0-9.]+ MiB \(tables [0-9.]+, windows [0-9.]+, unwind [0-9.]+, "
                               r"symbols [0-9.]+, BPF maps [0-9.]+, code [0-9.]+, malloc free [0-9.]+, "
                               r"other [0-9.]+\), peak [0-9.]+ MiB; unwind arena [0-9]+ MiB of kernel memory$")


def setUpModule():
    global ENV
    ENV = vprof_env.start_module_env(frequency=99)


if __name__ == "__main__":
    vprof_env.main()
