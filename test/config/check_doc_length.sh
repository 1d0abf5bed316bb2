#!/bin/sh
# The documentation is the user's reference, one page per concept: no page of docs/ (the history in
# docs/perf-log/ aside) longer than 300 lines. A longer page is split: its detail goes into a page of
# its own that the first links to (as gbdt-model-files.md is to gbdt.md). The history pages of
# docs/perf-log/ are split too past 350 lines (one step of the work or a few per page).
# usage: check_doc_length.sh SOURCE_DIR SCRATCH_DIR
# First proves on a planted page in SCRATCH_DIR that an over-long page is reported, then checks
# SOURCE_DIR/docs/*.md.
limit=300
log_limit=350
src=$1
scratch=$2

# Prints each page of $1/*.md over the limit ($2, default $limit); fails when there is one.
long_pages() {
  found=0
  max=${2:-$limit}
  for page in "$1"/*.md; do
    lines=$(wc -l < "$page")
    if [ "$lines" -gt "$max" ]; then
      echo "$page: $lines lines (at most $max; move detail into a page of its own and link it)"
      found=1
    fi
  done
  return $found
}

rm -rf "$scratch" && mkdir -p "$scratch/perf-log" || exit 1
seq 1 $limit > "$scratch/at_limit.md"
seq 1 400 > "$scratch/perf-log/history.md"  # the log is not a reference page
if ! long_pages "$scratch" > /dev/null; then
  echo "FAIL: a page of $limit lines, or one in perf-log/, was reported"
  exit 1
fi
seq 1 $((limit + 1)) > "$scratch/too_long.md"
if long_pages "$scratch" > /dev/null; then
  echo "FAIL: the planted page of $((limit + 1)) lines was not reported"
  exit 1
fi

if ! long_pages "$src/docs"; then
  echo "FAIL: the pages above are longer than $limit lines"
  exit 1
fi
if ! long_pages "$src/docs/perf-log" "$log_limit"; then
  echo "FAIL: the perf-log pages above are longer than $log_limit lines"
  exit 1
fi
echo "PASS: every page of docs/ has at most $limit lines, every page of docs/perf-log/ at most $log_limit"
