#!/usr/bin/env python3
"""Text class labels for `model gbdt` (docs/tables.md, Note [text labels] in src/gbdt/categories.cpp),
on CSV tables written by pandas: a label column of class names whose class the features decide.
Checks, with build/apps/train and predict:
- multiclass without num_class learns the classes (held-out accuracy from predict's OUTPUT.h5, far
  above the majority class), the model file and OUTPUT.h5's `classes` list them most frequent first,
  and predict's metric is training's on the same test file;
- apps/convert: XGBoost's model keeps the names (attribute `classes`), and XGBoost and LightGBM
  give predict's probabilities;
- the same labels integer-coded in that order train the same trees, byte for byte (binary too: the
  rarer class is the positive one);
- 1 rank and 2 ranks (whose blocks meet the classes in opposite orders) write the same model file;
- refusals name file, line and column (or the deck's line and key) and write nothing: a text label
  with objective regression, num_class below the class count, binary with more than two classes,
  a validation_file / test_file / predict row with a class the training file lacks.
usage: gbdt_text_labels.py BUILD_DIR MPIEXEC SCRATCH_DIR"""
import json
import os
import sys

import h5py
import lightgbm as lgb
import numpy as np
import pandas as pd
import xgboost as xgb
from tool_run import Checks, tool_script

apps, scratch, run = tool_script(sys.argv)
train, predict, convert = apps("train"), apps("predict"), apps("convert")
check = Checks()


# Four cover types with uneven counts, decided by elevation and slope with noise, and by the soil
# (a text feature) for two of them. Rows [0, 700) meet the classes in one order, [700, 1400) in the
# reverse one, so the two ranks' blocks first see them differently.
covers = ["spruce", "lodgepole pine", "aspen", "cottonwood, willow"]  # the last holds the delimiter


def table(n, seed, reverse=False):
    r = np.random.default_rng(seed)
    elevation = r.uniform(0, 1, n)
    slope = r.uniform(0, 1, n)
    soil = r.choice(["loam", "clay", "sand"], size=n)
    noisy = elevation + 0.05 * r.normal(size=n)
    cover = np.where(noisy > 0.55, covers[0], np.where(noisy > 0.25, covers[1],
                                                       np.where(soil == "clay", covers[2], covers[3])))
    cover = np.where((noisy > 0.55) & (slope > 0.8), covers[2], cover)
    df = pd.DataFrame({"elevation": elevation.round(4), "cover": cover, "soil": soil, "slope": slope.round(4)})
    return df.iloc[::-1].reset_index(drop=True) if reverse else df


data = pd.concat([table(700, 1), table(700, 2, reverse=True)], ignore_index=True)
train_csv, test_csv = os.path.join(scratch, "train.csv"), os.path.join(scratch, "test.csv")
data.to_csv(train_csv, index=False)
test = table(400, 3)
test.to_csv(test_csv, index=False)
# The coder's order: most frequent first, ties by bytes.
counts = data["cover"].value_counts()
order = sorted(counts.index, key=lambda c: (-counts[c], c.encode()))


def deck(name, *lines):
    """The deck file: the base keys, each of `lines` replacing the base line of its key."""
    keys = {l.split()[0]: l for l in ["model gbdt", "objective multiclass", f"data_file {train_csv}",
                                      f"test_file {test_csv}", "text_header true", "label_column cover",
                                      "num_trees 12", "max_depth 4", "log_every 100",
                                      f"output {scratch}/{name}.json"]}
    keys.update({l.split()[0]: l for l in lines})
    path = os.path.join(scratch, name + ".in")
    with open(path, "w") as f:
        f.write("\n".join(keys.values()) + "\n")
    return path


def model(name):
    with open(os.path.join(scratch, name + ".json")) as f:
        return f.read()


# 1. Multiclass from class names: learns, names the classes, predict scores by them.
r = run([train, deck("text")])
log = r.stdout + r.stderr
check(r.returncode == 0, "multiclass trains on a text label: " + r.stderr[-400:])
m = json.loads(model("text"))
check(m["classes"] == order and m["num_class"] == 4, "model classes most frequent first: %s" % m.get("classes"))
out = os.path.join(scratch, "pred.h5")
scored = run([predict, os.path.join(scratch, "text.json"), test_csv, out, "--header", "--label-column", "cover"])
check(scored.returncode == 0, "predict a text-labelled test file: " + scored.stderr[-300:])
with h5py.File(out, "r") as h:
    prob = h["probabilities"][...]
    classes = json.loads(h.attrs["classes"])
check(classes == order and prob.shape == (400, 4), "predict's OUTPUT.h5 names the classes: %s" % classes)
acc = float(np.mean(np.array(classes)[prob.argmax(axis=1)] == test["cover"].to_numpy()))
majority = float(test["cover"].value_counts().max() / len(test))
check(acc > 0.9 and acc > majority + 0.3, "held-out accuracy %.3f (majority class %.3f)" % (acc, majority))
r = run([predict, os.path.join(scratch, "text.json"), test_csv, out + ".2.h5", "--header", "--label-column",
         "cover"], 2)
check(r.returncode == 0, "predict on 2 ranks: " + r.stderr[-300:])
no_label = os.path.join(scratch, "test_nolabel.csv")
test.drop(columns=["cover"]).to_csv(no_label, index=False)
r = run([predict, os.path.join(scratch, "text.json"), no_label, out + ".nolabel.h5", "--header", "--no-label"])
check(r.returncode == 0, "predict --no-label: " + r.stderr[-300:])
if os.path.exists(out + ".2.h5") and os.path.exists(out + ".nolabel.h5"):
    with h5py.File(out + ".2.h5", "r") as h2, h5py.File(out + ".nolabel.h5", "r") as h3:
        check(np.array_equal(h2["probabilities"][...], prob) and np.array_equal(h3["probabilities"][...], prob)
              and json.loads(h3.attrs["classes"]) == order, "2 ranks and a file without labels: the same output")
trained = [l for l in log.splitlines() if "trees in" in l]
said = [l for l in (scored.stdout + scored.stderr).splitlines() if "mlogloss" in l]
loss = trained[0].split("test-mlogloss")[1].split()[0] if trained else "?"
check(said and loss in said[0], "predict's mlogloss is training's test-mlogloss %s: %s" % (loss, said))

# The exports: XGBoost keeps the names as the attribute `classes`, LightGBM has no place for them;
# both give predict's probabilities, class k in column k.
xgb_file, lgb_file = os.path.join(scratch, "text.xgb.json"), os.path.join(scratch, "text.lgb.txt")
r1 = run([convert, "--to", "xgboost", os.path.join(scratch, "text.json"), xgb_file])
r2 = run([convert, "--to", "lightgbm", os.path.join(scratch, "text.json"), lgb_file])
check(r1.returncode == 0 and r2.returncode == 0, "convert a text-labelled model: " + r1.stderr[-200:] + r2.stderr[-200:])
if r1.returncode == 0 and r2.returncode == 0:
    x = test[m["feature_names"]].copy()
    for f, names in zip(m["feature_names"], m["categories"]):
        if names is not None:
            x[f] = x[f].map({n: i for i, n in enumerate(names)}).astype(float)
    x = x.to_numpy(dtype=float)
    kinds = ["c" if names is not None else "float" for names in m["categories"]]
    bst = xgb.Booster(model_file=xgb_file)
    p_xgb = bst.predict(xgb.DMatrix(x, feature_names=m["feature_names"], feature_types=kinds, enable_categorical=True))
    p_lgb = lgb.Booster(model_file=lgb_file).predict(x)
    check(json.loads(bst.attr("classes")) == order, "XGBoost's attribute classes: %s" % bst.attr("classes"))
    check(np.abs(p_xgb - prob).max() < 1e-6 and np.abs(p_lgb - prob).max() < 1e-6,
          "XGBoost and LightGBM give predict's probabilities: %.2g, %.2g" % (np.abs(p_xgb - prob).max(),
                                                                           np.abs(p_lgb - prob).max()))

# 2. The same labels as integers in the coder's order: the same trees.
code = {c: i for i, c in enumerate(order)}
ints_csv, ints_test = os.path.join(scratch, "train_int.csv"), os.path.join(scratch, "test_int.csv")
data.assign(cover=data["cover"].map(code)).to_csv(ints_csv, index=False)
test.assign(cover=test["cover"].map(code)).to_csv(ints_test, index=False)
r = run([train, deck("ints", f"data_file {ints_csv}", f"test_file {ints_test}")])
check(r.returncode == 0, "integer-coded labels train: " + r.stderr[-300:])
a, b = json.loads(model("text")), json.loads(model("ints"))
check("classes" not in b and {k: v for k, v in a.items() if k != "classes"} == b,
      "text labels and their integer codes: the same model")
check(model("text").replace('  "classes": %s,\n' % json.dumps(order, separators=(",", ":")), "") == model("ints"),
      "the same model file but for the classes line")

# Binary: the rarer class is 1 (spruce, the most frequent cover, is rarer than all the others).
two = data.assign(cover=np.where(data["cover"] == order[0], "spruce", "other"))
two_test = test.assign(cover=np.where(test["cover"] == order[0], "spruce", "other"))
two_csv, two_test_csv = os.path.join(scratch, "two.csv"), os.path.join(scratch, "two_test.csv")
two.to_csv(two_csv, index=False)
two_test.to_csv(two_test_csv, index=False)
two_int, two_test_int = os.path.join(scratch, "two_int.csv"), os.path.join(scratch, "two_test_int.csv")
two.assign(cover=(two["cover"] == "spruce").astype(int)).to_csv(two_int, index=False)
two_test.assign(cover=(two_test["cover"] == "spruce").astype(int)).to_csv(two_test_int, index=False)
r1 = run([train, deck("bin_text", "objective binary", f"data_file {two_csv}", f"test_file {two_test_csv}")])
r2 = run([train, deck("bin_int", "objective binary", f"data_file {two_int}", f"test_file {two_test_int}")])
check(r1.returncode == 0 and r2.returncode == 0, "binary from text and from 0/1: " + r1.stderr[-300:] + r2.stderr[-300:])
mt, mi = json.loads(model("bin_text")), json.loads(model("bin_int"))
rarer = (two["cover"] == "spruce").sum() < len(two) / 2
check(rarer and mt["classes"] == ["other", "spruce"], "binary classes: %s" % mt.get("classes"))
check({k: v for k, v in mt.items() if k != "classes"} == mi, "binary: the rare class is 1, the same model as 0/1")
out2 = os.path.join(scratch, "bin.h5")
r = run([predict, os.path.join(scratch, "bin_text.json"), two_test_csv, out2, "--header", "--label-column", "cover"])
check(r.returncode == 0, "predict binary: " + r.stderr[-300:])
if r.returncode == 0:
    with h5py.File(out2, "r") as h:
        p2, c2 = h["probabilities"][...], json.loads(h.attrs["classes"])
    acc2 = float(np.mean(np.array(c2)[p2.argmax(axis=1)] == two_test["cover"].to_numpy()))
    check(c2 == ["other", "spruce"] and p2.shape == (400, 2) and np.allclose(p2.sum(axis=1), 1, atol=1e-6)
          and acc2 > 0.9, "binary OUTPUT.h5: P(other), P(spruce); accuracy %.3f" % acc2)

# 3. 1 rank and 2 ranks: the same model file.
r = run([train, deck("ranks2")], 2)
check(r.returncode == 0 and model("ranks2").replace("ranks2", "text") == model("text"),
      "1 rank == 2 ranks, byte for byte: " + r.stderr[-300:])


# 4. Refusals: the message, and no output.
def refused(args, expect, what, output, ranks=1):
    r = run(args, ranks)
    msg = r.stdout + r.stderr
    said = [l for l in msg.splitlines() if "error" in l] or msg.strip().splitlines() or [""]
    check(r.returncode != 0 and expect in msg and not os.path.exists(output), what + ": " + said[0])


def lineno(path, key):
    with open(path) as f:
        return next(i + 1 for i, l in enumerate(f) if l.startswith(key + " "))


d = deck("reg", "objective regression")
refused([train, d], train_csv + ":2: field 2 (column 'cover') '%s' is not a number" % data["cover"][0],
        "a text label with objective regression", os.path.join(scratch, "reg.json"), 2)
d = deck("few", "num_class 3")
refused([train, d], "%s:%d: num_class: column 'cover' of %s holds 4 classes, more than num_class 3" % (
    d, lineno(d, "num_class"), train_csv), "num_class below the class count", os.path.join(scratch, "few.json"), 2)
d = deck("bin4", "objective binary")
refused([train, d], "%s:%d: objective: binary: column 'cover' of %s holds 4 classes" % (
    d, lineno(d, "objective"), train_csv), "binary with 4 classes", os.path.join(scratch, "bin4.json"))
bad = test.copy()
bad.loc[9, "cover"] = "birch"
bad_csv = os.path.join(scratch, "bad.csv")
bad.to_csv(bad_csv, index=False)
expect = bad_csv + ":11: column 'cover' holds 'birch', not a class of "
refused([train, deck("val", f"validation_file {bad_csv}")], expect + "data_file (4 classes)",
        "a validation_file class the training file lacks", os.path.join(scratch, "val.json"), 2)
refused([train, deck("tst", f"test_file {bad_csv}")], expect + "data_file (4 classes)",
        "a test_file class the training file lacks", os.path.join(scratch, "tst.json"))
refused([predict, os.path.join(scratch, "text.json"), bad_csv, os.path.join(scratch, "bad.h5"), "--header",
         "--label-column", "cover"], expect + "the model (4 classes)", "predict: a class the model lacks",
        os.path.join(scratch, "bad.h5"), 2)

check.finish()
