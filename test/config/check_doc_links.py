#!/usr/bin/env python3
"""Every relative link of the documentation resolves, anchors included, and every named section exists.

For each markdown link `](target)` in README.md, docs/*.md, docs/perf-log/*.md and test/README.md
(outside fenced code blocks), the file part of the target (before any `#anchor`) must exist relative
to the page that holds the link, and an anchor into a markdown page (or into the page itself, `(#x)`)
must name one of that page's headings as GitHub renders its id (Note [heading ids]). Web links
(scheme:...) are not checked. A section named in prose anywhere in the sources, decks, scripts and
docs as `page.md "Section"` (or `page.md, "Section"`) must be on that page of docs/ (or the root):
a heading that contains it, or a paragraph that starts with it (plain or bold), so a page split or a
renamed section cannot leave a comment or a --help text pointing nowhere. Needs no build (ctest label
config).
usage: check_doc_links.py [SOURCE_DIR]   (default: the repository holding this script)
"""
import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from doc_pages import report  # noqa: E402

# Note [heading ids]: GitHub gives a heading the id of its rendered text, lower-cased, with every
# character that is not a letter, digit, space, hyphen or underscore dropped and each space made a
# hyphen; a repeated id gets -1, -2, ... in page order. The rendered text has no backticks or
# emphasis marks and shows a link's text, not its target.
LINK = re.compile(r"\]\(([^)\s]*)")
SECTION = re.compile(r'([A-Za-z0-9_-]+\.md),? "([^"]{3,80})"')
# Where prose names sections: everything a user or developer reads, the perf log (history) aside.
SECTION_SOURCES = ["README.md", "CMakeLists.txt", ".ci", "apps", "cmake", "docs", "examples", "inputs", "jobs",
                   "perf", "scripts", "spack", "src", "test"]


def outside_fences(path):
    """(line number, text) of every line outside ``` fences."""
    fence = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if line.lstrip().startswith("```"):
                fence = not fence
                continue
            if not fence:
                yield number, line


def heading_ids(path):
    """The ids GitHub gives the page's headings."""
    ids, seen = set(), {}
    for _, line in outside_fences(path):
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", m.group(1))
        slug = "".join(c for c in text.lower() if c.isalnum() or c in " -_").replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        ids.add(slug if n == 0 else f"{slug}-{n}")
    return ids


def rendered(text):
    """A heading's or paragraph's text as shown: link text instead of links, no backticks or emphasis."""
    return re.sub(r"[`*]", "", re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text))


def section_leads(path):
    """The page's headings and the first words of its paragraphs, as rendered."""
    heads, leads = [], []
    for _, line in outside_fences(path):
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            heads.append(rendered(m.group(1)))
        elif line.strip():
            leads.append(rendered(line.strip()))
    return heads, leads


def source_files():
    """Every readable text file under SECTION_SOURCES, docs/perf-log and caches aside."""
    for top in SECTION_SOURCES:
        if os.path.isfile(top):
            yield top
            continue
        for d, dirs, names in os.walk(top):
            dirs[:] = [x for x in dirs if x not in ("perf-log", "__pycache__")]
            for name in sorted(names):
                if name != os.path.basename(__file__):  # this check's own examples
                    yield os.path.join(d, name)


def check_sections(problems):
    """Problems for every `page.md "Section"` whose page or section is not there; returns the count."""
    count, cache = 0, {}
    for path in source_files():
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except (UnicodeDecodeError, OSError):
            continue
        for number, line in enumerate(lines, 1):
            for page, section in SECTION.findall(line):
                count += 1
                dest = next((p for p in (os.path.join("docs", page), page) if os.path.isfile(p)), None)
                if dest is None:
                    problems.append(f"FAIL: {path}:{number}: names {page} \"{section}\", but there is no such page")
                    continue
                if dest not in cache:
                    cache[dest] = section_leads(dest)
                heads, leads = cache[dest]
                if not any(section in h for h in heads) and not any(p.startswith(section) for p in leads):
                    problems.append(f"FAIL: {path}:{number}: {dest} has no section \"{section}\"")
    return count


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    os.chdir(root)
    files = ["README.md"] + sorted(glob.glob("docs/*.md")) + sorted(glob.glob("docs/perf-log/*.md")) + ["test/README.md"]
    problems, checked, anchors, cache = [], 0, 0, {}
    for page in files:
        if not os.path.isfile(page):
            problems.append(f"FAIL: {page} is missing")
            continue
        for number, line in outside_fences(page):
            for target in LINK.findall(line):
                if not target or "://" in target or target.startswith("mailto:"):
                    continue
                path, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
                checked += 1
                if not os.path.exists(dest):
                    problems.append(f"FAIL: {page}:{number}: link target '{target}' does not exist ({dest})")
                    continue
                if not anchor or not dest.endswith(".md"):
                    continue
                anchors += 1
                if dest not in cache:
                    cache[dest] = heading_ids(dest)
                if anchor not in cache[dest]:
                    problems.append(f"FAIL: {page}:{number}: link '{target}': {dest} has no heading with id '{anchor}'")
    if checked == 0:
        problems.append("FAIL: no relative link found (the check would prove nothing)")
    sections = check_sections(problems)
    if sections == 0:
        problems.append('FAIL: no `page.md "Section"` found (the check would prove nothing)')
    report(problems, f"ok: {checked} relative links ({anchors} with an anchor) in {len(files)} files resolve; "
                     f"{sections} named sections exist")


if __name__ == "__main__":
    main()
