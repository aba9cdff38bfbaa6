#!/bin/sh
# Runs an AArch64 Linux program under qemu-aarch64 (user mode): the emulator of the cross build
# (harness/cmake/aarch64-linux-gnu.cmake) and of scripts/cross_aarch64.py's `check` runs.
#   scripts/qemu-aarch64.sh PROGRAM [ARGS...]
#
# The C library comes from one place: Debian's multiarch arm64 one (/lib/aarch64-linux-gnu, from
# libc6:arm64, which Boost for arm64 brings) when it is installed, else the cross toolchain's
# (/usr/aarch64-linux-gnu). Never a mix: qemu's -L root is searched first and the machine's own
# files after it, so with both installed the loader came from the root and libc from multiarch,
# and the program hung at its first thread or fork.
#
# The address space is limited to 16 GiB (RLIMIT_AS). The simulator then reserves a device memory
# arena of 4 GiB instead of 1 TiB (harness/sim/src/memory.cpp keeps to half of what the limit
# leaves), which qemu maps in a moment instead of about 40 seconds per program.
set -e
ulimit -v 16777216
if [ -e /lib/ld-linux-aarch64.so.1 ]; then
  exec qemu-aarch64 "$@"
fi
exec qemu-aarch64 -L /usr/aarch64-linux-gnu "$@"
