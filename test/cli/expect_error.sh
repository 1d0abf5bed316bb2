#!/usr/bin/env bash
# Runs a command that must fail: checks a non-zero exit, the exact exit code, that stderr has exactly
# one line starting with "error: ", and that this line matches a regular expression.
# usage: expect_error.sh EXIT_CODE REGEX COMMAND...
set -u
want_rc=$1 regex=$2
shift 2
err=$(mktemp)
"$@" >/dev/null 2>"$err"
rc=$?
lines=$(grep -c '^error: ' "$err")
msg=$(grep '^error: ' "$err")
status=0
if [ "$rc" -ne "$want_rc" ]; then echo "FAIL: exit code $rc, expected $want_rc"; status=1; fi
if [ "$lines" -ne 1 ]; then echo "FAIL: $lines 'error:' lines on stderr, expected exactly 1"; status=1; fi
if ! printf '%s\n' "$msg" | grep -Eq -- "$regex"; then echo "FAIL: message does not match /$regex/"; status=1; fi
echo "--- stderr:"; cat "$err"
rm -f "$err"
exit $status
