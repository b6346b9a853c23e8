#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The options of vprofd, vprofctl and vprof-exporter, said in four places, must agree: each binary's --help, what the binary
accepts, the OPTIONS of its man page (vprofd(8), vprofctl(1)), the settings of vprofd.conf(5) with the shipped
systemd/vprofd.conf, and the commands that the Markdown documents show. Every disagreement is printed; the test
fails on any.

Usage: check-options.py --vprofd BIN --vprofctl BIN --source-root DIR"""
import argparse
import functools
import glob
import os
import re
import subprocess
import sys
import tempfile

# An option of a --help listing: "  -F, --frequency=HZ   ..." (vprofd), "  -h --help   ..." (vprofctl),
# "      --ring-size=MIB ..." (either).
HELP_OPTION = re.compile(r"^\s+(?:-([A-Za-z0-9]),?\s+)?--([a-z][a-z0-9-]*)(=\S+)?")
# In roff source a dash is "\-".
MAN_LONG = re.compile(r"\\-\\-([a-z][a-z0-9\\-]*[a-z0-9])")
MAN_SHORT = re.compile(r"(?<!\\-)\\-([A-Za-z])(?![A-Za-z0-9\\])")
# What marks the binary's "no such option" error: vprofd "Unknown option '--x'.", vprofctl "Unknown or
# ambiguous option '--x'".
UNKNOWN_OPTION = re.compile(r"Unknown (or ambiguous )?option")
UNKNOWN_SETTING = "unknown setting"
# Options that are not settings of vprofd.conf.
NOT_SETTINGS = {"config", "verbose", "help", "version"}

problems = []


def problem(text):
    problems.append(text)


class Options:
    """One binary's options as its --help lists them: long name -> (short letter or None, takes an argument)."""

    def __init__(self, name, path):
        self.name, self.path = name, path
        out = run([path, "--help"]).stdout
        self.long = {}
        for line in out.splitlines():
            m = HELP_OPTION.match(line)
            if m:
                self.long[m.group(2)] = (m.group(1), m.group(3) is not None)
        if not self.long:
            problem(f"{name} --help: no option found in:\n{out}")
        self.short = {s: name for name, (s, _) in self.long.items() if s}

    def accepts(self, option, takes_arg):
        """Whether the binary knows the option: run it with a value that no option accepts, so that it stops at
        the parsing, with an error that says whether the option is unknown. vprofd also gets --frequency=0,
        which it finds invalid only after every option is known, so that it never starts."""
        arg = [option + "=@invalid@"] if takes_arg and option.startswith("--") else \
            [option, "@invalid@"] if takes_arg else [option]
        extra = {"vprofd": ["--frequency=0"], "vprof-exporter": ["--threads=0"]}.get(self.name, [])
        r = run([self.path, *arg, *extra])
        return not UNKNOWN_OPTION.search(r.stderr)


def run(cmd, **kwargs):
    # No bus for vprofctl to reach, should a command line ever get that far.
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS="unix:path=/nonexistent/vprof-check-options")
    return subprocess.run(cmd, capture_output=True, text=True, timeout=30, env=env, **kwargs)


def unescape(s):
    return s.replace("\\-", "-")


@functools.lru_cache(maxsize=None)
def man_sections(path):
    """Section name -> its lines (read once, so that a duplicate section is reported once)."""
    sections, current = {}, None
    with open(path) as f:
        for line in f.read().splitlines():
            if line.startswith(".SH "):
                current = line[4:].strip().strip('"')
                if current in sections:
                    problem(f"{path}: section {current} appears twice")
                sections[current] = []
            elif current:
                sections[current].append(line)
    return sections


def tags(lines):
    """The tag line of each .TP paragraph."""
    return [lines[i + 1] for i, line in enumerate(lines[:-1]) if line.startswith(".TP")]


def check_man_page(page, opts, all_long):
    sections = man_sections(page)
    if "OPTIONS" not in sections:
        problem(f"{page}: no OPTIONS section")
        return
    man_long, man_short = {}, set()
    for tag in tags(sections["OPTIONS"]):
        longs = [unescape(x) for x in MAN_LONG.findall(tag)]
        shorts = MAN_SHORT.findall(tag)
        for name in longs:
            man_long[name] = shorts[0] if shorts else None
        man_short.update(shorts)
    for name, (short, _) in sorted(opts.long.items()):
        if name not in man_long:
            problem(f"{page}: OPTIONS lacks --{name}, which `{opts.name} --help` lists")
        elif man_long[name] != short:
            problem(f"{page}: OPTIONS gives --{name} the short option {man_long[name] and '-' + man_long[name]}, "
                    f"`{opts.name} --help` gives {short and '-' + short}")
    for name in sorted(man_long):
        if name not in opts.long:
            problem(f"{page}: OPTIONS has --{name}, which `{opts.name} --help` does not list")
    for s in sorted(man_short - set(opts.short)):
        problem(f"{page}: OPTIONS has -{s}, which `{opts.name} --help` does not list")

    # Whatever the page names elsewhere (its synopsis, its text) must be an option of one of the two programs;
    # the synopsis, of this one.
    for line in sections.get("SYNOPSIS", []):
        for name in map(unescape, MAN_LONG.findall(line)):
            if name not in opts.long:
                problem(f"{page}: SYNOPSIS has --{name}, which `{opts.name} --help` does not list")
        for s in MAN_SHORT.findall(line):
            if s not in opts.short:
                problem(f"{page}: SYNOPSIS has -{s}, which `{opts.name} --help` does not list")
    check_mentions(page, all_long)


def check_mentions(page, all_long):
    with open(page) as f:
        for number, line in enumerate(f, 1):
            for name in map(unescape, MAN_LONG.findall(line)):
                if name not in all_long:
                    problem(f"{page}:{number}: --{name} is an option of none of vprofd, vprofctl, vprof-exporter")


def check_probes(opts, documented):
    """Every option that --help lists or a page documents is one the binary accepts."""
    for name in sorted(set(opts.long) | documented):
        takes_arg = opts.long.get(name, (None, True))[1]
        if not opts.accepts("--" + name, takes_arg):
            problem(f"{opts.path}: does not accept --{name}")
    for s, name in sorted(opts.short.items()):
        if not opts.accepts("-" + s, opts.long[name][1]):
            problem(f"{opts.path}: does not accept -{s}")


def documented_long(page):
    sections = man_sections(page)
    return {unescape(x) for tag in tags(sections.get("OPTIONS", [])) for x in MAN_LONG.findall(tag)}


def setting_keys_of_source(root):
    """The keys vprofd reads, from its table in daemon/settings.c."""
    with open(os.path.join(root, "daemon", "settings.c")) as f:
        text = f.read()
    table = text[text.index("settings_info[] = {"):]
    table = table[:table.index("};")]
    return set(re.findall(r'^\s+(?:U32\(|\{ )"([A-Za-z]+)"', table, re.M))


def check_settings(root, vprofd):
    page = os.path.join(root, "man", "vprofd.conf.5")
    sections = man_sections(page)
    lines = sections.get("SETTINGS", [])
    man = {}  # key -> the option its paragraph names
    key = None
    for i, line in enumerate(lines):
        if i > 0 and lines[i - 1].startswith(".TP"):
            m = re.match(r"\.BI? ([A-Za-z]+)=", line)
            key = m.group(1) if m else None
            if key:
                man[key] = None
        elif key and man[key] is None:
            m = re.match(r"\.RB \( \\-\\-([a-z\\-]+) \)", line)
            if m:
                man[key] = unescape(m.group(1))
    source = setting_keys_of_source(root)
    with open(os.path.join(root, "systemd", "vprofd.conf")) as f:
        shipped = set(re.findall(r"^#?([A-Za-z]+)=", f.read(), re.M))
    for k in sorted(source - set(man)):
        problem(f"{page}: SETTINGS lacks {k}=, which daemon/settings.c reads")
    for k in sorted(set(man) - source):
        problem(f"{page}: SETTINGS has {k}=, which daemon/settings.c does not read")
    for k in sorted(source ^ shipped):
        where = "lacks" if k in source else "has"
        problem(f"systemd/vprofd.conf: {where} {k}=, unlike daemon/settings.c")
    # The binary itself: a key it does not know stops it with "unknown setting" before anything starts.
    with tempfile.TemporaryDirectory() as tmp:
        conf = os.path.join(tmp, "vprofd.conf")
        for k in sorted(man):
            with open(conf, "w") as f:
                f.write(f"[Daemon]\n{k}=@invalid@\n")
            r = run([vprofd.path, f"--config={conf}", "--frequency=0"])
            if UNKNOWN_SETTING in r.stderr:
                problem(f"{page}: SETTINGS has {k}=, which {vprofd.path} does not know: {r.stderr.strip()}")
    named = {}
    for k, option in sorted(man.items()):
        if option is None:
            problem(f"{page}: {k}= does not name its option on a line of its own, .RB ( \\-\\-option )")
        elif option not in vprofd.long:
            problem(f"{page}: {k}= names --{option}, which `vprofd --help` does not list")
        else:
            named.setdefault(option, []).append(k)
    for option in sorted(set(vprofd.long) - NOT_SETTINGS):
        if option not in named:
            problem(f"{page}: no setting names --{option}")
        elif len(named[option]) > 1:
            problem(f"{page}: --{option} is named by {', '.join(named[option])}")


# --- Markdown ---------------------------------------------------------------------------------------------------
# An option listing, as a --help dump has: an indented option followed by two spaces and its description.
LISTING = re.compile(r"^\s+(?:-[A-Za-z],?\s+)?--[a-z][a-z-]*(?:=\S+)?\s{2,}\S")
COMMAND = re.compile(r"(?:^|[\s/($;|&])(vprofd|vprofctl)((?:\s+[^\s|;&)`]+)*)")


def code_of(path):
    """(line number, text) of the code in a Markdown file: fenced blocks and inline code spans."""
    with open(path) as f:
        lines = f.read().splitlines()
    fenced = False
    for number, line in enumerate(lines, 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            yield number, line, True
        else:
            for span in re.findall(r"`([^`]+)`", line):
                yield number, span, False


def check_markdown(path, programs):
    for number, code, fenced in code_of(path):
        if fenced and LISTING.match(code):
            problem(f"{path}:{number}: lists options like a --help text; link to the man page instead: {code!r}")
            continue
        for m in COMMAND.finditer(code):
            opts = programs[m.group(1)]
            for word in m.group(2).split():
                if word.startswith("--") and len(word) > 2:
                    name = word[2:].split("=", 1)[0]
                    if name not in opts.long:
                        problem(f"{path}:{number}: `{m.group(1)}` has no option --{name}")
                elif re.fullmatch(r"-[A-Za-z]", word) and word[1] not in opts.short:
                    problem(f"{path}:{number}: `{m.group(1)}` has no option {word}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vprofd", required=True)
    ap.add_argument("--vprofctl", required=True)
    ap.add_argument("--vprof-exporter", required=True)
    ap.add_argument("--source-root", required=True)
    a = ap.parse_args()
    root = a.source_root
    programs = {"vprofd": Options("vprofd", a.vprofd), "vprofctl": Options("vprofctl", a.vprofctl),
                "vprof-exporter": Options("vprof-exporter", a.vprof_exporter)}
    all_long = set(programs["vprofd"].long) | set(programs["vprofctl"].long) | set(programs["vprof-exporter"].long)

    for name, page in (("vprofd", "vprofd.8"), ("vprofctl", "vprofctl.1"), ("vprof-exporter", "vprof-exporter.8")):
        path = os.path.join(root, "man", page)
        check_man_page(path, programs[name], all_long)
        check_probes(programs[name], documented_long(path))
    check_mentions(os.path.join(root, "man", "vprofd.conf.5"), all_long)
    check_settings(root, programs["vprofd"])

    docs = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md"))) + \
        sorted(glob.glob(os.path.join(root, "*", "README.md")))
    for path in docs:
        check_markdown(path, programs)

    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print(f"check-options: {len(problems)} disagreement(s) between --help, the man pages and the documents",
              file=sys.stderr)
        return 1
    print(f"check-options: vprofd {len(programs['vprofd'].long)} options, vprofctl "
          f"{len(programs['vprofctl'].long)} options, vprof-exporter {len(programs['vprof-exporter'].long)} "
          f"options: --help, the binaries, the man pages, vprofd.conf(5) and "
          f"{len(docs)} documents agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
