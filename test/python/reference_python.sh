#!/bin/sh
# The reference interpreter of the tests (PyTorch, LightGBM, TensorBoard, matplotlib), chosen when a
# test runs, not when CMake configured: the venv of `scripts/setup --reference` (.deps/refenv) when it
# exists, else Debian's python3. README command 1 configures build/ before command 2 makes the venv,
# and a path fixed at configure time kept those tests on python3, where they skipped.
# When the venv exists, a reference test must not skip: exit 77 (a module missing) becomes a failure.
# usage: reference_python.sh PYTHON_ARGS...
refenv=$(cd "$(dirname "$0")/../.." && pwd)/.deps/refenv
if [ ! -x "$refenv/bin/python" ]; then
  exec /usr/bin/python3 "$@"
fi
"$refenv/bin/python" "$@"
rc=$?
if [ "$rc" -eq 77 ]; then
  echo "FAIL: $refenv exists but lacks a module this test needs (it would have skipped); run scripts/setup --reference" >&2
  exit 1
fi
exit "$rc"
