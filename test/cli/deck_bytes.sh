#!/usr/bin/env bash
# Hostile deck text end to end on 2 ranks (run by ctest from the repository root): a 200,000-character
# key or value gives one short error line (the key or value quoted by a prefix and its length), and a
# NUL or non-UTF-8 byte is refused with the byte shown escaped; every case exits 2 before any work.
# usage: deck_bytes.sh TRAIN_BINARY MPIEXEC WORKDIR
set -u
train=$1 mpiexec=$2 work=$3
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
fresh_dir "$work"
export OMP_NUM_THREADS=1
long=$(head -c 200000 /dev/zero | tr '\0' 'k')

# expect_short_error NAME FIXED_TEXT DECK: exit 2, one "error:" line under 300 bytes holding FIXED_TEXT.
expect_short_error() {
  local name=$1 text=$2 deck=$3
  "$mpiexec" -np 2 --bind-to none "$train" "$deck" >"$work/$name.out" 2>"$work/$name.err"
  local rc=$?
  local line
  line=$(grep -a '^error: ' "$work/$name.err")
  echo "--- $name: exit $rc, error line of ${#line} bytes:"; printf '%s\n' "$line" | cut -c1-300
  [ "$rc" -eq 2 ] || fail "$name: exit code $rc, expected 2"
  [ "$(grep -ac '^error: ' "$work/$name.err")" -eq 1 ] || fail "$name: expected exactly one 'error:' line"
  [ "${#line}" -lt 300 ] || fail "$name: the error line has ${#line} bytes"
  printf '%s\n' "$line" | grep -qF -- "$text" || fail "$name: the error does not contain: $text"
}

{ echo "data_file x.h5"; echo "$long 1"; } >"$work/long_key.in"
expect_short_error long_key "$work/long_key.in:2: kkkkkkkkkk" "$work/long_key.in"
grep -aqF "... (200000 bytes): unknown key" "$work/long_key.err" || fail "long_key: no length or reason"
{ echo "data_file x.h5"; echo "activation $long"; } >"$work/long_value.in"
expect_short_error long_value "$work/long_value.in:2: activation: 'kkkk" "$work/long_value.in"
# A long path fails at the open, quoted short too (by the HDF5 and the text readers alike).
printf 'data_file /%s.h5\n' "$long" >"$work/long_path.in"
expect_short_error long_path "error: /kkkkkkkk" "$work/long_path.in"
printf 'model gbdt\ndata_format csv\ndata_file /%s.csv\n' "$long" >"$work/long_csv_path.in"
expect_short_error long_csv_path "error: /kkkkkkkk" "$work/long_csv_path.in"
printf 'data_file x.h5\nepochs 2\0009999\n' >"$work/nul.in"
expect_short_error nul "$work/nul.in:2: epochs: byte \\x00 (NUL) is not allowed in a deck: 'epochs 2\\x009999'" "$work/nul.in"
printf 'data_file caf\351.h5\n' >"$work/latin1.in"
expect_short_error latin1 "$work/latin1.in:1: data_file: byte \\xe9 is not valid UTF-8" "$work/latin1.in"
echo "PASS"
