# Cross-compiling for AArch64 Linux on an x86-64 Debian machine, and running the results under
# qemu-user (scripts/cross_aarch64.py uses it):
#   apt-get install g++-aarch64-linux-gnu qemu-user
#   dpkg --add-architecture arm64 && apt-get update && apt-get install libboost-context-dev:arm64
# Without the arm64 Boost the simulator falls back to ucontext fibers (no native AArch64 switch).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# Debian's multiarch: arm64 packages install their libraries and CMake packages under
# /usr/lib/aarch64-linux-gnu, which find_package then prefers to the machine's own.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# CTest (and catch_discover_tests, which lists a test program's cases by running it) run the
# programs under qemu-aarch64, through the script that picks their C library and address space.
set(CMAKE_CROSSCOMPILING_EMULATOR ${CMAKE_CURRENT_LIST_DIR}/../../scripts/qemu-aarch64.sh)
