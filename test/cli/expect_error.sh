#!/usr/bin/env bash
# Runs a command that must fail: checks a non-zero exit, the exact exit code, that stderr has exactly
# one line starting with "error: ", and that this line matches a regular expression.
# usage: expect_error.sh EXIT_CODE REGEX COMMAND...
set -u
want_rc=$1 regex=$2
shift 2
# stderr held in a variable, not a temporary file: tests write only under the build tree.
err=$("$@" 2>&1 >/dev/null)
rc=$?
lines=$(printf '%s\n' "$err" | grep -c '^error: ')
msg=$(printf '%s\n' "$err" | grep '^error: ')
status=0
if [ "$rc" -ne "$want_rc" ]; then echo "FAIL: exit code $rc, expected $want_rc"; status=1; fi
if [ "$lines" -ne 1 ]; then echo "FAIL: $lines 'error:' lines on stderr, expected exactly 1"; status=1; fi
if ! printf '%s\n' "$msg" | grep -Eq -- "$regex"; then echo "FAIL: message does not match /$regex/"; status=1; fi
echo "--- stderr:"; printf '%s\n' "$err"
exit $status
