#!/usr/bin/env python3
"""The mlp standardises a table's numbers and its regression label (Note [mlp standardisation] in
src/models/mlp/mlp_scaling.cpp) on a pandas-written CSV whose columns differ in scale by 1e6, with
a text column, a constant column and missing numbers: the stored statistics are numpy's nanmean /
nanstd of the training columns (one-hot entries 0 / 1, the constant column std 1); PyTorch, given
the weights file, computes predict's outputs from the raw CSV (a missing number read as its
column's mean); the model learns; 1 rank == 2 ranks bit for bit with rank_invariant; with
missing_numbers error (or standardisation off) a missing number is refused naming file, line and
column, as a missing label is; standardize off stores no statistics and PyTorch on the raw numbers
reproduces predict.
usage: mlp_standardize.py BUILD_DIR MPIEXEC SCRATCH_DIR"""
import os
import re
import sys

import h5py
import numpy as np
import pandas as pd
from tool_run import Checks, check_table_rank_invariance, deck_args, import_or_skip, table_and_config, tool_script

[torch] = import_or_skip("torch")

apps, scratch, run = tool_script(sys.argv)
train, predict = apps("train"), apps("predict")
check = Checks()
NUMBERS = ["price", "ratio", "count", "const"]


def frame(n, seed):
    """A price near 5e4, a ratio near 0.005, a count near 100, a constant, a colour; y near 1000."""
    r = np.random.default_rng(seed)
    d = pd.DataFrame({"price": r.normal(5e4, 1e4, n).round(1), "ratio": r.uniform(0, 0.01, n).round(6),
                      "count": r.poisson(100, n).astype(float), "const": np.full(n, 7.5),
                      "colour": r.choice(["red", "green", "blue"], n)})
    d["y"] = (1000 + 300 * (d["price"] - 5e4) / 1e4 + 200 * np.sin(d["ratio"] * 600) + 80 * (d["colour"] == "red")
              + r.normal(0, 5, n)).round(3)
    return d


train_df, test = frame(2000, 1), frame(300, 2)
for df, seed in ((train_df, 3), (test, 4)):  # missing numbers in two columns (3%)
    r = np.random.default_rng(seed)
    for col in ("price", "ratio"):
        df.loc[r.random(len(df)) < 0.03, col] = np.nan
test.loc[0, ["price", "ratio"]] = [np.nan, np.nan]
train_csv, test_csv = os.path.join(scratch, "train.csv"), os.path.join(scratch, "test.csv")
train_df.to_csv(train_csv, index=False)
test.to_csv(test_csv, index=False)
clean_csv = os.path.join(scratch, "clean.csv")
train_df.dropna().to_csv(clean_csv, index=False)


def deck(name, *settings):
    """The deck file's path, then `--set key=value` for each of `settings`."""
    return deck_args(os.path.join(scratch, name + ".in"), f"""model mlp
data_file {train_csv}
text_header true
label_column y
loss mse
validation_fraction 0.1
hidden_sizes 32
batch_size 64
epochs 10
lr 1e-2
log_every 1000
output {scratch}/{name}.h5
""", settings)


def path_of(name):
    return os.path.join(scratch, name + ".h5")


def forward(weights, x):
    """PyTorch: Linear -> ReLU -> Linear with the file's parameters, on float32 inputs x."""
    with h5py.File(weights, "r") as h:
        fc = [(np.array(h[k]["weight"]), np.array(h[k]["bias"])) for k in ("fc0", "fc1")]
    layers = [torch.nn.Linear(w.shape[1], w.shape[0]) for w, _ in fc]
    with torch.no_grad():
        for lin, (w, b) in zip(layers, fc):
            lin.weight.copy_(torch.tensor(w))
            lin.bias.copy_(torch.tensor(b))
        return layers[1](torch.relu(layers[0](torch.tensor(x)))).numpy().astype(np.float64)


def raw_inputs(df, colours):
    """The table's inputs as the encoding orders them: the numbers, then the colour's one-hot block."""
    onehot = np.stack([(df["colour"] == c).to_numpy(np.float64) for c in colours], axis=1)
    return np.concatenate([df[NUMBERS].to_numpy(np.float64), onehot], axis=1)


def predicted(weights, csv, name):
    out = os.path.join(scratch, name)
    r = run([predict, weights, csv, out])
    check(r.returncode == 0, "predict reads a CSV with missing numbers: " + r.stderr[-300:])
    with h5py.File(out, "r") as h:
        return h["outputs"][...].astype(np.float64)[:, 0]


# 1. Default: inputs and label standardised, missing numbers read as the column mean.
r = run([train, *deck("std")])
print(r.stdout[-1200:], r.stderr[-1200:])
check(r.returncode == 0, "the mlp trains on a CSV with missing numbers")
weights = path_of("std")
enc, cfg = table_and_config(weights)
check("standardize_inputs=true standardize_targets=true missing_numbers=mean" in cfg, "config: " + cfg)
colours = enc["categories"][4]
with h5py.File(weights, "r") as h:
    mean, std = h["standardisation/inputs_mean"][...], h["standardisation/inputs_std"][...]
    y_mean, y_std = float(h["standardisation/targets_mean"][0]), float(h["standardisation/targets_std"][0])
part = train_df.iloc[:1800]  # validation_fraction 0.1: the tail is held out
x32 = part[NUMBERS].to_numpy(np.float32).astype(np.float64)  # the values as the file's floats
want_mean, want_std = np.nanmean(x32, axis=0), np.nanstd(x32, axis=0)
want_std[NUMBERS.index("const")] = 1.0  # a constant column: std 1 (StandardScaler)
yy = part["y"].to_numpy(np.float32).astype(np.float64)
stat_err = max(np.abs(mean[:4] - want_mean).max() / np.abs(want_mean).max(), np.abs(std[:4] - want_std).max()
               / want_std.max(), abs(y_mean - yy.mean()) / abs(yy.mean()), abs(y_std - yy.std()) / yy.std())
check(stat_err < 1e-12, "the statistics are numpy's nanmean / nanstd of the training part: %.1e" % stat_err)
check(np.all(mean[4:] == 0) and np.all(std[4:] == 1) and len(mean) == 7, "one-hot entries keep mean 0, std 1")

pred = predicted(weights, test_csv, "pred.h5")
x = (raw_inputs(test, colours) - mean) / std
x[np.isnan(x)] = 0.0  # a missing number: the column's mean
ref = forward(weights, x.astype(np.float32))[:, 0] * y_std + y_mean
err = float(np.abs(ref - pred).max() / y_std)
check(err < 1e-6, "PyTorch's outputs from the raw CSV and the stored statistics: max difference %.1e (label std)"
      % err)
ok = ~test[["price", "ratio"]].isna().any(axis=1).to_numpy()
rmse = float(np.sqrt(np.mean((pred[ok] - test["y"].to_numpy()[ok]) ** 2)))
check(rmse < 0.35 * test["y"].std(), "the model learns: held-out RMSE %.1f, label std %.1f" % (rmse, test["y"].std()))

# 2. rank_invariant: 1 rank and 2 ranks, the statistics and weights bit for bit.
check_table_rank_invariance(check, run, lambda *a: [train, *deck(*a)], 64, path_of)

# 3. Refusals: a missing number with missing_numbers error or without standardisation, a missing label.
for name, settings in (("err", ["missing_numbers=error"]), ("raw", ["standardize_inputs=false"])):
    r = run([train, *deck(name, *settings)])
    said = re.search(re.escape(train_csv) + r":(\d+): column '(\w+)' holds a NaN or Inf", r.stdout + r.stderr)
    # The line is the first bad row the run meets (the validation rows are checked first).
    check(r.returncode == 2 and said is not None and np.isnan(train_df[said[2]][int(said[1]) - 2]),
          "a missing number refused naming file, line and column with " + settings[0] + ": "
          + (said[0] if said else r.stderr[-300:]))
nolabel = train_df.copy()
nolabel.loc[5, "y"] = np.nan
nolabel_csv = os.path.join(scratch, "nolabel.csv")
nolabel.to_csv(nolabel_csv, index=False)
check.refused(run([train, *deck("nolabel", "data_file=" + nolabel_csv)]),
              f"{nolabel_csv}:7: missing label in field 6 (column 'y')", "a missing label refused naming its column")

# 4. Standardisation off: no statistics stored; PyTorch on the raw numbers reproduces predict.
r = run([train, *deck("off", "data_file=" + clean_csv, "standardize_inputs=false", "standardize_targets=false")])
check(r.returncode == 0, "trains with standardisation off: " + r.stderr[-300:])
with h5py.File(path_of("off"), "r") as h:
    check("standardisation" not in h, "standardisation off stores no statistics")
clean = pd.read_csv(clean_csv)
pred = predicted(path_of("off"), clean_csv, "pred_off.h5")
ref = forward(path_of("off"), raw_inputs(clean, table_and_config(path_of("off"))[0]["categories"][4])
              .astype(np.float32))[:, 0]
err = float(np.abs(ref - pred).max() / max(1.0, np.abs(ref).max()))
check(err < 1e-5, "standardisation off: PyTorch on the raw numbers, max relative difference %.1e" % err)

# 5. init_weights: fine-tuning on another file keeps the statistics the weights were trained with.
r = run([train, *deck("tuned", "data_file=" + clean_csv, "init_weights=" + weights, "epochs=1")])
check(r.returncode == 0, "fine-tunes from the weights: " + r.stderr[-300:])
if r.returncode == 0:
    with h5py.File(weights, "r") as a, h5py.File(path_of("tuned"), "r") as b:
        same = all(np.array_equal(a["standardisation"][k][...], b["standardisation"][k][...]) for k in a["standardisation"])
    check(same, "init_weights keeps the file's statistics, not the new file's")

# 6. An ensemble's mlp deck member standardises its rows too and takes their missing numbers.
deck_args(os.path.join(scratch, "member.in"), f"""model mlp
data_file {train_csv}
text_header true
label_column y
loss mse
hidden_sizes 32
batch_size 64
epochs 10
lr 1e-2
log_every 100000
""", [])
ens = os.path.join(scratch, "ens")
r = run([train, *deck_args(ens + ".in", f"""model ensemble
objective regression
data_file {train_csv}
text_header true
label_column y
validation_fraction 0.2
members {os.path.join(scratch, "member.in")}
folds 2
seed 3
output {ens}.json
""", [])])
check(r.returncode == 0, "an ensemble with an mlp deck member on missing numbers: " + (r.stdout + r.stderr)[-300:])
if r.returncode == 0:
    with h5py.File(ens + ".member.h5", "r") as h:
        check("standardisation/inputs_mean" in h and "standardisation/targets_std" in h,
              "the member's weights keep its statistics")
    r = run([predict, ens + ".json", test_csv, os.path.join(scratch, "ens_pred.h5"), "--header", "--label-column", "y"])
    check(r.returncode == 0, "predict the ensemble on a CSV with missing numbers: " + r.stderr[-300:])
    if r.returncode == 0:
        with h5py.File(os.path.join(scratch, "ens_pred.h5"), "r") as h:
            e = h["outputs"][...].ravel() - test["y"].to_numpy()
        check(np.all(np.isfinite(e)) and np.sqrt(np.mean(e ** 2)) < 0.35 * test["y"].std(),
              "the ensemble's held-out RMSE %.1f (label std %.1f)" % (np.sqrt(np.mean(e ** 2)), test["y"].std()))

check.finish()
