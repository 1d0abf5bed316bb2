#!/bin/sh
# The interpreter of the tests whose files zarr-python 3 writes (test_zarr_stores): the venv
# .deps/zarr3env of `scripts/setup --reference` (zarr 3 needs numpy 2; the reference venv keeps
# Debian's numpy 1.24 for h5py and torch). Where the reference venv exists this one must too: a
# missing venv or module is then a failure, not a skip (exit 77).
# usage: zarr3_python.sh PYTHON_ARGS...
deps=$(cd "$(dirname "$0")/../.." && pwd)/.deps
if [ ! -x "$deps/zarr3env/bin/python" ]; then
  if [ -d "$deps/refenv" ]; then
    echo "FAIL: $deps/zarr3env is missing; run scripts/setup --reference" >&2
    exit 1
  fi
  echo "zarr3_python.sh: no $deps/zarr3env (scripts/setup --reference)"
  exit 77
fi
"$deps/zarr3env/bin/python" -W ignore::UserWarning "$@"
rc=$?
if [ "$rc" -eq 77 ]; then
  echo "FAIL: $deps/zarr3env lacks a module this test needs (it would have skipped); run scripts/setup --reference" >&2
  exit 1
fi
exit "$rc"
