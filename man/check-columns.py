#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The table columns that vprofctl(1) lists, checked against the table schema (common/profile/table-schema.h),
as check-options.py checks the options: in OUTPUT, "Columns", each "report --by KIND" entry must name the
headings of that table's columns, in the schema's order (optional and symbols columns included, JSON-only ones
left out); the "report --values VIEW" entries the name columns of every kind (the first) and the headings of
the view's values in order; in "JSON", each table's entry must name the JSON keys of its rows' name part in
order, and every key it names must be one of the kind's. Every disagreement is printed; the test fails on any.

Usage: check-columns.py DUMP-TABLE-SCHEMA VPROFCTL.1"""
import re
import shlex
import subprocess
import sys

problems = []


def problem(text):
    problems.append(text)


def load_schema(dump):
    """(kind, part) -> [column dict] in the schema's order."""
    out = subprocess.run([dump], check=True, capture_output=True, text=True).stdout
    schema = {}
    for line in out.splitlines():
        kind, part, name, heading, heading_ms, key, flags = line.split("\t")
        schema.setdefault((kind, part), []).append(
            {"name": name, "heading": heading, "heading_ms": heading_ms, "key": key, "flags": set(flags.split(","))})
    return schema


def unescape(s):
    return s.replace("\\-", "-").replace("\\(mu", "x").replace("\\(lq", '"').replace("\\(rq", '"')


def bold_words(line):
    """The bold text of one roff line: .B's words, .BR's odd and .RB's even arguments, \\fB...\\fR runs."""
    found = []
    if line.startswith((".B ", ".BR ", ".RB ")):
        macro, _, rest = line.partition(" ")
        try:
            args = shlex.split(rest.replace("\\", "\\\\"))
        except ValueError:
            args = rest.split()
        args = [a.replace("\\\\", "\\") for a in args]
        if macro == ".B":
            text = " ".join(args)
            found.append(re.sub(r"\\f[BRI].*", "", text))
            found += re.findall(r"\\fB(.*?)\\f[RP]", text)
        else:
            start = 0 if macro == ".BR" else 1
            found += args[start::2]
    else:
        found += re.findall(r"\\fB(.*?)\\f[RP]", line)
    return [unescape(w).strip() for w in found]


def sections(lines, name):
    """The lines of the .SS section name."""
    out, inside = [], False
    for line in lines:
        if line.startswith((".SS ", ".SH ")):
            inside = line[4:].strip().strip('"') == name
            continue
        if inside:
            out.append(line)
    return out


def tp_blocks(lines):
    """(tag, body lines) of each .TP entry."""
    blocks, i = [], 0
    while i < len(lines):
        if lines[i] == ".TP" and i + 1 < len(lines):
            tag = unescape(lines[i + 1])
            body = []
            i += 2
            while i < len(lines) and lines[i] not in (".TP", ".PP") and not lines[i].startswith(".S"):
                body.append(lines[i])
                i += 1
            blocks.append((tag, body))
        else:
            i += 1
    return blocks


KINDS = {"function": "functions", "module": "modules", "thread": "threads", "process": "processes"}


def check_columns(schema, lines):
    headings = {c["heading"] for cols in schema.values() for c in cols}
    headings |= {c["heading_ms"] for cols in schema.values() for c in cols if c["heading_ms"] != "-"}
    seen = set()
    for tag, body in tp_blocks(sections(lines, "Columns")):
        listed = [w for line in body for w in bold_words(line) if w in headings]
        m = re.match(r"\.B report --by (\w+)", tag)
        if m and m.group(1) in KINDS:
            kind = KINDS[m.group(1)]
            seen.add(kind)
            want = [c["heading"] for c in schema[(kind, "columns")] if "json-only" not in c["flags"]]
            if listed != want:
                problem(f"vprofctl(1) Columns, report --by {m.group(1)}: lists {listed}, the schema has {want}")
            continue
        m = re.match(r"\.B report --values (\w+)", tag)
        if m:
            view = m.group(1)
            seen.add("view-" + view)
            want = [c["heading"] for c in schema[("values", "view-" + view)]]
            if view == "elapsed":
                # The first entry names the name part of each kind's row.
                names = [c["heading"] for kind in KINDS.values() for c in schema[(kind, "names")]
                         if not c["flags"] & {"json-only", "optional"}]
                want = names + want
            if listed != want:
                problem(f"vprofctl(1) Columns, report --values {view}: lists {listed}, the schema has {want}")
    for kind in list(KINDS.values()) + ["view-elapsed", "view-application", "view-all"]:
        if kind not in seen:
            problem(f"vprofctl(1) Columns: no entry for the {kind} table")


def check_json(schema, lines):
    seen = set()
    for tag, body in tp_blocks(sections(lines, "JSON")):
        m = re.match(r"\.B (functions|modules|threads|processes)$", tag)
        if not m:
            continue
        kind = m.group(1)
        seen.add(kind)
        keys = [c["key"] for c in schema[(kind, "columns")] if c["key"] != "-"]
        all_keys = {c["key"] for (k, part), cols in schema.items() if part == "columns" for c in cols}
        listed = [w for line in body for w in bold_words(line) if w in all_keys]
        names = [c["key"] for c in schema[(kind, "names")] if c["key"] != "-"]
        for k in listed:
            if k not in keys:
                problem(f"vprofctl(1) JSON, {kind}: {k} is not a key of its rows")
        named = [k for k in listed if k in names]
        if named != names:
            problem(f"vprofctl(1) JSON, {kind}: names the keys {named} of the rows' name part, the schema has {names}")
    for kind in KINDS.values():
        if kind not in seen:
            problem(f"vprofctl(1) JSON: no entry for {kind}")


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    schema = load_schema(sys.argv[1])
    with open(sys.argv[2], encoding="utf-8") as f:
        lines = f.read().splitlines()
    check_columns(schema, lines)
    check_json(schema, lines)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
