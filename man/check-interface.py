#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The interface block of org.vprof.Profiler1(5) must be what the interface XML says, member for member, so
that the page cannot drift from the daemon's contract. Usage: check-interface.py XML PAGE"""
import sys
import xml.etree.ElementTree as ET


def expected_block(xml_path):
    iface = ET.parse(xml_path).getroot().find("interface")
    lines = ["node /org/vprof/Profiler1 {", f"  interface {iface.get('name')} {{", "    methods:"]
    for m in iface.findall("method"):
        args = [f"{'in ' if a.get('direction') == 'in' else 'out'} {a.get('type')} {a.get('name')}"
                for a in m.findall("arg")]
        head = f"      {m.get('name')}("
        if not args:
            lines.append(head + ");")
            continue
        for i, arg in enumerate(args):
            prefix = head if i == 0 else " " * len(head)
            lines.append(prefix + arg + (");" if i == len(args) - 1 else ","))
    lines.append("    properties:")
    for p in iface.findall("property"):
        for a in p.findall("annotation"):
            lines.append(f"      @{a.get('name')}(\"{a.get('value')}\")")
        value = "'...'" if p.get("type") == "s" else "..."
        lines.append(f"      readonly {p.get('type')} {p.get('name')} = {value};")
    lines += ["  };", "};"]
    return lines


def page_block(page_path):
    with open(page_path) as f:
        text = f.read()
    start = text.index("node /org/vprof/Profiler1 {")
    end = text.index(".EE", start)
    return text[start:end].replace("\\(aq", "'").replace("\\-", "-").rstrip("\n").split("\n")


def main():
    want, have = expected_block(sys.argv[1]), page_block(sys.argv[2])
    if want == have:
        return 0
    for i in range(max(len(want), len(have))):
        w = want[i] if i < len(want) else "<none>"
        h = have[i] if i < len(have) else "<none>"
        if w != h:
            print(f"{sys.argv[2]}: line {i + 1} of the interface block differs from {sys.argv[1]}:\n"
                  f"  XML says:  {w}\n  page says: {h}", file=sys.stderr)
            break
    return 1


if __name__ == "__main__":
    sys.exit(main())
