#!/usr/bin/env python3
"""Row weights and label_gain in learning to rank (Note [rank weights], docs/ranking.md) against
LightGBM 4.7, on synthetic queries written here: 320 training and 80 test queries of 4 to 30 rows,
integer features (every value its own bin in both tools), grades 0..4, one training query without a
relevant row, row weights from 0.2 to 3 that differ inside every query (LightGBM's rule is per row).
With weights: LightGBM grows our first tree (all scores 0, where its sigmoid table is exact; every
training row within 1e-5) and its unweighted first tree is not ours (the weights count); started from
our scores before each tree (its init_score), LightGBM grows each of our 30 weighted trees at
min_data_in_leaf 1 (the same leaves, values within 1e-4: its sigmoid table), so every round's weighted
gradients, splits and leaf values are LightGBM's, not only the first; the test
NDCG@k is within 0.03 of LightGBM's, as in gbdt_rank; the weighted train-ndcg@k and train-map@5 that
train prints equal LightGBM's weighted metrics of our training scores (a query weighs the mean of its
rows' weights; the all-0 query adds 1 unweighted, as LightGBM counts it); 2 ranks grow the 1-rank
trees. With label_gain (and weights): LightGBM with the same label_gain grows our first tree, the
model file keeps the gains, and predict's ndcg@10 equals LightGBM's ndcg@10 with those gains.
A grade beyond label_gain (train and predict) and a negative gain are exit code 2 naming file:line
and the key.

usage: gbdt_rank_weights.py BUILD_DIR MPIEXEC SCRATCH. Exits 77 (skipped) without lightgbm."""
import json
import os
import re
import sys

from lightgbm_trees import same_trees, trees_from_our_scores
from tool_run import Checks, import_or_skip, tool_script

lgb, np = import_or_skip("lightgbm", "numpy")
from rank_queries import deck_lines, final_metrics, lightgbm_eval, queries, write_svm

apps, scratch, run = tool_script(sys.argv)
checks = Checks()
path = lambda name: os.path.join(scratch, name)  # noqa: E731
TREES, LEAVES, ETA = 30, 15, 0.1
KS = (1, 3, 5, 10)
GAINS = [0.0, 1.0, 2.5, 6.0, 20.0]  # not LightGBM's default 0, 1, 3, 7, 15


def check(cond, what, detail=""):
    if not cond and detail:
        print(detail)
    checks(cond, what)


def deck(name, lines):
    with open(path(name), "w") as f:
        f.write("\n".join(lines) + "\n")
    return path(name)


def common(model):
    return deck_lines(model, TREES, LEAVES, ETA, KS)


def lightgbm(x, y, sizes, weight, trees, label_gain=None, init_score=None, min_rows=20):
    params = {"objective": "lambdarank", "num_leaves": LEAVES, "learning_rate": ETA, "lambda_l2": 0.0,
              "min_sum_hessian_in_leaf": 1e-3, "min_data_in_leaf": min_rows, "min_data_in_bin": 1, "max_bin": 255,
              "deterministic": True, "num_threads": 1, "verbose": -1, "feature_pre_filter": False}
    if label_gain:
        params["label_gain"] = label_gain
    return lgb.train(params, lgb.Dataset(x, y, group=sizes, weight=weight, init_score=init_score), trees)


def main():
    x, y, qid, sizes, w = queries(7, 400, 30, (3,), weights=True)
    cut = int(sizes[:320].sum())
    xt, yt, st = x[:cut], y[:cut], sizes[:320]
    tr_svm = write_svm(path("train.svm"), xt, yt, qid[:cut])
    te_svm = write_svm(path("test.svm"), x[cut:], y[cut:], qid[cut:])
    wfile = path("train.weights")
    np.savetxt(wfile, w[:cut], fmt="%.3f")
    wt = np.loadtxt(wfile)

    # Row weights, LightGBM's default gains.
    one, two = path("w_np1.json"), path("w_np2.json")
    data = [f"data_file {tr_svm}", f"weight_file {wfile}", f"test_file {te_svm}"]
    r1 = run([apps("train"), deck("w1.in", common(one) + data)], 1)
    check(r1.returncode == 0, "lambdarank trains with weight_file on 1 rank", r1.stdout[-3000:] + r1.stderr[-3000:])
    r2 = run([apps("train"), deck("w2.in", common(two) + data)], 2)
    check(r2.returncode == 0, "lambdarank trains with weight_file on 2 ranks", r2.stdout[-3000:] + r2.stderr[-3000:])
    if r1.returncode or r2.returncode:
        return
    m1 = json.load(open(one))
    check(m1["trees"] == json.load(open(two))["trees"], "2 ranks grow the 1-rank trees with weights")
    ours = final_metrics(r1.stdout + r1.stderr)
    print("ours:", {k: round(v, 4) for k, v in ours.items()})
    pred = path("train.pred")
    r = run([apps("predict"), one, tr_svm, pred])
    check(r.returncode == 0, "predict scores the training rows", r.stdout + r.stderr)
    theirs = lightgbm_eval(xt, yt, st, np.loadtxt(pred), KS, weight=wt)
    keys = [f"ndcg@{k}" for k in KS] + ["map@5"]
    diff = max(abs(theirs[k] - ours["train-" + k]) for k in keys)
    check(diff < 2e-6, f"LightGBM's weighted ndcg@1,3,5,10 and map@5 of our training scores equal train's ({diff:.1e})")
    plain = lightgbm_eval(xt, yt, st, np.loadtxt(pred), KS)
    check(max(abs(plain[k] - ours["train-" + k]) for k in keys) > 1e-4, "the weights change the training metrics")
    booster = lightgbm(xt, yt, st, wt, TREES)
    same = same_trees(m1, booster, xt)
    print(f"LightGBM grows the same first {same} of {TREES} weighted trees")
    check(same >= 1, f"LightGBM with the weights grows our first tree ({same} trees agree)")
    check(same_trees(m1, lightgbm(xt, yt, st, None, 1), xt) == 0, "LightGBM without the weights does not")
    # Every later tree from our scores before it (LightGBM's init_score): each round's weighted
    # gradients, splits and leaf values. At min_data_in_leaf 1, as LightGBM checks it against a row
    # count estimated from the hessians (docs/ranking.md); rows of equal-label queries left out.
    one_row = path("w_rows1.json")
    lines = [l.replace("min_data_in_leaf 20", "min_data_in_leaf 1") for l in common(one_row)]
    r = run([apps("train"), deck("rows1.in", lines + data)], 1)
    check(r.returncode == 0, "lambdarank trains with min_data_in_leaf 1", r.stdout[-3000:] + r.stderr[-3000:])
    if r.returncode == 0:
        ends = np.cumsum(st)
        varied = np.repeat([yt[e - n:e].min() < yt[e - n:e].max() for n, e in zip(st, ends)], st)
        agree = trees_from_our_scores(json.load(open(one_row)),
                                      lambda s: lightgbm(xt, yt, st, wt, 1, init_score=s, min_rows=1), xt, varied)
        check(len(agree) == TREES,
              f"from our scores before it, LightGBM grows each of our {TREES} weighted trees ({len(agree)} agree)")
    lgbm = lightgbm_eval(x[cut:], y[cut:], sizes[320:], booster.predict(x[cut:]), KS)
    gap = max(abs(lgbm[f"ndcg@{k}"] - ours[f"test-ndcg@{k}"]) for k in KS)
    check(gap < 0.03, f"test NDCG@1,3,5,10 within 0.03 of LightGBM's weighted lambdarank ({gap:.4f})")

    # label_gain (with the weights): the objective, the model file and predict's metric.
    lg = path("gain.json")
    gain_key = "label_gain " + ",".join(f"{g:g}" for g in GAINS)
    r = run([apps("train"), deck("g.in", common(lg) + data + [gain_key])], 1)
    check(r.returncode == 0, "lambdarank trains with label_gain", r.stdout[-3000:] + r.stderr[-3000:])
    if r.returncode == 0:
        mg = json.load(open(lg))
        check(mg.get("label_gain") == GAINS, f"the model file keeps label_gain ({mg.get('label_gain')})")
        booster = lightgbm(xt, yt, st, wt, TREES, GAINS)
        same = same_trees(mg, booster, xt)
        print(f"LightGBM (label_gain) grows the same first {same} of {TREES} trees")
        check(same >= 1, f"LightGBM with label_gain grows our first tree ({same} trees agree)")
        check(same_trees(m1, booster, xt) == 0, "LightGBM's default-gain first tree is not the label_gain one")
        tpred = path("gain_test.pred")
        r = run([apps("predict"), lg, te_svm, tpred])
        said = re.search(r"ndcg@10 (-?[0-9.]+)", r.stdout + r.stderr)
        check(r.returncode == 0 and said is not None, "predict prints ndcg@10 of the label_gain model",
              r.stdout + r.stderr)
        if said:
            theirs = lightgbm_eval(x[cut:], y[cut:], sizes[320:], np.loadtxt(tpred), KS, label_gain=GAINS)["ndcg@10"]
            default = lightgbm_eval(x[cut:], y[cut:], sizes[320:], np.loadtxt(tpred), KS)["ndcg@10"]
            check(abs(theirs - float(said.group(1))) < 2e-6 and abs(default - theirs) > 1e-4,
                  f"predict's ndcg@10 {said.group(1)} is LightGBM's with label_gain {theirs:.6f} (default gains: "
                  f"{default:.6f})")

    # Refusals: exit code 2 naming file:line and the key.
    first3 = int(np.argmax(yt >= 3)) + 1  # the first training line with grade 3 or more
    r = run([apps("train"), deck("short.in", common(path("short.json")) + data + ["label_gain 0,1,3"])], 2)
    check(r.returncode == 2 and f"train.svm:{first3}: label_gain: label" in r.stdout + r.stderr,
          f"a grade beyond label_gain: exit 2 naming train.svm:{first3} and label_gain",
          r.stdout[-1500:] + r.stderr[-1500:])
    r = run([apps("train"), deck("neg.in", common(path("neg.json")) + data + ["label_gain 0,1,-3,7,15"])], 1)
    check(r.returncode == 2 and "label_gain" in r.stdout + r.stderr and "label 2" in r.stdout + r.stderr,
          "a negative gain: exit 2 naming label_gain", r.stdout[-1500:] + r.stderr[-1500:])
    high = path("high.svm")
    with open(high, "w") as f:
        f.write("1 qid:1 1:1\n0 qid:1 1:2\n5 qid:1 1:3\n")
    r = run([apps("predict"), lg, high, path("high.pred")])
    said = r.stdout + r.stderr
    check(r.returncode == 2 and "high.svm:3: label_gain" in said and not os.path.exists(path("high.pred")),
          "predict: a grade beyond the model's label_gain is exit 2 naming high.svm:3, no output",
          r.stdout[-1500:] + r.stderr[-1500:])


main()
checks.finish()
