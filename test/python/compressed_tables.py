#!/usr/bin/env python3
"""Compressed CSV tables end to end (Note [compressed text] in src/io/compressed_input.cpp): a table
with a header, a text column (categories) and a numeric label, written by pandas' to_csv with
compression gzip, bz2 and xz, by Python's gzip module as three members (pigz, bgzip) and by the zstd
command. Checks, with build/apps/train and predict:
- the mlp (data_cache stream: every epoch reads the file again) and the trees trained from each
  compressed file write the plain file's weights / model bit for bit, on 1 rank and on 2;
- a 3 MB table written by `xz -T2 --block-size=256KiB` (blocks inside one stream: restart points,
  Note [xz blocks]) trains the plain file's mlp weights and gbdt model on 2 ranks (rank 1's rows
  read from a block in the middle);
- predict reads a .csv.gz as its plain twin (the same outputs, mlp and gbdt); a LibSVM .bz2 trains
  the plain file's model; a validation_file as .gz gives the plain file's validation losses;
- a .zst without a checksum (zstd --no-check) trains saying so, a checked one says nothing;
- a truncated and a bit-flipped .gz, .zst, .bz2, .xz: train on 2 ranks exits 2 (no crash, no rank
  left waiting) naming the file; a truncated .gz names the last whole line before the damage (zstd
  and bzip2 give a block's text whole, and these files are cut in their first block).

usage: compressed_tables.py BUILD_DIR MPIEXEC WORKDIR. Exits 77 (skipped) without pandas or h5py."""
import bz2
import gzip
import os
import re
import shutil
import subprocess
import sys

from tool_run import Checks, import_or_skip, tool_script, weights_bytes

h5py, np, pd = import_or_skip("h5py", "numpy", "pandas")

apps, scratch, run = tool_script(sys.argv)
train, predict = apps("train"), apps("predict")
check = Checks()


def path(name):
    return os.path.join(scratch, name)


rng = np.random.default_rng(5)
n = 1500
df = pd.DataFrame({"a": rng.normal(size=n).round(5), "b": rng.normal(size=n).round(5),
                   "colour": rng.choice(["red", "green", "blue"], size=n)})
df["y"] = (2 * df.a - df.b + df.colour.map({"red": 1.0, "green": 0.0, "blue": -1.0})).round(5)
df.to_csv(path("t.csv"), index=False)
files = []
for ext, how in (("gz", "gzip"), ("bz2", "bz2"), ("xz", "xz")):
    df.to_csv(path("t.csv." + ext), index=False, compression=how)
    files.append("t.csv." + ext)
with open(path("t.csv"), "rb") as f:
    text = f.read()
cuts = [0, text.index(b"\n", len(text) // 3) + 1, text.index(b"\n", 2 * len(text) // 3) + 1, len(text)]
with open(path("members.csv.gz"), "wb") as f:
    for k in range(3):
        f.write(gzip.compress(text[cuts[k]:cuts[k + 1]]))
files.append("members.csv.gz")
if shutil.which("zstd"):  # zstd writes a content checksum by default
    subprocess.run(["zstd", "-q", "-f", path("t.csv"), "-o", path("t.csv.zst")], check=True)
    files.append("t.csv.zst")
else:
    print("note: no zstd command; .zst not tested")


def deck(name, data, text):
    deck_path = path(name + ".in")
    with open(deck_path, "w") as f:
        f.write(f"data_file {data}\ntext_header true\nlabel_column y\nseed 3\nlog_every 1000\n" + text)
    return deck_path


def train_mlp(data, name, ranks):
    r = run([train, deck(name, path(data), f"""model mlp
validation_fraction 0.2
hidden_sizes 8
batch_size {32 // ranks}
epochs 3
lr 1e-2
data_cache stream
output {path(name)}.h5
""")], ranks)
    check(r.returncode == 0, f"mlp on {data}, {ranks} rank(s): {r.stderr[-300:]}")
    return weights_bytes(path(name) + ".h5") if r.returncode == 0 else None


def train_gbdt(data, name, ranks):
    r = run([train, deck(name, path(data), f"model gbdt\nobjective regression\nnum_trees 5\nmax_depth 3\n"
                                           f"output {path(name)}.json\n")], ranks)
    check(r.returncode == 0, f"gbdt on {data}, {ranks} rank(s): {r.stderr[-300:]}")
    if r.returncode != 0:
        return None
    with open(path(name) + ".json", "rb") as f:
        return f.read()


# 1. Every compressed file trains the plain file's weights and model, on 1 and 2 ranks.
for ranks in (1, 2):
    mlp_plain, gbdt_plain = train_mlp("t.csv", f"mlp_plain{ranks}", ranks), train_gbdt("t.csv", f"gbdt_plain{ranks}", ranks)
    for data in files:
        tag = data.replace(".", "_") + str(ranks)
        a = train_mlp(data, "mlp_" + tag, ranks)
        check(a is not None and mlp_plain is not None and a[1] == mlp_plain[1] and a[0].keys() == mlp_plain[0].keys()
              and all(a[0][k] == mlp_plain[0][k] for k in a[0]),
              f"mlp from {data} on {ranks} rank(s): the plain file's weights bit for bit")
        check(train_gbdt(data, "gbdt_" + tag, ranks) == gbdt_plain,
              f"gbdt from {data} on {ranks} rank(s): the plain file's model byte for byte")

# 1b. A table of many xz blocks (xz -T2, pixz, xz >= 5.6's default) on 2 ranks: rank 1 reads from
# a block in the middle; the plain file's weights and model.
if shutil.which("xz"):
    m = 100_000
    big = pd.DataFrame({"a": rng.normal(size=m).round(5), "b": rng.normal(size=m).round(5),
                        "colour": rng.choice(["red", "green", "blue"], size=m)})
    big["y"] = (2 * big.a - big.b + big.colour.map({"red": 1.0, "green": 0.0, "blue": -1.0})).round(5)
    big.to_csv(path("big.csv"), index=False)
    with open(path("big.csv.xz"), "wb") as f:
        subprocess.run(["xz", "-T2", "--block-size=256KiB", "-c", path("big.csv")], stdout=f, check=True)
    listing = subprocess.run(["xz", "--robot", "-l", path("big.csv.xz")], capture_output=True, text=True).stdout
    blocks = int(next((line.split("\t")[2] for line in listing.splitlines() if line.startswith("file")), "0"))
    check(blocks >= 8, f"big.csv.xz: {blocks} xz blocks (8 or more wanted)")
    mlp_plain, gbdt_plain = train_mlp("big.csv", "mlp_big_plain", 2), train_gbdt("big.csv", "gbdt_big_plain", 2)
    a = train_mlp("big.csv.xz", "mlp_big_xz", 2)
    check(a is not None and mlp_plain is not None and a[1] == mlp_plain[1] and a[0].keys() == mlp_plain[0].keys()
          and all(a[0][k] == mlp_plain[0][k] for k in a[0]),
          "mlp from big.csv.xz (xz blocks) on 2 ranks: the plain file's weights bit for bit")
    check(train_gbdt("big.csv.xz", "gbdt_big_xz", 2) == gbdt_plain,
          "gbdt from big.csv.xz (xz blocks) on 2 ranks: the plain file's model byte for byte")
else:
    print("note: no xz command; a .xz of many blocks not tested")

# 2. predict reads a .csv.gz as the plain file.
for data in ("t.csv", "t.csv.gz"):
    r = run([predict, path("mlp_plain1.h5"), path(data), path(data + ".pred.h5")], 2)
    check(r.returncode == 0, f"predict on {data}: {r.stderr[-300:]}")
if all(os.path.exists(path(d + ".pred.h5")) for d in ("t.csv", "t.csv.gz")):
    with h5py.File(path("t.csv.pred.h5"), "r") as p, h5py.File(path("t.csv.gz.pred.h5"), "r") as q:
        check(sorted(p.keys()) == sorted(q.keys()) and all(np.array_equal(p[k][...], q[k][...]) for k in p.keys()),
              "predict: the .csv.gz's outputs are the plain file's")

preds = []
for data in ("t.csv", "t.csv.gz"):
    r = run([predict, path("gbdt_plain1.json"), path(data), path(data + ".pred.txt"), "--header", "--label-column", "y"])
    check(r.returncode == 0, f"predict (gbdt) on {data}: {r.stderr[-300:]}")
    preds.append(open(path(data + ".pred.txt")).read() if r.returncode == 0 else data)
check(preds[0] == preds[1], "predict (gbdt): the .csv.gz's predictions are the plain file's")

# 3. LibSVM as bzip2 (the LIBSVM page's files) trains the plain file's model; a validation_file as
# .gz gives the plain file's validation losses.
with open(path("t.svm"), "w") as f:
    f.writelines(f"{r.y} 1:{r.a} 2:{r.b}\n" for r in df.itertuples())
with open(path("t.svm"), "rb") as f, open(path("t.svm.bz2"), "wb") as g:
    g.write(bz2.compress(f.read()))
models = []
for data in ("t.svm", "t.svm.bz2"):
    deck_path = path(data + ".in")
    with open(deck_path, "w") as f:
        f.write(f"model gbdt\ndata_file {path(data)}\nobjective regression\nnum_trees 5\noutput {path(data)}.json\n")
    r = run([train, deck_path])
    check(r.returncode == 0, f"gbdt on {data}: {r.stderr[-300:]}")
    models.append(open(path(data) + ".json", "rb").read() if r.returncode == 0 else data)
check(models[0] == models[1], "gbdt from t.svm.bz2: the plain file's model byte for byte")
val = []
for data in ("t.csv", "t.csv.gz"):
    r = run([train, deck("val_" + data, path("t.csv"), f"model mlp\nvalidation_file {path(data)}\nhidden_sizes 8\n"
                                                          f"epochs 2\noutput {path('val_' + data)}.h5\n")])
    check(r.returncode == 0, f"mlp with validation_file {data}: {r.stderr[-300:]}")
    val.append(re.findall(r"val loss = [0-9.e+-]+", r.stdout + r.stderr))
check(len(val[0]) == 2 and val[0] == val[1], f"validation_file t.csv.gz: the plain file's losses {val}")

# 3b. zstd's checksum is optional: a file without one is read, saying a damaged byte may pass unseen.
if shutil.which("zstd"):
    subprocess.run(["zstd", "-q", "-f", "--no-check", path("t.csv"), "-o", path("nocheck.csv.zst")], check=True)
    said = {}
    for data in ("t.csv.zst", "nocheck.csv.zst"):
        r = run([train, deck("note_" + data, path(data), f"model gbdt\nnum_trees 1\noutput {path(data)}.note.json\n")])
        check(r.returncode == 0, f"gbdt on {data}: {r.stderr[-300:]}")
        said[data] = "has no checksum" in r.stdout + r.stderr
    check(said == {"t.csv.zst": False, "nocheck.csv.zst": True},
          f"a .zst without a checksum is noted, one with a checksum not: {said}")

# 4. Damaged files: exit 2 on 2 ranks, naming the file (and the line before a cut).
env = dict(os.environ, OMP_NUM_THREADS="1", OMPI_MCA_orte_tmpdir_base=os.path.join(scratch, "ompi"))
for data in [f for f in files if f != "members.csv.gz"]:
    with open(path(data), "rb") as f:
        good = f.read()
    flipped = bytearray(good)
    flipped[len(good) // 2] ^= 0x10
    for kind, bad in (("truncated", good[:len(good) * 3 // 5]), ("bit-flipped", bytes(flipped))):
        name = kind + "_" + data
        with open(path(name), "wb") as f:
            f.write(bad)
        cmd = [sys.argv[2], "-np", "2", "--oversubscribe", "--bind-to", "none", train,
               deck("bad_" + name, path(name), f"model gbdt\nnum_trees 2\noutput {path(name)}.json\n")]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
        except subprocess.TimeoutExpired:
            check(False, f"{kind} {data}: train hung")
            continue
        said = r.stdout + r.stderr
        first = next((line for line in said.splitlines() if path(name) in line), said.strip()[-200:])
        check(r.returncode == 2 and path(name) in said and "internal error" not in said,
              f"{kind} {data}: exit {r.returncode}, {first}")
        if kind == "truncated":  # zstd and bzip2 give a block's text whole: this one is cut in its first
            check("ends early" in said and ("is the last whole line before it" in said or not data.endswith(".gz")),
                  f"{kind} {data}: says the data ends early (gzip: after a named line)")

check.finish()
