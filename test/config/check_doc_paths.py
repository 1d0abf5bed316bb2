#!/usr/bin/env python3
"""The repository files and Notes README.md, docs/*.md and the decks' comment lines (inputs/*.in)
name exist (files move and Notes get renamed; pages keep the old name).

usage: check_doc_paths.py SOURCE_DIR [--selftest SCRATCH_DIR]

A name is a path under one of the repository's top folders (src, apps, test, scripts, jobs,
examples, perf, spack, cmake; the decks of inputs/ are check_doc_keys.py's) that is not part of a
longer path (build/apps/train, lib/cmake/... and a data set's datasets/hotel/test/... are not the
repository's). It must be a file or folder; with `.*` or `.{a,b}` at least one file
(src/train/step.*, src/optim/ema.{hpp,cpp}); a program or script may leave out its source's
extension (apps/train: apps/train.cpp). NOT_OURS lists the few names that are not ours
(TensorBoard tags, another project's folder).
Every `Note [name]` a page names (across a line break too) is in a source file of src, apps, test,
perf, scripts, examples or cmake, where comments may wrap it as well; and a Note the page places in a
file ("Note [a] in `src/x.cpp`", "Notes [a] and [b] in `x.hpp`": the path as written or its tail,
`nn/resnet.hpp` for src/nn/resnet.hpp) is in that file. Every HPCTRAIN_* name (an environment
variable, a CMake option, a C API name) is in those sources or the top CMakeLists.txt.
--selftest first proves on planted pages that a moved file, glob, program, script and folder (also
in a deck's comment), a renamed Note, a Note placed in the wrong file and a renamed HPCTRAIN_* name
are each reported.
"""
import glob
import os
import re
import sys

from doc_pages import decks, pages, read_page, report

TOP = r"(?:src|apps|test|scripts|jobs|examples|perf|spack|cmake)"  # inputs/*.in: check_doc_keys.py
NAME = re.compile(r"(?<![\w/.~$-])(" + TOP + r"/[A-Za-z0-9_./{},*-]*[A-Za-z0-9_*}])")


# Names of the pages that are not files of ours: TensorBoard tags (outputs.md) and LightGBM's own
# examples (ranking.md, inputs/gbdt_binary.in).
NOT_OURS = {"perf/samples_per_s", "perf/epoch_samples_per_s", "perf/epoch_seconds", "examples/lambdarank",
            "examples/binary_classification/train.conf"}


def exists(repo, name):
    """Whether the name matches a file or folder of the repository, or None when it is not checked."""
    if name in NOT_OURS:
        return None
    braces = re.fullmatch(r"(.*)\.\{([^}]*)\}", name)
    if braces:
        return any(os.path.exists(os.path.join(repo, f"{braces.group(1)}.{e}")) for e in braces.group(2).split(","))
    if "*" in name:
        return bool(glob.glob(os.path.join(repo, name)))
    # A program or test is named without its source's extension (apps/train, test/cli/wxgen).
    return any(os.path.exists(os.path.join(repo, name + e)) for e in ("", ".cpp", ".hpp", ".sh", ".py"))


NOTE = re.compile(r"Note\s+\[([^\]]+)\]")
SOURCE_FOLDERS = ("src", "apps", "test", "perf", "scripts", "examples", "cmake")


# "Note [a] in `path`", "Notes [a], [b] in `path`", "Notes [a] and [b] in `path`" (names and path as
# one match, across line breaks).
NOTE_IN = re.compile(r"Notes?\s+((?:\[[^\]]+\](?:,\s*|\s+and\s+)?)+)\s+in\s+`([^`]+)`")


def fold(text):
    """Comment markers and line breaks folded to single blanks, so a wrapped Note reads whole."""
    return re.sub(r"[ \t]+", " ", re.sub(r"\n\s*(?://|#|!|\*|--)?\s*", " ", text))


def source_files(repo):
    """{path relative to the repository: its folded text} of the source folders' files."""
    files = {}
    for folder in SOURCE_FOLDERS:
        for root, dirs, names in os.walk(os.path.join(repo, folder)):
            dirs[:] = [d for d in dirs if d != "__pycache__"]  # compiled copies hold the selftest's planted Note
            for name in names:
                path = os.path.join(root, name)
                if os.path.getsize(path) < (1 << 20) and not name.endswith(".md"):
                    files[os.path.relpath(path, repo)] = fold(open(path, encoding="utf-8", errors="ignore").read())
    return files


def source_notes(repo):
    """The source files of source_files and their joined text (with the top CMakeLists.txt, which
    declares the build options), for Note and name lookups."""
    files = source_files(repo)
    top = open(os.path.join(repo, "CMakeLists.txt"), encoding="utf-8").read()
    joined = " ".join(files.values()) + " " + top
    return files, joined, set(OUR_NAME.findall(joined))


OUR_NAME = re.compile(r"(?:(?<=-D)|(?<!\w))HPCTRAIN_[A-Z0-9_]*[A-Z0-9]\b")  # -DHPCTRAIN_NATIVE=OFF too


def check_notes(path, source):
    files, joined, names = source
    problems = []
    text = read_page(path)
    for m in NOTE.finditer(text):
        name = re.sub(r"\s+", " ", m.group(1))
        if f"Note [{name}]" not in joined:
            line = text[: m.start()].count("\n") + 1
            problems.append(f"{path}:{line}: Note [{name}]: in no source file")
    for m in OUR_NAME.finditer(text):
        if m.group(0) not in names:
            line = text[: m.start()].count("\n") + 1
            problems.append(f"{path}:{line}: {m.group(0)}: in no source file (renamed or gone?)")
    for m in NOTE_IN.finditer(text):
        line, where = text[: m.start()].count("\n") + 1, m.group(2)
        holders = [f for f in files if f == where or f.endswith("/" + where)]
        for name in (re.sub(r"\s+", " ", n) for n in re.findall(r"\[([^\]]+)\]", m.group(1))):
            if f"Note [{name}]" not in joined:
                continue  # reported above
            if not holders:
                problems.append(f"{path}:{line}: Note [{name}] in {where}: no such source file")
            elif not any(f"Note [{name}]" in files[f] for f in holders):
                found = sorted(f for f in files if f"Note [{name}]" in files[f])
                problems.append(f"{path}:{line}: Note [{name}] is not in {where} (it is in {', '.join(found[:3])})")
    return problems


def check_page(path, repo, checked=None):
    problems = []
    for number, line in enumerate(read_page(path).split("\n"), 1):
        for name in NAME.findall(line):
            name = name.rstrip(".")
            found = exists(repo, name)
            if checked is not None and found is not None:
                checked.add(name)
            if found is False:
                problems.append(f"{path}:{number}: {name}: no such file in the repository")
    return problems


def selftest(scratch, repo):
    os.makedirs(scratch, exist_ok=True)
    planted = {"moved_file": "the net (src/models/diffusion_net.{hpp,cpp})\n",
               "moved_glob": "the schedule (src/models/diffusion_schedule.*)\n",
               "moved_program": "`apps/no_such_tool` writes it\n",
               "moved_script": "run `scripts/no-such-script`\n",
               "moved_folder": "the layers (src/no_such_layer/)\n",
               "deck_header": "# ctest runs it scaled down (test/cli/no_such_check.sh)\nmodel mlp\n"}
    for name, text in planted.items():
        page = os.path.join(scratch, name + (".in" if name == "deck_header" else ".md"))
        open(page, "w").write(text)
        if not check_page(page, repo):
            sys.exit(f"check_doc_paths selftest: the planted page {name} was not reported")
    source = source_notes(repo)
    renamed = os.path.join(scratch, "renamed_note.md")
    open(renamed, "w").write("why: Note [no such\nnote here]\n")
    if not check_notes(renamed, source):
        sys.exit("check_doc_paths selftest: the planted page renamed_note was not reported")
    # (the planted name in two parts: this file is one of the sources searched)
    for name, text in {"renamed_switch": "`HPCTRAIN_NO_BLOCKED" + "_LAYOUT=1` keeps NCHW throughout\n",
                       "renamed_option": "`cmake -DHPCTRAIN_ENABLE" + "_DNNL=OFF`\n",
                       "note_elsewhere": "(Note [convolution autotuning] in\n`src/gbdt/booster.cpp`)\n",
                       "note_in_no_file": "(Note [convolution autotuning] in `nn/no_such_file.hpp`)\n"}.items():
        page = os.path.join(scratch, name + ".md")
        open(page, "w").write(text)
        if not check_notes(page, source):
            sys.exit(f"check_doc_paths selftest: the planted page {name} was not reported")
    placed = os.path.join(scratch, "notes_placed.md")
    open(placed, "w").write("Note [convolution autotuning] in `nn/resnet.hpp`; Notes [no CUDA ETI] and\n"
                            "[no host ETI] in `scripts/build-kokkos`; `HPCTRAIN_NO_BLOCKED=1`, -DHPCTRAIN_ENABLE_ONEDNN=ON\n")
    if check_notes(placed, source):
        sys.exit("check_doc_paths selftest: correctly placed Notes were reported: " + "; ".join(check_notes(placed, source)))
    if check_notes(os.path.join(repo, "docs", "diffusion.md"), source) or not NOTE.search(
            open(os.path.join(repo, "docs", "diffusion.md")).read()):
        sys.exit("check_doc_paths selftest: diffusion.md's Notes were not all found (or it has none)")
    good = os.path.join(scratch, "good.md")
    open(good, "w").write("src/optim/ema.{hpp,cpp}, src/train/step.*, `build/apps/train`, apps/train, "
                          "lib/cmake/hpctrain, `perf/samples_per_s`, scripts/make-tokens.\n")
    if check_page(good, repo):
        sys.exit("check_doc_paths selftest: a correct page was reported: " + "; ".join(check_page(good, repo)))


def main():
    if len(sys.argv) not in (2, 4):
        sys.exit(__doc__)
    repo = sys.argv[1]
    if len(sys.argv) == 4 and sys.argv[2] == "--selftest":
        selftest(sys.argv[3], repo)
    docs = pages(repo) + decks(repo)
    checked, source = set(), source_notes(repo)
    problems = [p for page in docs for p in check_page(page, repo, checked) + check_notes(page, source)]
    texts = [read_page(page) for page in docs]
    notes = {re.sub(r"\s+", " ", n) for text in texts for n in NOTE.findall(text)}
    placed = sum(len(re.findall(r"\[", m.group(1))) for text in texts for m in NOTE_IN.finditer(text))
    ours = {n for text in texts for n in OUR_NAME.findall(text)}
    report(problems, f"check_doc_paths: the {len(checked)} repository files, {len(notes)} Notes and {len(ours)} "
           f"HPCTRAIN_* names {len(docs)} pages and decks name exist, the {placed} Notes placed in a file are there")


if __name__ == "__main__":
    main()
