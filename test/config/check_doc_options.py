#!/usr/bin/env python3
"""Every option README.md, docs/*.md and the decks' comment lines (inputs/*.in: the commands that run
them) give one of our programs is one its --help shows (and every program of apps/ answers --help),
and every option a page gives one of our scripts is one the script reads.

usage: check_doc_options.py SOURCE_DIR APPS_DIR [--selftest SCRATCH_DIR]

A command is a program of apps/ (APPS_DIR/NAME, built) named as build/apps/NAME or as NAME where a
command starts (`wxeval gnn.h5 era5.nc --init last`), up to the end of the line (a trailing
backslash continues it), a `#` comment, a backtick, `&&`, `|` or `;`. Each `--option` in it must
appear in what `NAME --help` prints (--help itself, and Kokkos's --kokkos-*, which pass through
every program, aside). `NAME --help` itself must print the usage on stdout and exit 0.
A script command is a file of perf/, scripts/, jobs/ or test/python/ named so (`perf/compare_cnn.py
--sizes 64`, `.deps/benchenv/bin/python perf/...`, `scripts/gpu-proof --budget 480`), up to the same
ends; each `--option` in it must be in the script's text (argparse's "--option", bash's `--option)`):
the scripts have no --help that all of them answer alike.
--selftest first proves on planted pages that an option a program or a script lacks is reported.
"""
import glob
import os
import re
import subprocess
import sys

from doc_pages import decks, pages, read_page, report


class Usage:
    """What each program prints for --help, read once."""

    def __init__(self, apps_dir):
        self.apps_dir, self.text = apps_dir, {}

    def __call__(self, program):
        if program not in self.text:
            run = subprocess.run([os.path.join(self.apps_dir, program), "--help"], capture_output=True, text=True,
                                 timeout=60)
            self.text[program] = run.stdout
            if run.returncode != 0 or "usage" not in run.stdout:
                sys.exit(f"check_doc_options: {program} --help exited {run.returncode} with "
                         f"{'a' if 'usage' in run.stdout else 'no'} usage on stdout (it should: exit 0, the usage)")
        return self.text[program]


def programs(source_dir):
    """The programs of apps/: each .cpp there that holds a main (the others are parts of one)."""
    return sorted(os.path.basename(p)[:-4] for p in glob.glob(os.path.join(source_dir, "apps", "*.cpp"))
                  if re.search(r"^int main\(", open(p, encoding="utf-8").read(), re.M))


def check_page(path, names, usage):
    joined = re.sub(r"\\\n\s*", " ", read_page(path))  # continuation lines are one command
    command = re.compile(r"(?:build/apps/|(?<![\w/.-]))(" + "|".join(names) + r")( (?:[^`\n#&|;])*)")
    problems = []
    for m in command.finditer(joined):
        program, rest = m.group(1), m.group(2)
        for option in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", rest):
            if option.startswith("--kokkos-") or option == "--help":  # every program answers --help
                continue
            if not re.search(re.escape(option) + r"(?![a-z0-9-])", usage(program)):
                line = joined[: m.start()].count("\n") + 1
                problems.append(f"{path}:{line}: {program} {option}: not an option of {program} (see its --help)")
    return problems


SCRIPT = re.compile(r"(?<![\w/.-])((?:perf|scripts|jobs|test/python)/[A-Za-z0-9_.-]*[A-Za-z0-9_])((?: [^`\n#&|;]*)?)")


def check_scripts(path, repo):
    """Each --option a page gives a script of ours is in that script's text."""
    text = re.sub(r"\\\n\s*", " ", read_page(path))
    problems = []
    for m in SCRIPT.finditer(text):
        script = os.path.join(repo, m.group(1))
        if not os.path.isfile(script):
            continue  # a folder, or a name check_doc_paths reports
        source = open(script, encoding="utf-8", errors="ignore").read()
        for option in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", m.group(2)):
            if option != "--help" and not re.search(re.escape(option) + r"(?![a-z0-9-])", source):
                line = text[: m.start()].count("\n") + 1
                problems.append(f"{path}:{line}: {m.group(1)} {option}: not an option the script reads")
    return problems


def main():
    if len(sys.argv) not in (3, 5):
        sys.exit(__doc__)
    source_dir, apps_dir = sys.argv[1], sys.argv[2]
    names, usage = programs(source_dir), Usage(apps_dir)
    for name in names:  # every program answers --help, named on a page or not
        usage(name)
    if len(sys.argv) == 5 and sys.argv[3] == "--selftest":
        os.makedirs(sys.argv[4], exist_ok=True)
        bad = os.path.join(sys.argv[4], "bad.md")
        open(bad, "w").write("```\nbuild/apps/sample W.h5 D.h5 O.h5 --members 8 \\\n    --no-such-option 3\n```\n")
        good = os.path.join(sys.argv[4], "good.md")
        open(good, "w").write("`wxeval gnn.h5 era5.nc --init last --lead-steps 24` and "
                              "`build/apps/datagen friedman1 x.h5 --rows 10 && mpirun -np 2 train d.in --set a=1`, `train --help`\n")
        if not check_page(bad, names, usage):
            sys.exit("check_doc_options selftest: the planted --no-such-option was not reported")
        if check_page(good, names, usage):
            sys.exit("check_doc_options selftest: a correct page was reported: " +
                     "; ".join(check_page(good, names, usage)))
        deck = os.path.join(sys.argv[4], "bad.in")
        open(deck, "w").write("# usage:\n#   mpirun -np 2 build/apps/wxeval W.h5 D.nc --lead-steps 6 \\\n"
                              "#       --no-such-option 3\nmodel gnn\n")
        found = [p[len(deck):] for p in check_page(deck, names, usage)]
        if found != [":2: wxeval --no-such-option: not an option of wxeval (see its --help)"]:
            sys.exit(f"check_doc_options selftest: the planted deck's --no-such-option gave {found}, not its "
                     "command's line")
        open(bad, "w").write("`.deps/benchenv/bin/python perf/compare_cnn.py --sizes 64 \\\n    --no-such-option`\n")
        if not check_scripts(bad, source_dir):
            sys.exit("check_doc_options selftest: the planted script --no-such-option was not reported")
        open(good, "w").write("`.deps/benchenv/bin/python perf/compare_cnn.py --sizes 64 --nchw`, "
                              "`scripts/gpu-proof --dry-run --budget 1500`, `scripts/setup --reference && scripts/test`\n")
        if check_scripts(good, source_dir):
            sys.exit("check_doc_options selftest: a correct script page was reported: " +
                     "; ".join(check_scripts(good, source_dir)))
    docs = pages(source_dir) + decks(source_dir)
    problems = [p for page in docs for p in check_page(page, names, usage) + check_scripts(page, source_dir)]
    report(problems, f"check_doc_options: the {len(names)} programs answer --help; {len(docs)} pages and decks give "
           "them and the scripts only their options")


if __name__ == "__main__":
    main()
