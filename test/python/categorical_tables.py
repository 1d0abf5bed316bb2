#!/usr/bin/env python3
"""Categorical features end to end: a CSV written by pandas with a header, text columns (one with
missing cells), an integer-coded column declared by categorical_columns and a category that only the
test file holds. Checks, with build/apps/train, predict and convert:
- a depth-1 stump captures a category signal that no threshold on the categories' codes (ordinal
  coding) and no single category (one-hot) can: training AUC 1 where those reach at most 0.8;
- the model trained on 1 rank and on 2 ranks is the same file, byte for byte;
- apps/predict on the raw CSV (strings) gives what a walk of the model file's trees by the
  category names gives, the unseen category going right as the missing ones do;
- the model converted to LightGBM's text and to XGBoost's JSON, loaded by the real libraries,
  predicts the same margins on the category codes, missing and unseen categories included (within
  1e-9 for LightGBM, 1e-5 relative for XGBoost's float32 leaves);
- the test AUC is within 0.01 of LightGBM's with its own categorical support on the same file, the
  same trees, leaves and regularisation.

usage: categorical_tables.py BUILD_DIR MPIEXEC WORKDIR. Exits 77 (ctest: skipped; the reference
interpreter turns that into a failure when its venv exists) without pandas, lightgbm or xgboost."""
import json
import os
import shutil
import sys

from tool_run import import_or_skip, run_ok

lgb, np, pd, xgb = import_or_skip("lightgbm", "numpy", "pandas", "xgboost")

build, mpiexec, work = sys.argv[1], sys.argv[2], sys.argv[3]
tool = {name: os.path.join(build, "apps", name) for name in ("train", "predict", "convert")}
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
failures = []


def run(*args):
    return run_ok(*args, stderr_too=True)


def train(name, lines, ranks=1):
    model = os.path.join(work, name + ".json")
    deck = os.path.join(work, name + ".in")
    with open(deck, "w") as f:
        f.write("\n".join(["model gbdt", "seed 3", "log_every 100", "data_format csv", "text_header true",
                           "label_column target", f"output {model}"] + lines) + "\n")
    run(mpiexec, "-np", ranks, "--oversubscribe", "--bind-to", "none", tool["train"], deck)
    return model


def auc(y, s):
    """Rank AUC with ties averaged."""
    order = np.argsort(s, kind="mergesort")
    ranks = np.empty(len(s))
    sorted_s = s[order]
    i = 0
    while i < len(s):
        j = i
        while j + 1 < len(s) and sorted_s[j + 1] == sorted_s[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2 + 1
        i = j + 1
    pos = y == 1
    n1, n0 = pos.sum(), (~pos).sum()
    return (ranks[pos].sum() - n1 * (n1 + 1) / 2) / (n1 * n0)


def check(what, ok, detail):
    print(f"{'ok  ' if ok else 'FAIL'} {what}: {detail}")
    if not ok:
        failures.append(what)


rng = np.random.default_rng(7)
cities = [f"city_{c}" for c in "abcdefghijklmnop"]  # 16 categories
city_effect = dict(zip(cities, np.where(np.arange(16) % 2 == 0, 1.5, -1.5)))  # alternating: no threshold order
colors = ["red", "green", "blue", "amber", "violet"]
color_effect = dict(zip(colors, [0.6, -0.4, 0.0, 0.3, -0.5]))


def table(n, unseen=False):
    city = rng.choice(cities, n).astype(object)
    if unseen:
        city[rng.random(n) < 0.05] = "city_unseen"
    color = rng.choice(colors, n).astype(object)
    color[rng.random(n) < 0.1] = None  # pandas writes an empty field
    code = rng.integers(0, 8, n)  # integer-coded categories (categorical_columns)
    x1 = rng.normal(size=n)
    x2 = np.where(rng.random(n) < 0.1, np.nan, rng.normal(size=n))
    score = (np.array([city_effect.get(c, 0.0) for c in city]) + np.array([color_effect.get(c, 0.0) if c else 0.0
                                                                            for c in color])
             + np.where(code % 3 == 1, 0.8, -0.4) + 0.7 * x1 + 0.3 * np.nan_to_num(x2))
    target = (rng.random(n) < 1 / (1 + np.exp(-score))).astype(int)
    return pd.DataFrame({"city": city, "x1": x1, "color": color, "code": code, "x2": x2, "target": target})


train_csv, test_csv, stump_csv = (os.path.join(work, n) for n in ("train.csv", "test.csv", "stump.csv"))
table(4000).to_csv(train_csv, index=False)
test_df = table(1500, unseen=True)
test_df.to_csv(test_csv, index=False)

# 1. A depth-1 stump on the alternating city signal alone.
n = 3000
city = rng.choice(cities, n)
pd.DataFrame({"city": city, "target": [int(city_effect[c] > 0) for c in city]}).to_csv(stump_csv, index=False)
stump = train("stump", [f"data_file {stump_csv}", "objective binary", "num_trees 1", "max_depth 1", "eta 1"])
pred = os.path.join(work, "stump.pred")
run(mpiexec, "-np", 1, tool["predict"], stump, stump_csv, pred, "--header", "--label-column", "target")
ys = pd.read_csv(stump_csv)["target"].to_numpy()
s = np.loadtxt(pred)
ordinal = np.array([cities.index(c) for c in city])  # codes in the categories' sorted order
best_threshold = max(auc(ys, (ordinal <= t).astype(float)) for t in range(16))
best_onehot = max(auc(ys, (ordinal == t).astype(float)) for t in range(16))
check("stump captures the partition", auc(ys, s) > 0.999 and max(best_threshold, best_onehot) < 0.8,
      f"AUC {auc(ys, s):.4f}; a threshold on ordinal codes at best {best_threshold:.4f}, one category vs "
      f"the rest at best {best_onehot:.4f}")

# 2. The same model on 1 and 2 ranks.
keys = [f"data_file {train_csv}", "objective binary", "num_trees 60", "eta 0.1", "growth leafwise", "max_leaves 15",
        "max_depth 0", "min_data_in_leaf 20", "lambda_l2 1", "categorical_columns code", "min_data_per_group 20"]
m1 = train("ranks1", keys, 1)
m2 = train("ranks2", keys, 2)
same = open(m1, "rb").read() == open(m2, "rb").read()
check("1 rank == 2 ranks", same, "model files identical" if same else "model files differ")
model = json.load(open(m1))
cats = model["categories"]
names = model["feature_names"]
check("model names and categories", names == ["city", "x1", "color", "code", "x2"] and cats[1] is None and
      sorted(cats[0]) == cities and sorted(cats[2]) == sorted(colors) and sorted(cats[3], key=int) ==
      [str(i) for i in range(8)], f"feature_names {names}, categories of {[len(c or []) for c in cats]}")

# 3. predict on the raw CSV against a walk of the model file by category names.
pred = os.path.join(work, "test.pred")
out = run(mpiexec, "-np", 1, tool["predict"], m1, test_csv, pred, "--header", "--label-column", "target",
          "--margin")
ours = np.loadtxt(pred)


def codes(df):
    """The feature matrix with categorical columns as the model's codes (NaN: missing or unseen)."""
    x = np.full((len(df), len(names)), np.nan)
    for f, col in enumerate(names):
        v = df[col]
        if cats[f] is None:
            x[:, f] = v.to_numpy(dtype=float)
        else:
            index = {c: i for i, c in enumerate(cats[f])}
            x[:, f] = [index.get(str(c), np.nan) if not pd.isna(c) else np.nan for c in v]
    return x


def walk(x):
    m = np.full(len(x), model["base_margin"][0])
    for t in model["trees"]:
        tc = t.get("categories")
        for r in range(len(x)):
            i = 0
            while t["left"][i] >= 0:
                v = x[r, t["feature"][i]]
                if tc and tc[i]:
                    left = not np.isnan(v) and int(v) in tc[i]
                else:
                    left = t["default_left"][i] == 1 if np.isnan(v) else np.float32(v) <= np.float32(t["threshold"][i])
                i = t["left"][i] if left else t["right"][i]
            m[r] += t["value"][i]
    return m


xt = codes(test_df)
walked = walk(xt)
check("predict == model walk", np.max(np.abs(walked - ours)) < 1e-9,
      f"max |difference| {np.max(np.abs(walked - ours)):.3g} over {len(ours)} rows "
      f"({int((test_df['city'] == 'city_unseen').sum())} with an unseen city)")

# 4. The converted models in the real libraries.
lgb_path, xgb_path = m1 + ".lgb.txt", m1 + ".xgb.json"
run(tool["convert"], "--to", "lightgbm", m1, lgb_path)
bl = lgb.Booster(model_file=lgb_path)
d_lgb = np.max(np.abs(bl.predict(xt, raw_score=True) - ours))
check("LightGBM loads the export", d_lgb < 1e-9, f"max |margin difference| {d_lgb:.3g}")
run(tool["convert"], "--to", "xgboost", m1, xgb_path)
bx = xgb.Booster(model_file=xgb_path)
xgb_cats = sum(len(t["categories_nodes"]) for t in json.load(open(xgb_path))["learner"]["gradient_booster"]["model"]["trees"])
xt_new = xt.copy()  # the unseen city as a code past the model's categories, not as missing
xt_new[(test_df["city"] == "city_unseen").to_numpy(), 0] = len(cats[0])
types = ["c" if c else "q" for c in cats]
d_xgb = max(np.max(np.abs(bx.predict(xgb.DMatrix(x, missing=np.nan, feature_names=names, feature_types=types,
                                                 enable_categorical=True), output_margin=True) - ours) /
                   np.maximum(1, np.abs(ours))) for x in (xt, xt_new))
check("XGBoost loads the export", d_xgb < 1e-5 and xgb_cats > 0,
      f"max relative |margin difference| {d_xgb:.3g}, {xgb_cats} categorical splits (xgboost {xgb.__version__})")

# 5. Test AUC against LightGBM's own categorical support, same file and hyper-parameters.
train_df = pd.read_csv(train_csv)
cat_cols = ["city", "color", "code"]
for df in (train_df, test_df):
    for c in cat_cols:
        df[c] = pd.Categorical(df[c].astype("string"), categories=sorted(train_df[c].dropna().astype(str).unique()))
params = {"objective": "binary", "learning_rate": 0.1, "num_leaves": 15, "min_data_in_leaf": 20, "lambda_l2": 1.0,
          "min_data_per_group": 20, "max_bin": 255, "num_threads": 1, "verbose": -1, "seed": 3}
feats = names
ref = lgb.train(params, lgb.Dataset(train_df[feats], train_df["target"], categorical_feature=cat_cols), 60)
y_test = test_df["target"].to_numpy()
a_ref, a_ours = auc(y_test, ref.predict(test_df[feats])), auc(y_test, ours)
check("test AUC vs LightGBM", a_ours >= a_ref - 0.01, f"ours {a_ours:.4f}, LightGBM {a_ref:.4f} (tolerance 0.01)")

if failures:
    raise SystemExit("FAILED: " + ", ".join(failures))
print("categorical tables: all checks passed")
