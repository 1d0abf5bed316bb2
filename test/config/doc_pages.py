"""What the documentation checks share: the pages they read and how they report.

The reference pages are README.md and docs/*.md (docs/perf-log/ is history, not reference).
"""
import glob
import os
import sys


def pages(repo):
    """README.md, then docs/*.md in name order."""
    return [os.path.join(repo, "README.md")] + sorted(glob.glob(os.path.join(repo, "docs", "*.md")))


def report(problems, summary):
    """Prints each problem and exits 1 when there is one; else prints `summary` (a check's last line)."""
    for p in problems:
        print(p)
    if problems:
        sys.exit(1)
    print(summary)
