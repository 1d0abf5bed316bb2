#!/usr/bin/env bash
# Every relative link of the documentation resolves: for each markdown link `](target)` in README.md,
# docs/*.md, docs/perf-log/*.md and test/README.md (outside fenced code blocks), the file part of the target (before any
# `#anchor`) must exist relative to the file that holds the link. Web links (scheme:...) and links to
# an anchor of the same page are not checked. Needs no build (ctest label config).
# usage: check_doc_links.sh [SOURCE_DIR]   (default: the repository holding this script)
set -u
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root" || { echo "FAIL: no directory $root"; exit 1; }

files=(README.md docs/*.md docs/perf-log/*.md test/README.md)
checked=0 broken=0
for f in "${files[@]}"; do
  [ -f "$f" ] || { echo "FAIL: $f is missing"; broken=$((broken + 1)); continue; }
  dir=$(dirname "$f")
  # "line<TAB>target" for every link outside ``` fences; the target ends at ')' or a space (a title).
  while IFS=$'\t' read -r line target; do
    case "$target" in
      '' | '#'* | *://* | mailto:*) continue ;;
    esac
    path=${target%%#*}
    checked=$((checked + 1))
    if [ ! -e "$dir/$path" ]; then
      echo "FAIL: $f:$line: link target '$target' does not exist ($dir/$path)"
      broken=$((broken + 1))
    fi
  done < <(awk '
    /^[ \t]*```/ { fence = !fence; next }
    fence { next }
    {
      s = $0
      while ((i = index(s, "](")) > 0) {
        s = substr(s, i + 2)
        t = s
        sub(/[) ].*$/, "", t)
        printf "%d\t%s\n", NR, t
      }
    }' "$f")
done

if [ "$checked" -eq 0 ]; then
  echo "FAIL: no relative link found in ${files[*]} (the check would prove nothing)"
  exit 1
fi
if [ "$broken" -gt 0 ]; then
  echo "$broken broken link(s) of $checked checked"
  exit 1
fi
echo "ok: $checked relative links in ${#files[@]} files resolve"
