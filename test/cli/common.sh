# The opening the test/cli scripts share, sourced after their `set` line and arguments:
#   . "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# fail MESSAGE: the test fails with "FAIL: MESSAGE" (exit 1); skip MESSAGE: ctest counts the test
# skipped (exit 77, the tests' SKIP_RETURN_CODE); fresh_dir DIR: the test's scratch folder under the
# build tree, emptied first (a file an earlier run left must not pass a check of this one).
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIPPED: $*"; exit 77; }
fresh_dir() { rm -rf "$1" && mkdir -p "$1"; }
