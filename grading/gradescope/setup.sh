#!/usr/bin/env bash
# Gradescope autograder setup for this course (docs/instructors.md, "Gradescope").
#
# Gradescope runs this once, as root, while it builds the autograder's Docker image (Ubuntu), with
# the autograder zip unpacked in /autograder/source: that zip is the class template (this course
# without solutions/) plus this file and run_autograder at its root. It installs the build tools
# and builds the harness, the simulator and the checkers once, by grading the template's own
# skeletons, so that each submission later compiles only its learner files.
set -euo pipefail
AUTOGRADER="${AUTOGRADER_ROOT:-/autograder}"
SOURCE="$AUTOGRADER/source"

export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends python3 cmake g++ ninja-build libboost-context-dev bubblewrap

# Every variant of the skeletons fails (that is expected); exit code 2 would mean the build broke.
python3 "$SOURCE/scripts/puzzle.py" grade --tree "$SOURCE" --pristine "$SOURCE" \
    --work-dir "$AUTOGRADER/work" --report-only --nvcc off
