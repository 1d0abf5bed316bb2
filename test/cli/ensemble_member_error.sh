#!/usr/bin/env bash
# An ensemble run whose member deck is refused stops before any work: exactly one error line
# matching REGEX with EXIT_CODE (expect_error.sh), and nothing written under OUT_DIR, where the
# command puts the ensemble's output (its `.work` folder of fold members beside it included).
# usage: ensemble_member_error.sh OUT_DIR EXIT_CODE REGEX COMMAND...
set -u
out=$1
shift
rm -rf "$out"
"$(dirname "$0")/expect_error.sh" "$@" || exit 1
left=$(find "$out" -mindepth 1 2>/dev/null)
if [ -n "$left" ]; then
  echo "FAIL: the refused run wrote under $out:"
  echo "$left"
  exit 1
fi
echo "nothing written under $out"
