#!/usr/bin/env python3
"""LightGBM side of GbdtTrain.BinaryAucMatchesLightGBM.

Usage: lightgbm_binary.py SPEC.json TRAIN TEST
SPEC holds "params" (LightGBM parameters), "num_trees" and "bins": our cut points, one list per
feature (the upper bounds of the value bins, without the closing FLT_MAX). LightGBM is made to use
exactly these bins through forcedbins_filename. Two details of LightGBM's forced bins:
- it always adds bounds at -1e-35 (when some value is negative) and +1e-35 (when some value is
  positive), which would split the bin of ours that holds zero. Each feature is therefore shifted
  by a constant (train and test alike, and the cuts with it) so that its training values are >= 1:
  only the +1e-35 bound is added, below all training rows, and splits nothing. A shift does not
  change which rows fall in which bin, so the trees are those of the unshifted data.
- it fills bins left over from max_bin with cuts of its own, so max_bin_by_feature is set to our
  number of bins + 1 (that zero bound): nothing is added.

Prints one line "bins_not_ours N" (thresholds of the trained model that are not among our
(shifted) cuts; 0 when LightGBM used our bins), then the raw test margins, one per line. Exits 77
when lightgbm or numpy cannot be imported."""
import json
import sys

from tool_run import import_or_skip

lightgbm, np = import_or_skip("lightgbm", "numpy")


def main(spec_path, train_path, test_path):
    with open(spec_path) as f:
        spec = json.load(f)
    train = np.loadtxt(train_path)
    test = np.loadtxt(test_path)
    x, y, x_test = train[:, 1:], train[:, 0], test[:, 1:]
    bins = spec["bins"]
    if len(bins) != x.shape[1]:
        sys.exit(f"{len(bins)} bin lists for {x.shape[1]} features")
    shift = 1.0 - x.min(axis=0)
    x = x + shift
    x_test = x_test + shift
    forced, max_bin = [], []
    for f, cuts in enumerate(bins):
        forced.append({"feature": f, "bin_upper_bound": [c + shift[f] for c in cuts]})
        max_bin.append(len(cuts) + 2)
    forced_path = spec_path + ".forced_bins.json"  # beside SPEC, under the build tree as tests write
    with open(forced_path, "w") as f:
        json.dump(forced, f)
    params = dict(spec["params"], forcedbins_filename=forced_path, max_bin_by_feature=max_bin)
    model = lightgbm.train(params, lightgbm.Dataset(x, y), spec["num_trees"])

    allowed = [np.array(c["bin_upper_bound"]) for c in forced]
    stray = 0

    def walk(node):
        nonlocal stray
        if "split_feature" in node:
            t = node["threshold"]
            if not (np.abs(allowed[node["split_feature"]] - t) <= 1e-12 * max(1.0, abs(t))).any():
                stray += 1
            walk(node["left_child"])
            walk(node["right_child"])

    for tree in model.dump_model()["tree_info"]:
        walk(tree["tree_structure"])
    print(f"bins_not_ours {stray}")
    for m in model.predict(x_test, raw_score=True):
        print(repr(float(m)))


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
