#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""vprofctl links the basic and profile layers only (docs/ARCHITECTURE.md, "Layers"): none of the code that
parses other processes' files. Checked on the built binary, as it would run: no libelf, liblzma or libiberty
(nor nettle, the unwind layer's) among the libraries it asks for (readelf's NEEDED; libiberty is static, so also none of its symbols), and no
function of the symbols or unwind layers linked in.

liblzma does show in `ldd vprofctl`: Debian's libsystemd.so.0 needs it for the journal, and the client needs
libsystemd for sd-bus. That is libsystemd's dependency, not the client's, and it is not checked here.

Usage: check-client-links.py VPROFCTL. Prints one line per finding and exits 1 if any.
"""

import subprocess
import sys

FORBIDDEN_LIBRARIES = ("libelf", "liblzma", "libiberty", "libbpf", "libdebuginfod", "libnettle")
# A function of each library and layer that must not be in the binary (static linking leaves no NEEDED entry).
FORBIDDEN_SYMBOLS = ("elf_begin", "lzma_stream_decoder", "cplus_demangle", "symbolizer_new", "eh_frame_",
                     "unwinder_step", "address_space_")


def main():
    exe = sys.argv[1]
    dynamic = subprocess.run(["readelf", "-d", exe], capture_output=True, text=True, check=True).stdout
    symbols = subprocess.run(["nm", "-a", exe], capture_output=True, text=True, check=True).stdout
    problems = []
    for line in dynamic.splitlines():
        if "(NEEDED)" in line and any(lib in line for lib in FORBIDDEN_LIBRARIES):
            problems.append(f"{exe}: needs {line.split('[')[-1].rstrip(']')}")
    for line in symbols.splitlines():
        name = line.split()[-1] if line.split() else ""
        if any(name.startswith(s) for s in FORBIDDEN_SYMBOLS):
            problems.append(f"{exe}: has {name} linked in")
    for p in problems:
        print(p)
    if problems:
        print(f"check-client-links: {len(problems)} finding(s): vprofctl must link common/ and common/profile/ only")
        return 1
    print("check-client-links: vprofctl needs no libelf, liblzma or libiberty, and links no symbols or unwind code")
    return 0


if __name__ == "__main__":
    sys.exit(main())
