#!/usr/bin/env python3
"""libsvm_absent (Note [absent LibSVM entries] in src/io/libsvm_line.cpp): absent LibSVM entries as 0,
LightGBM's reading, or missing, XGBoost's and the default. On synthetic lambdarank queries (integer
features 0..15, 40% zeros, written as LightGBM writes sparse rows: no zero entries, ids from 0, the
groups in LightGBM's <file>.query): with libsvm_absent zero our trees are those of the file with every
zero written out, LightGBM reading the file itself grows our first tree and, from our scores before
each, every later one; 2 ranks grow the 1-rank trees; the model file says "libsvm_absent": "zero" and
predict reads the file as training did (its ndcg@10 is train's, its scores the trees' on the
zero-filled rows; --libsvm-absent missing changes them); the LightGBM export scores LightGBM's own
reading of the file as predict does, the XGBoost export the zero-filled rows; an ensemble file and its
GBDT members keep the reading for predict too. By default the trees are those of a CSV whose absent
fields are empty (missing), and not LightGBM's. A bad value of the key, of --libsvm-absent or
--libsvm-base or in a model file is exit 2 naming it.

usage: gbdt_libsvm_absent.py BUILD_DIR MPIEXEC SCRATCH. Exits 77 (skipped) without lightgbm/xgboost."""
import json
import os
import re
import sys

from lightgbm_trees import same_trees, tree_values, trees_from_our_scores
from tool_run import Checks, import_or_skip, tool_script

lgb, np, xgb, sk_datasets = import_or_skip("lightgbm", "numpy", "xgboost", "sklearn.datasets")
load_svmlight_file = sk_datasets.load_svmlight_file
from rank_queries import deck_lines, final_metrics, queries

apps, scratch, run = tool_script(sys.argv)
checks = Checks()
path = lambda name: os.path.join(scratch, name)  # noqa: E731
TREES, LEAVES, ETA = 10, 15, 0.1


def check(cond, what, detail=""):
    if not cond and detail:
        print(detail)
    checks(cond, what)


def write_svm(name, x, y, sizes, zeros):
    """LibSVM with ids from 0 (LightGBM's numbering), zero entries written or left out; the groups in
    <file>.query, which LightGBM and train both find beside the file."""
    with open(path(name), "w") as f:
        for i in range(len(y)):
            f.write(f"{int(y[i])} " + " ".join(f"{j}:{int(v)}" for j, v in enumerate(x[i]) if zeros or v != 0) + "\n")
    np.savetxt(path(name) + ".query", sizes, fmt="%d")
    return path(name)


def write_csv(name, x, y, qid):
    """The rows as CSV (label, query id, features) with the zero fields empty: missing values."""
    with open(path(name), "w") as f:
        for i in range(len(y)):
            f.write(f"{int(y[i])},{qid[i]}," + ",".join("" if v == 0 else str(int(v)) for v in x[i]) + "\n")
    return path(name)


def train(name, data, key=None, ranks=1, extra=()):
    model = path(name + ".json")
    # min_data_in_leaf 1: LightGBM checks it against a row count estimated from the hessians (docs/ranking.md).
    lines = [l.replace("min_data_in_leaf 20", "min_data_in_leaf 1")
             for l in deck_lines(model, TREES, LEAVES, ETA, (10,))]
    lines += [f"data_file {data}", "libsvm_base 0", *extra]
    if key:
        lines.append(f"libsvm_absent {key}")
    with open(path(name + ".in"), "w") as f:
        f.write("\n".join(lines) + "\n")
    r = run([apps("train"), path(name + ".in")], ranks)
    check(r.returncode == 0, f"train {name} on {ranks} rank(s)", r.stdout[-3000:] + r.stderr[-3000:])
    return (json.load(open(model)) if r.returncode == 0 else None), r.stdout + r.stderr


def main():
    x, y, qid, sizes = queries(11, 120, 20, (3,))
    x[np.random.default_rng(5).random(x.shape) < 0.4] = 0  # sparse rows: 40% of the entries absent
    sparse = write_svm("sparse.svm", x, y, sizes, zeros=False)
    dense = write_svm("dense.svm", x, y, sizes, zeros=True)

    zero, log0 = train("zero", sparse, "zero", extra=[f"test_file {sparse}"])  # the test file read alike
    zero2, _ = train("zero_np2", sparse, "zero", ranks=2)
    written, _ = train("written", dense)
    missing, _ = train("missing", sparse)
    csv, _ = train("csv", write_csv("empty.csv", x, y, qid), extra=["group_column 1"])
    if not (zero and zero2 and written and missing and csv):
        return
    check(zero["trees"] == written["trees"], "libsvm_absent zero: the trees of the file with its zeros written")
    check(zero2["trees"] == zero["trees"], "libsvm_absent zero: 2 ranks grow the 1-rank trees")
    check(missing["trees"] == csv["trees"], "default: the trees of a CSV whose absent fields are empty (missing)")
    check(missing["trees"] != zero["trees"], "the two readings grow different trees on this file")
    m0 = final_metrics(log0)
    check(m0["test-ndcg@10"] == m0["train-ndcg@10"], f"the test file (the same file) is read alike: {m0}")
    check(zero.get("libsvm_absent") == "zero" and "libsvm_absent" not in missing,
          f"the model file keeps libsvm_absent zero, the default model has no such key ({zero.get('libsvm_absent')})")

    # LightGBM reading the same file itself (absent = 0, <file>.query): our first tree (all scores 0,
    # where its sigmoid table is exact), not the default reading's.
    params = {"objective": "lambdarank", "num_leaves": LEAVES, "learning_rate": ETA, "lambda_l2": 0.0,
              "min_sum_hessian_in_leaf": 1e-3, "min_data_in_leaf": 1, "min_data_in_bin": 1, "max_bin": 255,
              "deterministic": True, "num_threads": 1, "verbose": -1, "feature_pre_filter": False}
    booster = lgb.train(params, lgb.Dataset(sparse, params=params), TREES)
    check(booster.num_feature() == x.shape[1], f"LightGBM reads {booster.num_feature()} features from the file")
    same = same_trees(zero, booster, x)
    print(f"LightGBM reading the file grows the same first {same} of {TREES} trees")
    check(same >= 1, f"LightGBM reading the file grows our libsvm_absent zero first tree ({same} agree)")
    check(same_trees(missing, booster, x) == 0, "and not the default (missing) reading's")
    # Every later tree from our scores before it (LightGBM's init_score on its reading of the file): the
    # same leaves and values (within 1e-4: its sigmoid table); rows of equal-label queries left out.
    ends = np.cumsum(sizes)
    varied = np.repeat([y[e - n:e].min() < y[e - n:e].max() for n, e in zip(sizes, ends)], sizes)
    grow = lambda s: lgb.train(params, lgb.Dataset(sparse, params=params, init_score=s), 1)  # noqa: E731
    agree = trees_from_our_scores(zero, grow, x, varied)
    check(len(agree) == TREES, f"from our scores before it, LightGBM reading the file grows each of our {TREES} "
          f"trees ({len(agree)} agree)")

    # predict reads the file as the model was trained.
    pred = path("zero.pred")
    r = run([apps("predict"), path("zero.json"), sparse, pred, "--libsvm-base", "0"])
    said = re.search(r"ndcg@10 (-?[0-9.]+)", r.stdout + r.stderr)
    check(r.returncode == 0 and said is not None, "predict scores the file with the zero model", r.stdout + r.stderr)
    if not said:
        return
    ours = m0["train-ndcg@10"]
    check(abs(float(said.group(1)) - ours) < 2e-6, f"predict's ndcg@10 {said.group(1)} is train's {ours:.6f}")
    s = np.loadtxt(pred)
    xf = x.astype(np.float32)
    trees = zero["base_margin"][0] + sum(tree_values(t, xf) for t in zero["trees"])
    check(np.allclose(s, trees, rtol=1e-12, atol=1e-12), "predict's scores are the trees' on the zero-filled rows")
    r = run([apps("predict"), path("zero.json"), sparse, path("as_missing.pred"), "--libsvm-base", "0",
             "--libsvm-absent", "missing"])
    check(r.returncode == 0 and not np.allclose(np.loadtxt(path("as_missing.pred")), s),
          "predict --libsvm-absent missing reads the absent entries as missing (other scores)", r.stdout + r.stderr)

    # The exports: LightGBM scores its own reading of the file (absent = 0) as predict does; XGBoost's
    # reading of a LibSVM file takes them as missing, so it scores the zero-filled rows as predict does.
    lgb_model, xgb_model = path("zero.lgb.txt"), path("zero.xgb.json")
    r1 = run([apps("convert"), "--to", "lightgbm", path("zero.json"), lgb_model])
    r2 = run([apps("convert"), "--to", "xgboost", path("zero.json"), xgb_model])
    check(r1.returncode == 0 and r2.returncode == 0, "convert exports the zero model", r1.stderr + r2.stderr)
    check("libsvm_absent zero" in r2.stdout + r2.stderr and "libsvm_absent zero" not in r1.stdout + r1.stderr,
          "convert --to xgboost says XGBoost reads absent entries otherwise (--to lightgbm need not)")
    if r1.returncode == 0 and r2.returncode == 0:
        theirs = lgb.Booster(model_file=lgb_model).predict(sparse)
        check(np.allclose(theirs, s, rtol=1e-12, atol=1e-12),
              f"LightGBM scores the file as predict ({np.max(np.abs(theirs - s)):.1e})")
        b = xgb.Booster(model_file=xgb_model)
        dense_scores = b.predict(xgb.DMatrix(x.astype(np.float32)), output_margin=True)
        check(np.allclose(dense_scores, s, rtol=1e-5, atol=1e-5),
              f"XGBoost scores the zero-filled rows as predict ({np.max(np.abs(dense_scores - s)):.1e})")
        # The file as XGBoost takes a LibSVM file (a CSR matrix: an absent entry is missing), read by
        # scikit-learn: XGBoost 3.1 deprecates its own text reader (DMatrix("file?format=libsvm")).
        csr, _ = load_svmlight_file(sparse, n_features=x.shape[1], dtype=np.float32, zero_based=True)
        from_file = b.predict(xgb.DMatrix(csr), output_margin=True)
        as_missing = b.predict(xgb.DMatrix(np.where(x == 0, np.nan, x).astype(np.float32)), output_margin=True)
        check(np.allclose(from_file, as_missing, rtol=1e-6, atol=1e-6) and
              not np.allclose(from_file, s, rtol=1e-5, atol=1e-5),
              "XGBoost reading the LibSVM file itself takes absent entries as missing: the scores of the rows "
              "with NaN for 0, not the zero-filled rows' (docs/gbdt.md)")

    # An ensemble keeps the reading too (its file and its GBDT members' files), for predict.
    ens_svm, ens_dense = write_svm("ens.svm", x, y, sizes, zeros=False), write_svm("ens_dense.svm", x, y, sizes, True)
    for f in (ens_svm, ens_dense):
        os.remove(f + ".query")  # a regression ensemble: no queries
    members = []
    for leaves in (4, 8):
        members.append(path(f"m{leaves}.in"))
        with open(members[-1], "w") as f:
            f.write(f"model gbdt\nobjective regression\ndata_file {ens_svm}\nnum_trees 5\nmax_leaves {leaves}\n"
                    "growth leafwise\nmax_depth 0\n")  # data_file: the ensemble's, required
    with open(path("ens.in"), "w") as f:
        f.write(f"model ensemble\nobjective regression\ndata_file {ens_svm}\nlibsvm_base 0\nlibsvm_absent zero\n"
                f"members {','.join(members)}\noutput {path('ens.json')}\n")
    r = run([apps("train"), path("ens.in")])
    check(r.returncode == 0, "an ensemble of two GBDT decks trains with libsvm_absent zero",
          r.stdout[-3000:] + r.stderr[-3000:])
    if r.returncode == 0:
        member = json.load(open(path("ens.m4.json")))
        ens = json.load(open(path("ens.json")))
        check(ens.get("libsvm_absent") == "zero" and member.get("libsvm_absent") == "zero",
              "the ensemble file and its GBDT member's file keep libsvm_absent zero")
        outs = {}
        for name, data, extra in (("sparse", ens_svm, []), ("dense", ens_dense, []),
                                  ("missing", ens_svm, ["--libsvm-absent", "missing"])):
            r = run([apps("predict"), path("ens.json"), data, path(f"ens_{name}.pred"), "--libsvm-base", "0", *extra])
            check(r.returncode == 0, f"predict scores {name} with the ensemble", r.stdout + r.stderr)
            outs[name] = np.loadtxt(path(f"ens_{name}.pred")) if r.returncode == 0 else None
        if all(v is not None for v in outs.values()):
            check(np.array_equal(outs["sparse"], outs["dense"]) and not np.allclose(outs["missing"], outs["sparse"]),
                  "predict ENSEMBLE reads absent entries as 0 as fitted (= the zeros written; --libsvm-absent missing "
                  "differs)")

    # Refusals name the key or option, exit 2, no output.
    with open(path("bad.in"), "w") as f:
        f.write(f"model gbdt\nobjective lambdarank\ndata_file {sparse}\nlibsvm_absent none\n")
    r = run([apps("train"), path("bad.in")])
    check(r.returncode == 2 and "bad.in:4: libsvm_absent: 'none'" in r.stdout + r.stderr,
          "libsvm_absent none: exit 2 naming bad.in:4 and the key",
          r.stdout[-1500:] + r.stderr[-1500:])
    r = run([apps("predict"), path("zero.json"), sparse, path("bad.pred"), "--libsvm-absent", "0"])
    check(r.returncode == 2 and "libsvm_absent: '0'" in r.stdout + r.stderr and not os.path.exists(path("bad.pred")),
          "predict --libsvm-absent 0: exit 2 naming libsvm_absent, no output", r.stdout[-1500:] + r.stderr[-1500:])
    for base in ("2", "01"):  # checked as the option, not read as the nearest base
        r = run([apps("predict"), path("zero.json"), sparse, path("bad.pred"), "--libsvm-base", base])
        check(r.returncode == 2 and f"--libsvm-base '{base}': must be 0 or 1" in r.stdout + r.stderr
              and not os.path.exists(path("bad.pred")), f"predict --libsvm-base {base}: exit 2 naming the option, "
              "no output", r.stdout[-1500:] + r.stderr[-1500:])
    with open(path("odd.json"), "w") as f:
        json.dump(dict(zero, libsvm_absent="sometimes"), f)
    r = run([apps("predict"), path("odd.json"), sparse, path("odd.pred"), "--libsvm-base", "0"])
    check(r.returncode == 2 and "odd.json" in r.stdout + r.stderr and "'libsvm_absent' must be" in r.stdout + r.stderr
          and not os.path.exists(path("odd.pred")), "a model file's libsvm_absent of another value: exit 2 naming it",
          r.stdout[-1500:] + r.stderr[-1500:])


main()
checks.finish()
