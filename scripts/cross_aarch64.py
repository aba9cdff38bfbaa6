#!/usr/bin/env python3
"""The simulator on AArch64 Linux, from an x86-64 Debian machine: cross-compiles its Catch2 tests
and p14 with g++-aarch64-linux-gnu in build-aarch64/, runs the tests under qemu-aarch64, and runs
`check p14 --simple` on the solution and on a planted race through qemu.

    python3 scripts/cross_aarch64.py [--build-dir DIR]

The same as the opt-in step of `python3 scripts/puzzle.py test --aarch64`. As root with apt-get it
installs g++-aarch64-linux-gnu, qemu-user and libboost-context-dev:arm64 (multiarch) when they are
missing; otherwise it prints the commands and exits 2.
"""

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from puzzlelib import platforms  # noqa: E402
from puzzlelib.common import fmt_seconds  # noqa: E402


def main(argv):
    root = Path(__file__).resolve().parent.parent
    build = root / "build-aarch64"
    if argv[:1] == ["--build-dir"] and len(argv) == 2:
        build = Path(argv[1]).resolve()
    elif argv:
        print(__doc__.strip())
        return 0 if argv[0] in ("-h", "--help") else 2
    start = time.monotonic()
    is_root = hasattr(os, "geteuid") and os.geteuid() == 0
    ok, why = platforms.aarch64_step(root, build, platforms.default_jobs(), install=is_root)
    took = fmt_seconds(time.monotonic() - start)
    if ok is None:
        print("aarch64: skipped: %s" % why, file=sys.stderr)
        return 2
    print("aarch64 (qemu): %s, %s%s" % ("ok" if ok else "FAILED", took, "" if ok else " (%s)" % why))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
