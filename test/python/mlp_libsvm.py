#!/usr/bin/env python3
"""The mlp on LibSVM files (Note [absent LibSVM entries] in src/io/libsvm_line.cpp): with libsvm_absent
unset an absent id:value entry is 0, as scikit-learn's load_svmlight_file reads it, so the mlp on a file
scikit-learn's dump_svmlight_file wrote (zeros dropped) takes the steps of the mlp on the same table as a
CSV with explicit zeros, bit for bit (losses and weights); libsvm_absent missing with missing_numbers mean
takes those of the CSV with empty cells; libsvm_absent missing with missing_numbers error exits 2 naming
the file, line and feature id, on 2 ranks agreed; predict reads a LibSVM file as training did (the
weights file keeps libsvm_absent and libsvm_base, another value of either is refused) and reports train's
validation loss; an ensemble's mlp deck member reads as the ensemble deck says and its file keeps that
reading for predict.
usage: mlp_libsvm.py BUILD_DIR MPIEXEC SCRATCH_DIR"""
import json
import os
import re
import sys

import h5py
import numpy as np
from tool_run import Checks, deck_args, import_or_skip, tool_script

[datasets] = import_or_skip("sklearn.datasets")

apps, scratch, run = tool_script(sys.argv)
check = Checks()
path = lambda name: os.path.join(scratch, name)  # noqa: E731
N, F = 160, 6

# A sparse table: about half the entries 0 (dropped by dump_svmlight_file), three decimals, so the
# LibSVM and CSV files write every value with the same digits.
rng = np.random.default_rng(5)
X = np.where(rng.uniform(size=(N, F)) < 0.5, 0.0, rng.normal(size=(N, F)).round(3))
X[0, F - 1] = 1.5  # the highest id appears: the file's width is F
y = (X @ rng.normal(size=F) + 0.1 * rng.normal(size=N)).round(3)
datasets.dump_svmlight_file(X, y, path("t.svm"), zero_based=False)
Xs, ys = datasets.load_svmlight_file(path("t.svm"), n_features=F, zero_based=False)
dense = Xs.toarray()
check(np.array_equal(dense, X) and np.array_equal(ys, y), "scikit-learn reads its file back as the dense table")
present = sum(line.count(":") for line in open(path("t.svm")))
check(present < N * F * 0.6, f"the LibSVM file leaves out the zeros ({N * F - present} of {N * F} entries absent)")


def write_csv(name, cells):
    with open(path(name), "w") as f:
        for label, row in zip(ys, cells):
            f.write(",".join(["%r" % label] + row) + "\n")
    return path(name)


zeros_csv = write_csv("zeros.csv", [["%r" % v for v in row] for row in dense])  # scikit-learn's matrix
empty_csv = write_csv("empty.csv", [["%r" % v if v != 0 else "" for v in row] for row in dense])


def train(name, data, *settings, ranks=1):
    args = deck_args(path(name + ".in"), f"""model mlp
data_file {data}
label_column 0
loss mse
hidden_sizes 8,8
optimizer adamw
lr 0.01
batch_size 16
epochs 3
validation_fraction 0.25
log_every 1
metrics_file {path(name + ".jsonl")}
output {path(name + ".h5")}
""", settings)
    return run([apps("train"), *args], ranks)


def losses(name):
    recs = [json.loads(line) for line in open(path(name + ".jsonl"))]
    return [(r.get("type"), r.get("loss"), r.get("val_loss")) for r in recs if r.get("type") in ("step", "epoch")]


def params(name):
    with h5py.File(path(name + ".h5"), "r") as h:
        out = {}
        h.visititems(lambda k, v: out.update({k: v[...].tobytes()}) if isinstance(v, h5py.Dataset) else None)
        return out


def same(a, b, what):
    ra, rb = train(a[0], a[1], *a[2:]), train(b[0], b[1], *b[2:])
    ok = ra.returncode == 0 and rb.returncode == 0
    check(ok, what + ": both train: " + (ra.stdout + ra.stderr)[-300:] + (rb.stdout + rb.stderr)[-300:])
    if ok:
        la, lb = losses(a[0]), losses(b[0])
        check(len(la) > 3 and la == lb, f"{what}: the same {len(la)} step and epoch losses, bit for bit")
        check(params(a[0]) == params(b[0]), what + ": the same weights and statistics, byte for byte")
    return ra


r = same(("svm", path("t.svm")), ("csv", zeros_csv), "libsvm_absent unset = the CSV of zeros")
check("absent entries read as 0" in r.stdout + r.stderr, "the log says how absent entries read")
same(("svm_zero", path("t.svm"), "libsvm_absent=zero"), ("csv", zeros_csv), "libsvm_absent zero = the CSV of zeros")
same(("svm_missing", path("t.svm"), "libsvm_absent=missing"), ("csv_empty", empty_csv),
     "libsvm_absent missing (missing_numbers mean) = the CSV of empty cells")

# Note [predicting from LibSVM]: the weights file keeps the reading (libsvm_absent, libsvm_base), so
# predict on the held-out rows as a LibSVM file reports train's validation loss, on 1 and 2 ranks; a
# file without the keys (written before they were kept) reads absent entries as 0.
VAL = N // 4  # validation_fraction 0.25: the tail
datasets.dump_svmlight_file(X[N - VAL:], y[N - VAL:], path("v.svm"), zero_based=False)


def predict(weights, *args, ranks=1):
    r = run([apps("predict"), path(weights + ".h5"), path("v.svm"), path("p_%s.h5" % weights), *args], ranks)
    said = (r.stdout + r.stderr).split("metrics, loss ")[1:]
    check(r.returncode == 0 and said, "predict %s on v.svm: %s" % (weights, (r.stdout + r.stderr)[-300:]))
    return float(said[0].split(",")[0]) if said else float("nan")


for name, absent in (("svm", "zero"), ("svm_missing", "missing")):
    with h5py.File(path(name + ".h5"), "r") as h:
        kept = tuple(h.attrs[k].decode() if isinstance(h.attrs[k], bytes) else h.attrs[k]
                     for k in ("libsvm_absent", "libsvm_base") if k in h.attrs)
    check(kept == (absent, "1"), f"{name}: the weights file keeps libsvm_absent {absent} and libsvm_base 1: {kept}")
    val_loss = [r[2] for r in losses(name) if r[0] == "epoch"][-1]
    for ranks in (1, 2):
        got = predict(name, ranks=ranks)
        check(abs(got - val_loss) <= 1e-6, f"{name}: predict on v.svm ({ranks} rank(s)) loss {got:.6f} = train's "
              f"validation loss {val_loss:.6f}")
    with h5py.File(path(name + ".h5"), "r") as src, h5py.File(path(name + "_old.h5"), "w") as dst:
        for k in src:
            src.copy(k, dst)
        for k, v in src.attrs.items():
            if k not in ("libsvm_absent", "libsvm_base"):
                dst.attrs[k] = v
    old = predict(name + "_old")
    check((abs(old - val_loss) <= 1e-6) == (absent == "zero"),
          f"{name}: a weights file without the keys reads absent entries as 0: loss {old:.6f} "
          f"(trained reading {val_loss:.6f})")
# A weights file's reading attribute of another value is refused naming the file, the attribute and
# its value (not read as some default), on 2 ranks agreed, with no output.
for key, value, ranks in (("libsvm_base", "2", 1), ("libsvm_absent", "sometimes", 2)):
    odd = path(f"odd_{key}.h5")
    with h5py.File(path("svm.h5"), "r") as src, h5py.File(odd, "w") as dst:
        for k in src:
            src.copy(k, dst)
        for k, v in src.attrs.items():
            dst.attrs[k] = v
        dst.attrs[key] = np.bytes_(value)
    r = run([apps("predict"), odd, path("v.svm"), path("p_odd.h5")], ranks)
    allowed = '"0" or "1"' if key == "libsvm_base" else '"zero" or "missing"'
    said = f"{odd}: attribute '{key}' is \"{value}\": must be {allowed}"
    check(r.returncode == 2 and said in r.stdout + r.stderr and not os.path.exists(path("p_odd.h5")),
          f"a weights file's {key} {value} ({ranks} rank(s)): exit {r.returncode}: " + (r.stdout + r.stderr)[-300:])
r = run([apps("predict"), path("svm.h5"), path("v.svm"), path("p_w.h5"), "--weight-column", "1"])
check(r.returncode == 2 and "is LibSVM: give its weights in --weight-file" in r.stdout + r.stderr
      and not os.path.exists(path("p_w.h5")), "predict --weight-column on LibSVM: exit %d" % r.returncode)

# Note [LibSVM members]: an ensemble's mlp deck member reads the rows as the ensemble deck says (default
# missing, as its trees do) and its file keeps that reading: predict MEMBER on the held-out rows as a
# LibSVM file gives the member's held-out rmse of the ensemble's table file.
with open(path("member.in"), "w") as f:
    f.write("model mlp\ndata_file %s\nlabel_column 0\nloss mse\nhidden_sizes 8\nbatch_size 16\nepochs 2\n"
            "log_every 100000\n" % path("t.svm"))
for absent in ("", "zero"):
    name = "ens_" + (absent or "default")
    with open(path(name + ".in"), "w") as f:
        f.write("model ensemble\nobjective regression\ndata_file %s\nvalidation_fraction 0.25\nmembers %s\n"
                "folds 2\nseed 3\noutput %s\n%s" % (path("t.svm"), path("member.in"), path(name + ".json"),
                                                     "libsvm_absent zero\n" if absent else ""))
    r = run([apps("train"), path(name + ".in")])
    check(r.returncode == 0, name + ": an ensemble with an mlp deck on t.svm: " + (r.stdout + r.stderr)[-300:])
    if r.returncode != 0:
        continue
    member = name + ".member"
    with h5py.File(path(member + ".h5"), "r") as h:
        kept = h.attrs["libsvm_absent"]
    kept = kept.decode() if isinstance(kept, bytes) else kept
    check(kept == (absent or "missing"), f"{name}: the member file keeps the ensemble's reading: {kept}")
    table_rmse = float(open(path(name + ".table.csv")).read().splitlines()[1].split(",")[2])
    got = run([apps("predict"), path(member + ".h5"), path("v.svm"), path("p_" + member + ".h5")])
    said = (got.stdout + got.stderr).split(", rmse ")[1:]
    rmse = float(said[0].split()[0].rstrip(",")) if said else float("nan")
    check(abs(rmse - table_rmse) <= 1e-6, f"{name}: predict MEMBER on v.svm rmse {rmse:.6f} = the table's "
          f"held-out rmse {table_rmse:.6f}")

# Refused: missing numbers with missing_numbers error, every rank the same one message.
for ranks in (1, 2):
    r = train("refused%d" % ranks, path("t.svm"), "libsvm_absent=missing", "missing_numbers=error", ranks=ranks)
    msg = r.stdout + r.stderr
    check(r.returncode == 2 and path("t.svm") + ":" in msg and "feature id" in msg and
          "libsvm_absent missing reads an absent entry as missing" in msg and
          not os.path.exists(path("refused%d.h5" % ranks)),
          f"missing_numbers error on {ranks} rank(s): exit {r.returncode}: " +
          next((line for line in msg.splitlines() if "error" in line), msg[-300:]))
# Refused: bce on LibSVM's -1/+1 labels (binary cross-entropy's targets are probabilities in [0, 1];
# they trained on garbage), every rank the same one message; 0/1 labels train.
signs = path("signs.svm")
datasets.dump_svmlight_file(X, np.where(y > 0, 1, -1), signs, zero_based=False)
for ranks in (1, 2):
    r = train("bce%d" % ranks, signs, "loss=bce", ranks=ranks)
    msg = r.stdout + r.stderr
    check(r.returncode == 2 and re.search(re.escape(signs) + r":\d+: label holds a value outside \[0, 1\]", msg) and
          not os.path.exists(path("bce%d.h5" % ranks)),
          f"bce on -1/+1 labels on {ranks} rank(s): exit {r.returncode}: " +
          next((line for line in msg.splitlines() if "error" in line), msg[-300:]))
datasets.dump_svmlight_file(X, (y > 0).astype(int), path("bits.svm"), zero_based=False)
check(train("bce01", path("bits.svm"), "loss=bce").returncode == 0, "bce on 0/1 labels trains")
check.finish()
