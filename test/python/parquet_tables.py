"""Parquet tables (data_format parquet) against the same pandas DataFrame written as CSV: numeric,
integer, null-holding, string-category and pandas-category columns and a label of 24 class names,
as Parquet in row groups of 97 rows. `model gbdt` (multiclass) trains the same trees from both at
1 and 2 ranks (its JSON equal but for the file name); an mlp with one-hot inputs and the text
label (cross_entropy) trains the same weights; predict gives the same output on both files, for
the trees and the mlp; `model ensemble` (a tree and an mlp member) logs the same losses and
scores; data_format auto picks parquet. Every number is exact in float32 (quarters,
small integers): Note [Parquet floats], the CSV's text and the Parquet double then give the same
float. Refusals (exit 2, file, row or column named): a list column, a label column not there
(naming the columns there are), a truncated file, a null label, a class the model does not know at
predict (`file: row N`, a file named without .parquet too), a Parquet file where the program finds
no module. A weight column and a ranking table's query ids (with bool and int32 features)
give the trees the CSV's models too.
usage: parquet_tables.py BUILD MPIEXEC SCRATCH"""
import os
import shutil
import subprocess
import sys

from tool_run import Checks, import_or_skip, tool_script

np, pd, pa, pq = import_or_skip("numpy", "pandas", "pyarrow", "pyarrow.parquet")

apps, out, run = tool_script(sys.argv)
check = Checks()
p = lambda *names: os.path.join(out, *names)  # noqa: E731

rng = np.random.default_rng(11)
n = 600
classes = [f"c{k:02d}" for k in range(24)]
label = rng.integers(0, 24, n)
df = pd.DataFrame({
    "x": (rng.integers(-40, 40, n) / 4 + label / 2).astype("float64"),  # quarters: exact in float32
    "count": rng.integers(0, 100, n).astype("int64"),
    "gap": np.where(rng.random(n) < 0.15, np.nan, rng.integers(0, 20, n) / 2),  # nulls: missing
    "colour": pd.Series([["red", "green", "blue", "violet"][(k + int(r)) % 4] if r < 3.5 else None
                         for k, r in zip(label, rng.integers(0, 4, n))], dtype="object"),
    "size": pd.Categorical([["S", "M", "L", "XL"][k % 4] for k in rng.integers(0, 4, n)]),
    "kind": [classes[k] for k in label],
})
df.to_csv(p("t.csv"), index=False)
pq.write_table(pa.Table.from_pandas(df, preserve_index=False), p("t.parquet"), row_group_size=97)
shutil.copy(p("t.parquet"), p("t_noext"))  # the PAR1 magic, no extension
meta = pq.ParquetFile(p("t.parquet")).metadata
check(meta.num_row_groups == 7, f"{meta.num_row_groups} row groups of 97 rows")


def deck(name, text):
    with open(p(name), "w") as f:
        f.write(text)
    return p(name)


def train(deck_path, ranks=1, *sets):
    args = [apps("train"), deck_path] + [a for s in sets for a in ("--set", s)]
    r = run(args, ranks)
    if r.returncode != 0:
        print(r.stdout, r.stderr)
    return r


gbdt = """model gbdt
data_file {data}
text_header true
label_column {label}
objective multiclass
num_trees 4
max_depth 3
output {out}
"""
models = {}
for name, data, fmt in [("csv", "t.csv", "csv"), ("pq", "t.parquet", "parquet"), ("auto", "t_noext", "auto")]:
    for ranks in (1, 2):
        d = deck(f"gbdt_{name}{ranks}.in", gbdt.format(data=p(data), label="kind", out=p(f"gbdt_{name}{ranks}.json")) +
                 f"data_format {fmt}\n")
        r = train(d, ranks)
        check(r.returncode == 0, f"gbdt from {data} ({fmt}) at {ranks} rank(s)")
        if r.returncode == 0:
            with open(p(f"gbdt_{name}{ranks}.json")) as f:
                models[(name, ranks)] = f.read().replace(p(data), "DATA")
check(len(models) == 6 and len(set(models.values())) == 1,
      "the same gbdt model from the CSV and the Parquet file (by name and by PAR1), 1 and 2 ranks")
check('"c00"' in models.get(("pq", 1), "") and '"violet"' in models.get(("pq", 1), ""),
      "the model holds the class names and the string categories")

# predict on both files, the same lines.
for f in ("t.csv", "t.parquet"):
    r = run([apps("predict"), p("gbdt_pq1.json"), p(f), p(f + ".pred"), "--header", "--label-column", "kind"])
    check(r.returncode == 0, f"predict (trees) on {f}: {r.stderr.strip()[-300:]}")
check(os.path.exists(p("t.parquet.pred")) and open(p("t.csv.pred")).read() == open(p("t.parquet.pred")).read(),
      "predict (trees): the same output from the CSV and the Parquet file")

# An mlp with one-hot inputs (colour, size) and the text label, from both: the same weights.
mlp = """model mlp
data_file {data}
text_header true
label_column kind
loss cross_entropy
hidden_sizes 16
batch_size 32
epochs 3
lr 1e-2
validation_fraction 0.2
seed 3
output {out}
"""
for name, data in [("csv", "t.csv"), ("pq", "t.parquet")]:
    r = train(deck(f"mlp_{name}.in", mlp.format(data=p(data), out=p(f"mlp_{name}.h5"))))
    check(r.returncode == 0, f"mlp from {data}")
h5diff = shutil.which("h5diff")

def same_datasets(a, b, objects):
    """h5diff of the objects (the files' attributes name their data files)."""
    rs = [subprocess.run([h5diff, a, b, o], capture_output=True, text=True) for o in objects]
    return all(r.returncode == 0 for r in rs), " ".join(r.stdout[-200:] for r in rs if r.returncode)


same, why = same_datasets(p("mlp_csv.h5"), p("mlp_pq.h5"), ["/fc0", "/fc1", "/standardisation"])
check(same, f"mlp: the same weights from the CSV and the Parquet file {why}")
for f in ("t.csv", "t.parquet"):
    r = run([apps("predict"), p("mlp_pq.h5"), p(f), p(f + ".mlp.h5")])
    check(r.returncode == 0, f"predict (mlp) on {f}: {r.stderr.strip()[-300:]}")
same, why = same_datasets(p("t.csv.mlp.h5"), p("t.parquet.mlp.h5"), ["/outputs", "/probabilities"])
check(same, f"predict (mlp): the same output from both files {why}")


# A weight column and a ranking table's query ids (bool and int32 columns among the features): the
# trees read both as from the CSV (bool as 0/1: the CSV is written with 0/1, as the Parquet reads it).
rk = pd.DataFrame({"qid": np.repeat(np.arange(60), 10).astype("int32"), "x": df["x"], "gap": df["gap"],
                   "colour": df["colour"], "flag": (label % 3 == 0), "w": rng.integers(1, 9, n) / 4,
                   "rel": (label % 4).astype("int64")})
rk.assign(flag=rk["flag"].astype(int)).to_csv(p("r.csv"), index=False)
pq.write_table(pa.Table.from_pandas(rk, preserve_index=False), p("r.parquet"), row_group_size=128)
for name, extra in [("w", "objective regression\nlabel_column rel\nweight_column w\n"),
                    ("rank", "objective lambdarank\nlabel_column rel\ngroup_column qid\n")]:
    got = []
    for data in ("r.csv", "r.parquet"):
        d = deck(f"{name}_{data}.in", f"model gbdt\ndata_file {p(data)}\ntext_header true\nnum_trees 4\n"
                 f"max_depth 3\noutput {p(name + '_' + data + '.json')}\n" + extra)
        r = train(d, 2)
        check(r.returncode == 0, f"gbdt {name} from {data} at 2 ranks")
        got.append(open(p(name + "_" + data + ".json")).read().replace(p(data), "DATA") if r.returncode == 0 else data)
    check(got[0] == got[1], f"gbdt {name}: the same model from the CSV and the Parquet file")

# model ensemble (a tree and an mlp deck member, stacked) from both files: the same members and metrics.
member = "data_file {data}\ntext_header true\nlabel_column x\n"
deck("m_gbdt.in", "model gbdt\nobjective regression\nnum_trees 5\nmax_depth 3\n" + member.format(data=p("t.csv")))
deck("m_mlp.in", "model mlp\nloss mse\nhidden_sizes 8\nepochs 2\nbatch_size 32\n" + member.format(data=p("t.csv")))
scores = {}
for data in ("t.csv", "t.parquet"):
    r = train(deck(f"ens_{data}.in", "model ensemble\nobjective regression\nvalidation_fraction 0.2\nfolds 2\nseed 3\n"
                   + member.format(data=p(data)) + f"members {p('m_gbdt.in')},{p('m_mlp.in')}\n"
                   + f"output {p('ens_' + data + '.json')}\n"))
    check(r.returncode == 0, f"model ensemble from {data}")
    scores[data] = [l.split(" batches)")[0] for l in (r.stdout + r.stderr).splitlines()
                    if "avg loss" in l or l.startswith("ensemble  ")]  # not the throughput
check(scores["t.csv"] and scores["t.csv"] == scores["t.parquet"], "model ensemble: the same losses and scores")


def refused(data, said, what, label="kind"):
    d = deck("bad.in", gbdt.format(data=data, label=label, out=p("bad.json")))
    r = run([apps("train"), d])
    msg = r.stdout + r.stderr
    check(r.returncode == 2 and all(s in msg for s in said), f"{what}: exit {r.returncode}: "
          + next((l for l in msg.splitlines() if "rror" in l), msg.strip()[-300:]))


bad = df.copy()
bad["tags"] = [[1, 2]] * n
pq.write_table(pa.Table.from_pandas(bad, preserve_index=False), p("list.parquet"))
refused(p("list.parquet"), [p("list.parquet"), "column 'tags'", "list"], "a list column")
refused(p("t.parquet"), [p("t.parquet"), "no column named 'label'", "'x', 'count', 'gap', 'colour', 'size', 'kind'"],
        "label column missing", label="label")
with open(p("t.parquet"), "rb") as f:
    head = f.read()
with open(p("cut.parquet"), "wb") as f:
    f.write(head[: len(head) // 2])
refused(p("cut.parquet"), [p("cut.parquet"), "not a readable Parquet file"], "a truncated file")
nl = df.copy()
nl.loc[200, "kind"] = None
pq.write_table(pa.Table.from_pandas(nl, preserve_index=False), p("null.parquet"), row_group_size=97)
refused(p("null.parquet"), [p("null.parquet") + ": row 201: column 'kind'", "missing label"], "a null label")

# A message of the tables' shared code (a class the model does not know, at predict) names the row.
uk = df.copy()
uk.loc[4, "kind"] = "zz"
pq.write_table(pa.Table.from_pandas(uk, preserve_index=False), p("unknown.parquet"), row_group_size=97)
r = run([apps("predict"), p("gbdt_pq1.json"), p("unknown.parquet"), p("unknown.pred"), "--header",
         "--label-column", "kind"])
check(r.returncode == 2 and p("unknown.parquet") + ": row 5: " in r.stderr,
      f"an unknown class at predict names the Parquet row: exit {r.returncode}: {r.stderr.strip()[-300:]}")
shutil.copy(p("unknown.parquet"), p("unknown_noext"))  # found by its bytes (PAR1): its rows all the same
r = run([apps("predict"), p("gbdt_pq1.json"), p("unknown_noext"), p("unknown.pred"), "--header",
         "--label-column", "kind"])
check(r.returncode == 2 and p("unknown_noext") + ": row 5: " in r.stderr,
      f"the same without .parquet in its name names the row: exit {r.returncode}: {r.stderr.strip()[-300:]}")

# A program that finds no module (the GPU bundle, a build without Arrow) names the file and the way out.
os.makedirs(p("alone"))
shutil.copy(apps("train"), p("alone", "train"))
r = run([p("alone", "train"), deck("alone.in", gbdt.format(data=p("t.parquet"), label="kind", out=p("alone.json")))])
check(r.returncode == 2 and "finds no Parquet module" in r.stderr and p("t.parquet") in r.stderr
      and "docs/parquet.md" in r.stderr,
      f"no module: refused: {r.stderr.strip()[-300:]}")
check.finish()
