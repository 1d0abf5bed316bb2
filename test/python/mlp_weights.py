#!/usr/bin/env python3
"""Row and class weights for the mlp on pandas-written CSV tables (docs/row_weights.md, Note [network
row weights] in src/train/row_weights.cpp): PyTorch, from the CSV, the stored categories and the
initial weights, takes the same SGD steps with (w * loss(reduction="none")).sum() / B for mse,
cross_entropy (label smoothing) and bce, and agrees on the first step's loss and gradient norm, the
trained weights and the weighted validation loss sum w l / sum w; predict --weight-column reports that
loss on 1 and 2 ranks; weights all 1 train the unweighted model bit for bit; 2 ranks train 1 rank's
weights bit for bit (rank_invariant); weight_file is the weight column; class_weights balanced is the
explicit column n / (K count_k); bad weights and settings exit 2 naming file, line and key.
usage: mlp_weights.py BUILD_DIR MPIEXEC SCRATCH_DIR"""
import json
import os
import sys

import h5py
import numpy as np
import pandas as pd
from tool_run import Checks, check_table_rank_invariance, deck_args, import_or_skip, table_and_config, tool_script

[torch] = import_or_skip("torch")

apps, scratch, run = tool_script(sys.argv)
train = apps("train")
check = Checks()
path = lambda name: os.path.join(scratch, name)  # noqa: E731
N, VAL, B, LR, H = 240, 80, 48, 0.2, 8


def table(n, seed):
    """Two numbers, a text colour, a row weight and three labels: an imbalanced class (kind), a
    regression target (y) and a 0/1 target (hit)."""
    r = np.random.default_rng(seed)
    x1, x2 = r.normal(size=n).round(3), r.normal(size=n).round(3)
    colour = r.choice(["red", "green", "blue"], size=n, p=[0.5, 0.3, 0.2])
    kind = np.where(x1 > 0.8, "rare", np.where(x2 > 0, "some", "most"))
    return pd.DataFrame({"x1": x1, "x2": x2, "colour": colour, "w": r.uniform(0, 3, size=n).round(3), "kind": kind,
                         "y": (x1 - 2 * x2 + (colour == "red")).round(3), "hit": (x1 + x2 > 0).astype(int)})


data, val = table(N, 1), table(VAL, 2)
LABELS = {"cross_entropy": "kind", "mse": "y", "bce": "hit"}


def write(name, df, label, weights=True):
    cols = ["x1", "x2", "colour"] + (["w"] if weights else []) + [label]
    df[cols].to_csv(path(name), index=False)
    return path(name)


def deck(name, loss, train_csv, *settings, weight="w", val_csv=""):
    # The raw numbers, as the PyTorch reference takes them (standardisation: cli_mlp_standardize).
    return deck_args(path(name + ".in"), f"""model mlp
data_file {train_csv}
{"validation_file " + val_csv if val_csv else "validation_fraction 0.25"}
text_header true
label_column {LABELS[loss]}
{"weight_column " + weight if weight else ""}
loss {loss}
standardize_inputs false
standardize_targets false
hidden_sizes {H}
optimizer sgd
shuffle false
batch_size {B}
epochs 1
lr {LR}
log_every 1
metrics_file {path(name + ".jsonl")}
output {path(name + ".h5")}
""", settings)


def params(name):
    with h5py.File(path(name + ".h5"), "r") as h:
        return {k: np.array(h[k][...]) for k in ("fc0/weight", "fc0/bias", "fc1/weight", "fc1/bias")}


def inputs(df, enc):
    """The inputs the table encoding gives: the numbers, then the colour's one-hot block."""
    colours = enc["categories"][2]
    onehot = np.stack([(df["colour"] == c).to_numpy(np.float32) for c in colours], axis=1)
    return torch.tensor(np.concatenate([df[["x1", "x2"]].to_numpy(np.float32), onehot], axis=1))


def losses(loss, out, df, enc, smoothing):
    if loss == "cross_entropy":
        y = torch.tensor([enc["classes"].index(k) for k in df["kind"]])
        return torch.nn.functional.cross_entropy(out, y, reduction="none", label_smoothing=smoothing)
    t = torch.tensor(df[[LABELS[loss]]].to_numpy(np.float32))
    if loss == "mse":
        return torch.nn.functional.mse_loss(out, t, reduction="none").mean(1)
    return torch.nn.functional.binary_cross_entropy_with_logits(out, t, reduction="none").mean(1)


# 1. PyTorch parity: the same rows, batches (shuffle false) and SGD steps from the same initial weights.
for loss, smoothing in (("cross_entropy", 0.1), ("mse", 0.0), ("bce", 0.0)):
    csv, val_csv = write(loss + ".csv", data, LABELS[loss]), write(loss + "_val.csv", val, LABELS[loss])
    extra = ["label_smoothing=%g" % smoothing]
    r = run([train, *deck(loss + "_init", loss, csv, "lr=0", *extra, val_csv=val_csv)])
    check(r.returncode == 0, f"{loss}: the initial weights (lr 0): " + r.stderr[-300:])
    r = run([train, *deck(loss, loss, csv, *extra, val_csv=val_csv)])
    check(r.returncode == 0, f"{loss}: weighted training: " + r.stderr[-300:])
    if r.returncode != 0:
        continue
    enc, _ = table_and_config(path(loss + ".h5"))
    p0 = params(loss + "_init")
    fc0, fc1 = torch.nn.Linear(5, H), torch.nn.Linear(H, p0["fc1/weight"].shape[0])
    with torch.no_grad():
        for lin, k in ((fc0, "fc0"), (fc1, "fc1")):
            lin.weight.copy_(torch.tensor(p0[k + "/weight"]))
            lin.bias.copy_(torch.tensor(p0[k + "/bias"]))
    net = torch.nn.Sequential(fc0, torch.nn.ReLU(), fc1)
    opt = torch.optim.SGD(net.parameters(), lr=LR)
    x, w = inputs(data, enc), torch.tensor(data["w"].to_numpy(np.float32))
    first = None
    for s in range(0, N, B):
        opt.zero_grad()
        step = (w[s:s + B] * losses(loss, net(x[s:s + B]), data.iloc[s:s + B], enc, smoothing)).sum() / len(w[s:s + B])
        step.backward()
        if first is None:
            first = (step.item(), float(torch.sqrt(sum((q.grad ** 2).sum() for q in net.parameters()))))
        opt.step()
    ours = [json.loads(line) for line in open(path(loss + ".jsonl"))]
    step1 = next(m for m in ours if m.get("type") == "step")
    summary = next(m for m in ours if m.get("type") == "summary")
    check(abs(step1["loss"] - first[0]) <= 1e-5 * abs(first[0]),
          f"{loss}: first step's weighted loss {step1['loss']:.7g}, PyTorch {first[0]:.7g}")
    check(abs(step1["grad_norm"] - first[1]) <= 1e-5 * first[1],
          f"{loss}: first step's gradient norm {step1['grad_norm']:.7g}, PyTorch {first[1]:.7g}")
    p1 = params(loss)
    err = max(float(np.abs(p1[k + "/weight"] - lin.weight.detach().numpy()).max()) for k, lin in (("fc0", fc0), ("fc1", fc1)))
    check(err < 1e-5, f"{loss}: weights after {-(-N // B)} weighted SGD steps: largest difference from PyTorch {err:.1e}")
    with torch.no_grad():
        wv = torch.tensor(val["w"].to_numpy(np.float32))
        ref = float((wv * losses(loss, net(inputs(val, enc)), val, enc, smoothing)).sum() / wv.sum())
    check(abs(summary["val_loss"] - ref) <= 1e-5 * abs(ref),
          f"{loss}: validation loss sum w l / sum w {summary['val_loss']:.7g}, PyTorch {ref:.7g}")

# predict --weight-column: train's weighted validation loss, on 1 and 2 ranks (the mse model: no smoothing).
summary = [json.loads(line) for line in open(path("mse.jsonl"))][-1]
for ranks in (1, 2):
    r = run([apps("predict"), path("mse.h5"), path("mse_val.csv"), path("pred%d.h5" % ranks), "--weight-column", "w"],
            ranks)
    said = "weighted (sum w l / sum w) metrics, loss %.6f, rmse %.6f" % (summary["val_loss"],
                                                                        np.sqrt(summary["val_loss"]))
    check(r.returncode == 0 and said in r.stdout + r.stderr,
          "predict --weight-column on %d rank(s): %s" % (ranks, (r.stdout + r.stderr)[-400:]))

# Note [stored label smoothing]: the cross_entropy models trained with label_smoothing 0.1 keep it in
# their config, so predict's loss is train's validation loss (weights from the column or from a file);
# a file without the key (written before it was stored) reads 0: the unsmoothed loss.
def predict_loss(weights, table, *args, ranks=1):
    r = run([apps("predict"), weights, table, path("pred_ce.h5"), *args], ranks)
    said = [w for w in (r.stdout + r.stderr).split("metrics, loss ")[1:]]
    check(r.returncode == 0 and said, "predict %s %s: %s" % (os.path.basename(table), " ".join(args),
                                                              (r.stdout + r.stderr)[-300:]))
    return said[0].split(",")[0] if said else None


ce_val = [json.loads(line) for line in open(path("cross_entropy.jsonl"))][-1]["val_loss"]
_, ce_config = table_and_config(path("cross_entropy.h5"))
check("label_smoothing=0.1 " in ce_config + " ", "the weights file keeps label_smoothing: " + ce_config)
for ranks in (1, 2):
    got = predict_loss(path("cross_entropy.h5"), path("cross_entropy_val.csv"), "--weight-column", "w", ranks=ranks)
    check(got == "%.6f" % ce_val, "predict's weighted cross_entropy on %d rank(s) %s = train's validation loss "
          "%.6f (label_smoothing 0.1)" % (ranks, got, ce_val))
with h5py.File(path("cross_entropy.h5"), "r") as h:
    attrs = {k: h.attrs[k] for k in h.attrs}
for name, config in (("ce_old", ce_config.replace(" label_smoothing=0.1", "")),
                     ("ce_zero", ce_config.replace("label_smoothing=0.1", "label_smoothing=0"))):
    with h5py.File(path("cross_entropy.h5"), "r") as src, h5py.File(path(name + ".h5"), "w") as dst:
        for k in src:
            src.copy(k, dst)
        for k, v in attrs.items():
            dst.attrs[k] = config if k == "config" else v
old, zero = (predict_loss(path(n + ".h5"), path("cross_entropy_val.csv"), "--weight-column", "w")
             for n in ("ce_old", "ce_zero"))
check(old is not None and old == zero and old != "%.6f" % ce_val,
      "a weights file without label_smoothing reads 0: loss %s, with label_smoothing=0 %s (smoothed %.6f)"
      % (old, zero, ce_val))

# 2. Weights all 1: the unweighted model bit for bit.
ones = data.assign(w=1.0)
csv1, csv0 = write("ones.csv", ones, "kind"), write("none.csv", ones, "kind", weights=False)
r1 = run([train, *deck("ones", "cross_entropy", csv1, "epochs=2", "shuffle=true", "optimizer=adamw", "lr=0.01")])
r0 = run([train, *deck("none", "cross_entropy", csv0, "epochs=2", "shuffle=true", "optimizer=adamw", "lr=0.01",
                       weight="")])
check(r1.returncode == 0 and r0.returncode == 0, "weights all 1 and no weights train: " + r1.stderr[-200:] + r0.stderr[-200:])
a, b = params("ones"), params("none")
check(all(a[k].tobytes() == b[k].tobytes() for k in a), "weights all 1 = unweighted, bit for bit")

# 3. rank_invariant on weighted rows: 1 rank and 2 ranks, the same weights bit for bit.
csv = path("cross_entropy.csv")
check_table_rank_invariance(check, run, lambda name, *s: [train, *deck(name, "cross_entropy", csv, "shuffle=true", *s)],
                            B, lambda name: path(name + ".h5"))

# 4. weight_file = weight_column; class_weights balanced = the column n / (K count_k).
with open(path("w.txt"), "w") as f:
    f.write("\n".join("%g" % v for v in data["w"]) + "\n")
with open(path("wv.txt"), "w") as f:
    f.write("\n".join("%g" % v for v in val["w"]) + "\n")
r = run([train, *deck("wfile", "cross_entropy", csv0, "weight_file=" + path("w.txt"), "label_smoothing=0.1",
                      "validation_weight_file=" + path("wv.txt"), weight="",
                      val_csv=write("none_val.csv", val, "kind", weights=False))])
check(r.returncode == 0, "weight_file and validation_weight_file: " + r.stderr[-300:])
if r.returncode == 0:
    a, b = params("wfile"), params("cross_entropy")
    check(all(a[k].tobytes() == b[k].tobytes() for k in a), "weight_file trains the weight column's model bit for bit")
    sa = [json.loads(line) for line in open(path("wfile.jsonl"))][-1]
    sb = [json.loads(line) for line in open(path("cross_entropy.jsonl"))][-1]
    check(sa["val_loss"] == sb["val_loss"], "validation_weight_file: the validation_file column's loss")
    got = predict_loss(path("wfile.h5"), path("none_val.csv"), "--weight-file", path("wv.txt"))
    check(got == "%.6f" % sa["val_loss"], "predict --weight-file's smoothed cross_entropy %s = train's %.6f"
          % (got, sa["val_loss"]))

train_part = data.iloc[: N - N // 4]  # validation_fraction 0.25 holds out the tail
counts = train_part["kind"].value_counts()
balanced = {k: np.float32(len(train_part) / (3 * counts[k])) for k in counts.index}
cw = data.assign(w=[repr(float(balanced[k])) for k in data["kind"]])
r = run([train, *deck("cw_col", "cross_entropy", write("cw.csv", cw, "kind"), "epochs=2", "shuffle=true")])
rb = run([train, *deck("cw_bal", "cross_entropy", csv0, "class_weights=balanced", "epochs=2", "shuffle=true",
                       weight="")])
check(r.returncode == 0 and rb.returncode == 0, "class_weights balanced trains: " + rb.stderr[-300:])
if r.returncode == 0 and rb.returncode == 0:
    a, b = params("cw_col"), params("cw_bal")
    check(all(a[k].tobytes() == b[k].tobytes() for k in a), "class_weights balanced = the column n / (K count_k)")
    sa = [json.loads(line) for line in open(path("cw_col.jsonl"))][-1]
    sb = [json.loads(line) for line in open(path("cw_bal.jsonl"))][-1]
    check(sa["val_loss"] == sb["val_loss"], "and the same weighted validation loss")
    enc, _ = table_and_config(path("cw_bal.h5"))
    line = "class_weights balanced: " + ", ".join("%s %.6g" % (k, balanced[k]) for k in enc["classes"])
    check(line in rb.stdout + rb.stderr, "the log names each class's weight: " + line)


# bce with one 0/1 target: class_weights a,b = the column a (target 0), b (target 1).
bw = data.assign(w=np.where(data["hit"] == 1, 2.5, 0.5))
r = run([train, *deck("bce_col", "bce", write("bce_cw.csv", bw, "hit"), "epochs=2")])
rb = run([train, *deck("bce_cls", "bce", write("bce_none.csv", data, "hit", weights=False), "class_weights=0.5,2.5",
                       "epochs=2", weight="")])
check(r.returncode == 0 and rb.returncode == 0, "bce class_weights: " + rb.stderr[-300:])
if r.returncode == 0 and rb.returncode == 0:
    a, b = params("bce_col"), params("bce_cls")
    check(all(a[k].tobytes() == b[k].tobytes() for k in a), "bce class_weights 0.5,2.5 = the column, bit for bit")

# 5. Refusals: exit 2, naming file, line and key.
def refused(args, expect, what, ranks=1):
    r = run(args, ranks)
    check.refused(r, expect, what)
    check(r.returncode == 2, what + ": exit status %d" % r.returncode)


for name, value, problem in (("neg", "-1", "is negative"), ("nan", "nan", "is missing"), ("text", "heavy", "")):
    bad = data.assign(w=data["w"].astype(object))
    bad.loc[6, "w"] = value
    refused([train, *deck("bad_" + name, "cross_entropy", write(name + ".csv", bad, "kind"))],
            path(name + ".csv") + ":8: weight_column: field 4 (the row weight, weight_column) '" + value + "'",
            "a weight " + value + " " + problem, 2 if name == "neg" else 1)  # 2 ranks: agreed, no hang
enc, _ = table_and_config(path("cross_entropy.h5"))
for name, value, problem in (("neg", "-1", "weight -1 of row 7 is negative or infinite"),
                             ("text", "heavy", "'heavy' is not a number")):
    with open(path("w_%s.txt" % name), "w") as f:
        f.write("\n".join(value if i == 6 else "%g" % v for i, v in enumerate(data["w"])) + "\n")
    at = path("w_%s.txt" % name) + ":7: " + ("weight_file: " if name == "neg" else "")
    refused([train, *deck("wf_" + name, "cross_entropy", csv0, "weight_file=" + path("w_%s.txt" % name), weight="")],
            at + problem, "weight_file: a weight " + value)
refused([train, *deck("cw_len", "cross_entropy", csv, "class_weights=1,2")],
        "class_weights: gives 2 weights for 3 classes (%s)" % ", ".join(enc["classes"]),
        "a class_weights list of the wrong length names the class order")
refused([train, *deck("cw_mse", "mse", path("mse.csv"), "class_weights=balanced")],
        "class_weights: weighs the classes of loss cross_entropy or bce, not loss mse", "class_weights with mse")
refused([train, *deck("cw_neg", "cross_entropy", csv, "class_weights=1,-2,1")],
        "class_weights: '-2' is not a weight", "a negative class weight")
# Note [zero total weight]: rows that all weigh 0 are refused at load (2 ranks: agreed), naming where the
# weights come from: validation rows by the validation_file's column, validation_weight_file, weight_file's
# held-out rows or class_weights; training rows (every step's loss 0: nothing learnt) alike, once the first
# epoch's rows load (every rank's rows count: one rank's may all weigh 0 and train).
def zeros_file(name, rows):
    """A weight file of `rows` zeros; its path."""
    with open(path(name), "w") as f:
        f.write("0\n" * rows)
    return path(name)


def refused_zero(name, loss, train_csv, settings, source, rows, what, ranks=1, **files):
    refused([train, *deck(name, loss, train_csv, *settings, **files)],
            "%s: the weights of the %s are all 0" % (source, rows), what, ranks)


zero_val = write("zero_val.csv", val.assign(w=0.0), "kind")
val_csv, none_val = path("cross_entropy_val.csv"), path("none_val.csv")
zero_train = write("zero_train.csv", data.assign(w=0.0), "kind")
with open(path("w_tail0.txt"), "w") as f:
    f.write("\n".join("0" if i >= N - N // 4 else "%g" % v for i, v in enumerate(data["w"])) + "\n")
one_class = val[val["kind"] == "most"]  # validation rows of one class, weighed 0 by class_weights
zero_cw = write("zero_cw_val.csv", one_class, "kind", weights=False)
misses = write("misses.csv", data[data["hit"] == 0], "hit", weights=False)  # bce: every target 0
no_weights = {"weight": ""}
for name, loss, train_csv, settings, files, source, rows, what, ranks in (
        ("zero_col", "cross_entropy", csv, [], {"val_csv": zero_val}, zero_val + ": weight_column 'w'",
         "%d validation rows" % VAL, "a validation weight column of zeros", 2),
        ("zero_vwf", "cross_entropy", csv0, ["weight_file=" + path("w.txt"),
                                             "validation_weight_file=" + zeros_file("w0.txt", VAL)],
         dict(no_weights, val_csv=none_val), path("w0.txt") + ": validation_weight_file", "%d validation rows" % VAL,
         "a validation_weight_file of zeros", 1),
        ("zero_tail", "cross_entropy", csv0, ["weight_file=" + path("w_tail0.txt")], no_weights,
         path("w_tail0.txt") + ": weight_file", "%d held-out rows (validation_fraction)" % (N // 4),
         "weight_file's held-out rows all 0", 1),
        ("zero_cw", "cross_entropy", csv0, ["class_weights=" + ",".join(
            "0" if k == "most" else "1" for k in enc["classes"])], dict(no_weights, val_csv=zero_cw),
         zero_cw + ": class_weights", "%d validation rows" % len(one_class),
         "class_weights that weigh every validation row 0", 1),
        ("zero_tcol", "cross_entropy", zero_train, [], {"val_csv": val_csv}, zero_train + ": weight_column 'w'",
         "%d training rows" % N, "a training weight column of zeros", 2),
        ("zero_twf", "cross_entropy", csv0, ["weight_file=" + zeros_file("w0_train.txt", N),
                                             "validation_weight_file=" + path("wv.txt")],
         dict(no_weights, val_csv=none_val), path("w0_train.txt") + ": weight_file", "%d training rows" % N,
         "a training weight_file of zeros", 1),
        ("zero_tcw", "bce", misses, ["class_weights=0,1"],
         dict(no_weights, val_csv=write("bce_none_val.csv", val, "hit", weights=False)), misses + ": class_weights",
         "%d training rows" % (data["hit"] == 0).sum(), "class_weights that weigh every training row 0", 2)):
    refused_zero(name, loss, train_csv, settings, source, rows, what, ranks, **files)
one = write("one_train.csv", data.assign(w=[1.0] + [0.0] * (N - 1)), "kind")
r = run([train, *deck("one_w", "cross_entropy", one, val_csv=val_csv)], 2)
check(r.returncode == 0, "one training row of weight 1 trains on 2 ranks (one rank's rows all 0): " + r.stderr[-300:])
# An ensemble's mlp deck member trains on the ensemble's weighted rows: a training part of weights 0
# is refused naming the member's rows (its deck names no weights).
ens_csv = write("ens_zero.csv", data.assign(w=[0.0] * (N - N // 4) + [1.0] * (N // 4)), "y")
with open(path("ens_member.in"), "w") as f:
    f.write("model mlp\ndata_file %s\ntext_header true\nlabel_column y\nloss mse\nhidden_sizes 4\nepochs 1\n" % ens_csv)
with open(path("ens_zero.in"), "w") as f:
    f.write("model ensemble\nobjective regression\ndata_file %s\ntext_header true\nlabel_column y\n"
            "weight_column w\nvalidation_fraction 0.25\nmembers %s\nfolds 2\noutput %s\n"
            % (ens_csv, path("ens_member.in"), path("ens_zero.json")))
refused([train, path("ens_zero.in")], ens_csv + ": the rows of member ens_member: the weights of the",
        "an ensemble's mlp member on rows that all weigh 0", 2)
for args, at in ((["--weight-column", "w"], zero_val + ": --weight-column w"),
                 (["--weight-file", path("w0.txt")], path("w0.txt") + ": --weight-file")):
    out = path("pred_zero.h5")
    src = zero_val if args[0] == "--weight-column" else path("none_val.csv")
    refused([apps("predict"), path("cross_entropy.h5"), src, out, *args],
            at + ": the weights of the %d labelled rows are all 0" % VAL, "predict " + args[0] + " of zeros", 2)
    check(not os.path.exists(out), "predict " + args[0] + " of zeros writes no file")
# predict on a table that keeps its weight column but is not told so: the error names the column.
out = path("pred_unnamed_w.h5")
r = run([apps("predict"), path("cross_entropy.h5"), val_csv, out], 1)
check(r.returncode == 2 and not os.path.exists(out) and "its column 'w' (feature " in r.stderr and
      "is not one of the model's (a row weight column is not a feature: --weight-column w)" in r.stderr,
      "predict on a table with its weight column not named: exit 2, the column named, no file: " + r.stderr[-300:])
refused([train, *deck("diff", "mse", path("mse.csv"), "model=diffusion")],
        "weight_column: row and class weights train model mlp; model diffusion weighs every row alike",
        "a family that cannot weigh rows")
check.finish()
