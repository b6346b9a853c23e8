#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Damaged copies of a CPython interpreter for test-python-detect.c.

Usage: python-fixture.py MODE INPUT OUTPUT, MODE one of
  truncated  the first half of INPUT: its section headers (at the end) gone
  build-id   INPUT with another build-id (the first byte of NT_GNU_BUILD_ID's descriptor changed): a copy whose
             debug file cannot be found by build-id
"""

import os
import sys

# An ELF note of 64-bit files: namesz 4, descsz 20 (SHA-1), type NT_GNU_BUILD_ID (3), "GNU\0".
BUILD_ID_NOTE = bytes.fromhex("04000000" "14000000" "03000000") + b"GNU\0"


def main():
    mode, source, target = sys.argv[1:4]
    with open(source, "rb") as f:
        data = bytearray(f.read())
    if mode == "truncated":
        data = data[: len(data) // 2]
    elif mode == "build-id":
        at = data.find(BUILD_ID_NOTE)
        if at < 0:
            sys.exit(f"{source}: no build-id note")
        data[at + len(BUILD_ID_NOTE)] ^= 0xFF
    else:
        sys.exit(f"unknown mode {mode}")
    with open(target, "wb") as f:
        f.write(data)
    os.chmod(target, 0o755)


if __name__ == "__main__":
    main()
