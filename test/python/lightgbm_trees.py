"""Tree-by-tree parity with LightGBM for the GBDT objective tests: how many leading trees of our model
JSON give every training row the value LightGBM's booster gives it."""


def same_trees(ours, booster, x, atol=1e-7):
    """The number of leading trees of `ours` (our model JSON) whose value for every row of x equals that
    of the same tree of LightGBM's `booster` within 1e-5 relative (LightGBM's gradients are float32) and
    `atol`: the same partition of the rows and the same leaf values. LightGBM's first tree holds the base
    margin in every leaf, ours keeps it apart. Where a node has no rows between two cuts LightGBM puts
    the threshold at the higher, we at the lower: the same partition of these rows."""
    import numpy as np  # here: the scripts import it where a missing one means skipped, not failed

    xf = x.astype(np.float32)
    for k, tree in enumerate(ours["trees"]):
        node = np.zeros(len(xf), dtype=np.int64)
        left, right = np.array(tree["left"]), np.array(tree["right"])
        for _ in range(len(left)):
            inner = left[node] >= 0
            if not inner.any():
                break
            f = np.array(tree["feature"])[node]
            t = np.array(tree["threshold"], dtype=np.float32)[node]
            go_left = xf[np.arange(len(xf)), np.maximum(f, 0)] <= t
            node = np.where(inner, np.where(go_left, left[node], right[node]), node)
        value = np.array(tree["value"])[node] + (ours["base_margin"][0] if k == 0 else 0.0)
        theirs = booster.predict(x, start_iteration=k, num_iteration=1, raw_score=True)
        if not np.allclose(value, theirs, rtol=1e-5, atol=atol):
            print(f"tree {k}: largest difference {np.max(np.abs(value - theirs)):.3g}")
            return k
    return len(ours["trees"])
