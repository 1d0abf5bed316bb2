#!/usr/bin/env python3
"""The deck keys the documentation names exist, with the defaults its key tables state.

usage: check_doc_keys.py SOURCE_DIR TRAIN [--selftest SCRATCH_DIR]

The schema is what `TRAIN --help-deck` prints, plus the in-situ library's own section
(src/insitu/config.cpp, which has no program to print it). Checked in README.md and docs/*.md
(docs/perf-log/ is history, not reference) and in the decks' comment lines (inputs/*.in: the
commands that run them):
  - every row of a table headed `| key | default | ... |`: each backticked key exists, and the
    default matches the schema's (numbers by value; "", (none), (empty) and a default given only in
    parentheses, e.g. "(2^l - 1)", mean the schema's empty string; text after the value in
    parentheses is a comment; "required" is a required key or one whose 0 / "" the code rejects);
    a row of several keys gives one default for all or one each, split by ", " or " / ";
  - an inline "`KEY` (default VALUE" or "`KEY VALUE` (the default)" / "(default)" states the schema's
    default;
  - every `--set KEY=VALUE` names a key;
  - every inputs/NAME.in named exists.
--selftest first proves on planted pages that a wrong default (in a table or inline), an unknown
key, an unknown --set key (also on a deck's continued usage line) and a missing deck are each reported.
"""
import os
import re
import subprocess
import sys

from doc_pages import decks, pages, read_page, report

HELP_LINE = re.compile(r'^  ([a-z_0-9]+) \(([a-z ]+), (required|default ("[^"]*"|[^,)]*))')
SOURCE_KEY = re.compile(r'add_(?:int|real|bool|choice|string)\(\s*"([a-z_0-9]+)",\s*("[^"]*"|[^,]+),')
TABLE_HEAD = re.compile(r'^\| *key *\| *default *\|', re.IGNORECASE)
RULE = re.compile(r'^\|[-| :]+\|\s*$')
SET_KEY = re.compile(r'--set[ =]([a-z_0-9]+)=')
INLINE_DEFAULT = re.compile(r"`([a-z0-9_]+)`,? \(default:? `?([^ `;,)]+)")  # `bucket_mb` (default 25)
INLINE_THE_DEFAULT = re.compile(r"`([a-z0-9_]+) ([^ `]+)` \((?:the )?default\)")  # `device auto` (the default)
DECK = re.compile(r'\binputs/([A-Za-z0-9_-]+\.in)\b')
DECK_NOT_SHIPPED = {"run.in"}  # running.md's example error messages name a user's deck


def schema_of(source_dir, train):
    """{key: default text} of train --help-deck and the in-situ section; required keys: 'required'."""
    out = subprocess.run([train, "--help-deck"], capture_output=True, text=True, check=True).stdout
    keys = {}
    for line in out.splitlines():
        m = HELP_LINE.match(line)
        if m:
            keys[m.group(1)] = "required" if m.group(3) == "required" else m.group(4)
    if len(keys) < 50:
        sys.exit(f"check_doc_keys: only {len(keys)} keys read from {train} --help-deck (its format changed?)")
    insitu = open(os.path.join(source_dir, "src/insitu/config.cpp")).read()
    found = SOURCE_KEY.findall(insitu)
    if len(found) < 10:
        sys.exit("check_doc_keys: the in-situ keys of src/insitu/config.cpp were not found (its style changed?)")
    for name, default in found:
        keys.setdefault(name, default.strip())
    return keys


def normalise(text):
    """A default as a comparable string: backticks and a trailing comment in parentheses dropped."""
    text = text.replace("`", "").strip()
    if text in ('""', "(none)", "(empty)", "") or re.fullmatch(r"\(.*\)", text):
        return ""
    text = re.sub(r"\s*\(.*\)$", "", text)
    return text.strip('"')


def same(doc, schema):
    schema = schema.strip('"')
    fraction = re.fullmatch(r"(\d+)/(\d+)", doc)  # 1/8
    if fraction:
        doc = str(int(fraction.group(1)) / int(fraction.group(2)))
    if doc == "required":
        return schema in ("required", "0", "")
    if doc == schema:
        return True
    try:
        return float(doc) == float(schema)
    except ValueError:
        return False


def check_page(path, schema, repo):
    problems = []
    lines = read_page(path).split("\n")
    in_table = False
    for number, line in enumerate(lines, 1):
        where = f"{path}:{number}"
        for key in SET_KEY.findall(line):
            if key != "key" and key not in schema:  # `--set key=value`: the syntax
                problems.append(f"{where}: --set {key}: no such deck key")
        for deck in DECK.findall(line):
            if deck not in DECK_NOT_SHIPPED and not os.path.exists(os.path.join(repo, "inputs", deck)):
                problems.append(f"{where}: inputs/{deck} does not exist")
        for key, default in INLINE_DEFAULT.findall(line) + INLINE_THE_DEFAULT.findall(line):
            if key not in schema:
                problems.append(f"{where}: {key}: no such deck key")
            elif not same(normalise(default), schema[key]):
                problems.append(f"{where}: {key}: the page says default {default}, the schema {schema[key]}")
        if TABLE_HEAD.match(line):
            in_table = True
            continue
        if in_table and not line.startswith("|"):
            in_table = False
        if not in_table or RULE.match(line):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        keys = re.findall(r"`([a-z_0-9]+)`", cells[0])
        defaults = [cells[1]]
        if len(keys) > 1:
            for sep in (", ", " / "):
                if len(cells[1].split(sep)) == len(keys):
                    defaults = cells[1].split(sep)
        if len(defaults) == 1:
            defaults = defaults * len(keys)
        for key, default in zip(keys, defaults):
            if key not in schema:
                problems.append(f"{where}: {key}: no such deck key")
            elif not same(normalise(default), schema[key]):
                problems.append(f"{where}: {key}: the page says default {default.strip()}, "
                                f"the schema {schema[key]}")
    return problems


def selftest(scratch, schema, repo):
    os.makedirs(scratch, exist_ok=True)
    planted = {
        "wrong_default": "| key | default | meaning |\n|---|---|---|\n| `num_trees` | 7 | rounds |\n",
        "unknown_key": "| key | default | meaning |\n|---|---|---|\n| `num_treez` | 100 | rounds |\n",
        "unknown_set": "mpirun -np 2 build/apps/train inputs/quickstart.in --set epochz=3\n",
        "missing_deck": "mpirun -np 2 build/apps/train inputs/no_such_deck.in\n",
        "deck_header": "# usage:\n#   mpirun -np 2 build/apps/train inputs/quickstart.in \\\n#     --set epochz=3\nmodel mlp\n",
        "inline_default": "`bucket_mb` (default 26) is the bucket size\n",
        "inline_the_default": "`comm_backend mpi` (the default) reduces\n",
    }
    good = ("| key | default | meaning |\n|---|---|---|\n| `num_trees` | 100 | rounds |\n"
            "| `lambda_l2`, `alpha_l1` | 1, 0 | L2 / L1 |\n| `test_file` | (none) | test data |\n"
            "--set epochs=3 inputs/quickstart.in\n`bucket_mb` (default 25) and `comm_backend auto` (the default)\n")
    for name, text in planted.items():
        path = os.path.join(scratch, name + (".in" if name == "deck_header" else ".md"))
        open(path, "w").write(text)
        if not check_page(path, schema, repo):
            sys.exit(f"check_doc_keys selftest: the planted page {name} was not reported")
    path = os.path.join(scratch, "good.md")
    open(path, "w").write(good)
    if check_page(path, schema, repo):
        sys.exit("check_doc_keys selftest: a correct page was reported: " + "; ".join(check_page(path, schema, repo)))


def main():
    if len(sys.argv) not in (3, 5):
        sys.exit(__doc__)
    repo, train = sys.argv[1], sys.argv[2]
    schema = schema_of(repo, train)
    if len(sys.argv) == 5 and sys.argv[3] == "--selftest":
        selftest(sys.argv[4], schema, repo)
    docs = pages(repo) + decks(repo)
    problems = [p for page in docs for p in check_page(page, schema, repo)]
    report(problems, f"check_doc_keys: {len(docs)} pages and decks agree with the {len(schema)} keys of the schema")


if __name__ == "__main__":
    main()
