# The opening the test/cli scripts share, sourced after their `set` line and arguments:
#   . "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# fail MESSAGE: the test fails with "FAIL: MESSAGE" (exit 1); skip MESSAGE: ctest counts the test
# skipped (exit 77, the tests' SKIP_RETURN_CODE); fresh_dir DIR: the test's scratch folder under the
# build tree, emptied first (a file an earlier run left must not pass a check of this one).
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIPPED: $*"; exit 77; }
fresh_dir() { rm -rf "$1" && mkdir -p "$1"; }
# wait_failed NAME PID LOG END [KILL_PATTERN]: waits for job NAME (its launcher's PID, its output in
# LOG) to end, failing when it is still running at $SECONDS = END (a hang guard only: Note [no
# guessed times] in failures.sh) or when it exited 0; then kills the processes left whose command
# line holds KILL_PATTERN (a rank frozen whole, which its launcher may leave behind).
wait_failed() {
  local name=$1 pid=$2 log=$3 end=$4 pattern=${5:-}
  while kill -0 "$pid" 2>/dev/null; do
    [ "$SECONDS" -lt "$end" ] || fail "$name: job still running at the guard: $(tail -3 "$log")"
    sleep 0.2
  done
  wait "$pid" && fail "$name: a job with a stalled rank exited 0"
  [ -z "$pattern" ] || kill_matching "$pattern"
}
# kill_matching PATTERN: kills (-9) every process whose command line holds PATTERN (pgrep -f).
kill_matching() {
  local p
  for p in $(pgrep -f -- "$1"); do kill -9 "$p" 2>/dev/null; done
  return 0
}
# kill_jobs PATTERN (a trap on EXIT): no launcher of the array `pids` and no rank whose command line
# holds PATTERN (one frozen whole) left behind by the test's jobs.
kill_jobs() {
  local p
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  kill_matching "$1"
}
