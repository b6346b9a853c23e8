#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The layering rule of docs/ARCHITECTURE.md ("Layers"), checked on the sources.

Every #include of a C file or header in a layer's folder must name a header of a folder that the layer may use,
and an external library's header only in a layer that depends on that library; the folders' includes must form
no cycle; a header name belongs to one folder only (includes are flat, "elf-symbols.h", so a name shared by two
folders would be ambiguous). Inside a folder, its modules (a module: a .c file with the .h of the same name, and
X-internal.h, the private layout of module X, if there is one) form no circle either: module A depends on module
B when A's .c or .h includes B's .h, and a circle of such dependencies (a strongly connected component of more
than one module) is a violation, named as a walk through its modules in order, unless CIRCLES allows it as it
is. Meson already keeps the include directories of the layers a folder does not depend on out of its compiler's
path; this script also catches an include that happens to compile (a system header of a library the layer must
not need, a header found through another path) and says which rule it breaks.

Usage: check-layers.py [SOURCE_ROOT]. Prints one line per violation, path:line: message, and exits 1 if any.
"""

import os
import re
import sys

# Folder -> the folders whose headers its files may include (its own included), lowest layer first.
ALLOWED = {
    "common": ["common"],
    "common/symbols": ["common", "common/symbols"],
    "common/unwind": ["common", "common/symbols", "common/unwind"],
    "common/profile": ["common", "common/profile"],
    # CPython interpreters: their files' symbols and debug info, on the ELF readers.
    "common/python": ["common", "common/symbols", "common/python"],
    "daemon": ["common", "common/symbols", "common/unwind", "common/profile", "common/python", "daemon", "bpf"],
    "client": ["common", "common/profile", "client", "client/flamegraph", "client/pprof"],
    # The flame graph: on the client's bus library, under vprofctl and the exporter.
    "client/flamegraph": ["common", "common/profile", "client", "client/flamegraph"],
    # pprof files: on common/ and sd-bus alone, under vprofctl and the exporter.
    "client/pprof": ["common", "client/pprof"],
    # vprof-exporter: the client's bus library and the export libraries (client/pprof/, client/flamegraph/).
    "client/exporter": ["common", "common/profile", "client", "client/pprof", "client/flamegraph", "client/exporter"],
    "bpf": ["bpf"],
}

# Headers a folder may include from a folder outside its list: the BPF program shares the ABI header, and only it.
EXCEPTIONS = {
    "bpf": {"vprof-abi.h"},
}

# A folder that holds two layers: client/'s libraries (libvprofctl-report, libvprofctl-bus; their files by name
# prefix, as client/meson.build lists them) lie below the exports built on them (client/flamegraph/), and the
# program vprofctl, the folder's other files, above. The libraries' files may not include the exports' headers;
# the program's includes of them make no folder cycle.
SPLIT = {
    "client": {
        "above": {"client/flamegraph"},
        "library_files": ("bus-client", "diff-table.", "duration.", "report-table.", "top-lost.", "top-state."),
    },
}

# Headers that the build generates into a folder's build directory: bpf/meson.build's vmlinux.h (from the
# kernel's BTF) and the skeleton of the BPF program, the daemon's view of the BPF ABI.
GENERATED = {
    "vmlinux.h": "bpf",
    "vprof.skel.h": "bpf",
    # client/flamegraph/gen-assets.py's script and style sheet as C strings.
    "flamegraph-assets.h": "client/flamegraph",
    # protoc-c's code of client/pprof/profile.proto.
    "profile.pb-c.h": "client/pprof",
}

# External libraries by their headers (<...> includes); other <...> headers are the C library's and the kernel's.
EXTERNAL_HEADERS = [
    ("gelf.h", "libelf"),
    ("libelf.h", "libelf"),
    ("lzma.h", "liblzma"),
    ("libiberty/", "libiberty"),
    ("bpf/", "libbpf"),
    ("systemd/", "libsystemd"),
    ("elfutils/libdw.h", "libdw"),
    ("dwarf.h", "libdw"),
    ("elfutils/", "libdebuginfod"),
    ("libsmartcols.h", "smartcols"),
    ("json-c/", "json-c"),
    ("curses.h", "ncurses"),
    ("ncurses.h", "ncurses"),
    ("term.h", "ncurses"),
    ("check.h", "check"),
    ("microhttpd.h", "libmicrohttpd"),
    ("protobuf-c/", "protobuf-c"),
    ("zlib.h", "zlib"),
    ("nettle/", "nettle"),
]

# Folder -> the external libraries its own meson.build depends on; a folder may also include the headers of the
# libraries of the layers it uses, as their meson dependencies carry them.
EXTERNAL = {
    "common": set(),
    "common/symbols": {"libelf", "liblzma", "libiberty", "libdw"},
    "common/unwind": {"libelf", "nettle"},
    "common/profile": set(),
    "common/python": {"libelf", "libdw"},
    # elfutils/debuginfod.h only to check our declarations of the functions the daemon dlopen()s.
    "daemon": {"libbpf", "libsystemd", "libdebuginfod"},
    "client/pprof": {"libsystemd", "protobuf-c", "zlib"},
    "client": {"libsystemd", "smartcols", "json-c", "ncurses"},
    "client/flamegraph": {"libsystemd"},
    "client/exporter": {"libsystemd", "libmicrohttpd", "json-c"},
    "bpf": {"libbpf"},
}

# Circles of modules inside a folder that are known and not yet broken: folder -> list of sets of module names. Each
# entry must match a circle exactly, so that a new module joining it, a new circle, and an entry that no longer
# matches (the circle broken, or smaller) all fail. Issue 28 wants none; these are left to break.
CIRCLES = {
    # output-util.h includes output.h (for its types), output.c output-util.h (for the helpers).
    "client": [{"output", "output-util"}],
    # exporter-endpoints.h includes exporter-http.h (the request and response), exporter-http.c
    # exporter-endpoints.h (it routes to the handlers).
    "client/exporter": [{"exporter-endpoints", "exporter-http"}],
}

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def external_library(header):
    for prefix, library in EXTERNAL_HEADERS:
        if header == prefix or (prefix.endswith("/") and header.startswith(prefix)):
            return library
    return None


def sources(root, folder):
    path = os.path.join(root, folder)
    return sorted(os.path.join(folder, name) for name in os.listdir(path)
                  if name.endswith((".c", ".h")) and os.path.isfile(os.path.join(path, name)))


def find_cycles(graph):
    """The folders' include cycles, each as a list of folders, found by a depth-first search."""
    cycles, state, stack = [], {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return cycles


def strongly_connected(graph):
    """The strongly connected components of graph (node -> set of nodes) of more than one node (Tarjan)."""
    index, low, on_stack, stack, components = {}, {}, set(), [], []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.add(top)
                if top == node:
                    break
            if len(component) > 1:
                components.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(components, key=lambda c: sorted(c))


def circle_walk(graph, component):
    """A closed walk through every module of a strongly connected component: from its first module by name, on
    to the nearest module not yet on it, by a shortest path, until all are, and back to the first: the circle in
    order."""

    def path(start, goals):
        previous, queue = {start: None}, [start]
        while queue:
            node = queue.pop(0)
            for nxt in sorted(graph[node] & component):
                if nxt in goals:
                    steps = [nxt]
                    while node != start:
                        steps.append(node)
                        node = previous[node]
                    return steps[::-1]
                if nxt not in previous:
                    previous[nxt] = node
                    queue.append(nxt)
        raise AssertionError("not strongly connected")

    first = min(component)
    walk = [first]
    while not component <= set(walk):
        walk += path(walk[-1], component - set(walk))
    return walk + path(walk[-1], {first})


def module_circles(root, folder, paths):
    """The circles of the folder's modules, each with the walk through it."""
    names = {os.path.splitext(os.path.basename(path))[0] for path in paths}

    def module_of(name):
        # X-internal.h, the private half of module X (its layout for X's own files), belongs to X.
        if name.endswith("-internal") and name[:-len("-internal")] in names:
            return name[:-len("-internal")]
        return name

    graph = {module_of(name): set() for name in names}
    headers = {os.path.basename(p) for p in paths if p.endswith(".h")}
    for path in paths:
        module = module_of(os.path.splitext(os.path.basename(path))[0])
        with open(os.path.join(root, path), encoding="utf-8") as f:
            for line in f:
                m = INCLUDE.match(line)
                if m and m.group(1) == '"':
                    header = os.path.basename(m.group(2))
                    other = module_of(os.path.splitext(header)[0])
                    if header in headers and other != module:
                        graph[module].add(other)
    return [(component, circle_walk(graph, component)) for component in strongly_connected(graph)]


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    problems = []
    files = {folder: sources(root, folder) for folder in ALLOWED}

    # Which folder each header name belongs to.
    owner = dict(GENERATED)
    for folder, paths in files.items():
        for path in paths:
            name = os.path.basename(path)
            if name in owner and owner[name] != folder:
                problems.append(f"{path}: the name {name} is also {owner[name]}/{name}'s: names are unique across "
                                f"folders")
            owner.setdefault(name, folder)

    # Each file's includes, against its folder's rule; the folders' graph on the way.
    graph = {folder: set() for folder in ALLOWED}
    for folder, paths in files.items():
        allowed = ALLOWED[folder]
        libraries = set().union(*(EXTERNAL.get(f, set()) for f in allowed))
        for path in paths:
            with open(os.path.join(root, path), encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    kind, header = m.groups()
                    where = f"{path}:{number}"
                    if kind == "<":
                        library = external_library(header)
                        if library and library not in libraries:
                            problems.append(f"{where}: includes <{header}> of {library}, which {folder}/ does not "
                                            f"depend on (it may use: {', '.join(sorted(libraries)) or 'none'})")
                        continue
                    target = owner.get(os.path.basename(header))
                    if "/" in header:
                        problems.append(f'{where}: includes "{header}" by a path: includes are flat, the layer\'s '
                                        f"meson dependency gives the folder")
                    if target is None:
                        problems.append(f'{where}: includes "{header}", a header of no layer folder')
                        continue
                    split = SPLIT.get(folder)
                    if split and target in split["above"]:
                        if os.path.basename(path).startswith(split["library_files"]):
                            problems.append(f'{where}: includes "{header}" of {target}/, a layer above the '
                                            f"libraries of {folder}/")
                    elif target != folder:
                        graph[folder].add(target)
                    if target not in allowed and header not in EXCEPTIONS.get(folder, ()):
                        may = ", ".join(f + "/" for f in allowed)
                        extra = EXCEPTIONS.get(folder)
                        if extra:
                            may += ", " + ", ".join(sorted(extra))
                        problems.append(f'{where}: includes "{header}" of {target}/, which {folder}/ may not use '
                                        f"(it may use {may})")

    for cycle in find_cycles(graph):
        problems.append("include cycle between folders: " + " -> ".join(f + "/" for f in cycle))

    for folder, paths in files.items():
        allowed_circles = [set(c) for c in CIRCLES.get(folder, [])]
        found = module_circles(root, folder, paths)
        for component, walk in found:
            if component in allowed_circles:
                continue
            problems.append(f"{folder}/: circle of modules: " + " -> ".join(walk))
        for circle in allowed_circles:
            if circle not in [component for component, _ in found]:
                problems.append(f"{folder}/: the allowed circle of {', '.join(sorted(circle))} (CIRCLES) is no "
                                f"longer a circle: update the list")

    for problem in problems:
        print(problem)
    if problems:
        print(f"check-layers: {len(problems)} violation(s) of the layering rule (docs/ARCHITECTURE.md, \"Layers\")",
              file=sys.stderr)
        return 1
    print(f"check-layers: {sum(len(p) for p in files.values())} files in {len(files)} folders follow the layering "
          f"rule")
    return 0


if __name__ == "__main__":
    sys.exit(main())
