"""What the documentation checks share: the pages they read and how they report.

The reference pages are README.md and docs/*.md (docs/perf-log/ is history, not reference); the
decks of inputs/ are read too where a check says so: their comment lines hold the commands that run
them (read_page).
"""
import glob
import os
import re
import sys


def pages(repo):
    """README.md, then docs/*.md in name order."""
    return [os.path.join(repo, "README.md")] + sorted(glob.glob(os.path.join(repo, "docs", "*.md")))


def decks(repo):
    """The decks inputs/*.in in name order."""
    return sorted(glob.glob(os.path.join(repo, "inputs", "*.in")))


def read_page(path):
    """A page's text. A deck's (*.in) is its comment lines without their '#' and every other line
    empty: the line numbers stay the file's, and a command continued on the next comment line
    (`#   train d.in \\` then `#       --set k=v`) joins up as on a page."""
    text = open(path, encoding="utf-8").read()
    if not path.endswith(".in"):
        return text
    return "\n".join(re.sub(r"^\s*# ?", "", line) if line.lstrip().startswith("#") else ""
                     for line in text.split("\n"))


def report(problems, summary):
    """Prints each problem and exits 1 when there is one; else prints `summary` (a check's last line)."""
    for p in problems:
        print(p)
    if problems:
        sys.exit(1)
    print(summary)
