"""Tree-by-tree parity with LightGBM for the GBDT objective tests: how many leading trees of our model
JSON give every training row the value LightGBM's booster gives it, and (for lambdarank, whose trees
drift apart by LightGBM's sigmoid table) whether LightGBM grows each of our trees from our own scores."""


def tree_leaves(tree, xf):
    """Each row's leaf (node index) in one tree of our model JSON (rows xf, float32: our thresholds are
    floats)."""
    import numpy as np  # here: the scripts import it where a missing one means skipped, not failed

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
    return node


def tree_values(tree, xf):
    """Each row's value in one tree of our model JSON."""
    import numpy as np

    return np.array(tree["value"])[tree_leaves(tree, xf)]


def same_trees(ours, booster, x, atol=1e-7):
    """The number of leading trees of `ours` (our model JSON) whose value for every row of x equals that
    of the same tree of LightGBM's `booster` within 1e-5 relative (LightGBM's gradients are float32) and
    `atol`: the same partition of the rows and the same leaf values. LightGBM's first tree holds the base
    margin in every leaf, ours keeps it apart. Where a node has no rows between two cuts LightGBM puts
    the threshold at the higher, we at the lower: the same partition of these rows."""
    import numpy as np

    xf = x.astype(np.float32)
    for k, tree in enumerate(ours["trees"]):
        value = tree_values(tree, xf) + (ours["base_margin"][0] if k == 0 else 0.0)
        theirs = booster.predict(x, start_iteration=k, num_iteration=1, raw_score=True)
        if not np.allclose(value, theirs, rtol=1e-5, atol=atol):
            print(f"tree {k}: largest difference {np.max(np.abs(value - theirs)):.3g}")
            return k
    return len(ours["trees"])


def trees_from_our_scores(ours, grow_one, x, rows, rtol=1e-4):
    """The trees k of `ours` that LightGBM grows too when it starts from our scores after trees 0..k-1:
    `grow_one(scores)` trains LightGBM's one tree from them (its init_score). Each tree is thus checked
    from equal scores (the gradients of round k, weights included), not after k rounds of drift. A tree
    agrees when it splits x[rows] into the same leaves and every leaf value is within `rtol` of the
    tree's largest |value| (lambdarank: LightGBM's sigmoid table is off the exact one by ~1e-5 of the
    gradients once scores are not 0). `rows`: the rows to compare; rows of zero gradient and hessian (a
    query of equal labels) may fall on either side of a split, as LightGBM sees their bins as empty."""
    import numpy as np

    xf = x.astype(np.float32)
    score = np.full(len(x), ours["base_margin"][0])
    agree = []
    for k, tree in enumerate(ours["trees"]):
        leaf = tree_leaves(tree, xf)
        value = np.array(tree["value"])[leaf]
        theirs = grow_one(score).predict(x, raw_score=True)
        pairs = np.unique(np.stack([leaf[rows], theirs[rows]]), axis=1)  # (our leaf, their value) met
        same_leaves = len(np.unique(pairs[0])) == pairs.shape[1] == len(np.unique(pairs[1]))
        gap = np.max(np.abs(value - theirs)[rows]) / np.max(np.abs(theirs[rows]))
        if same_leaves and gap <= rtol:
            agree.append(k)
        else:
            print(f"tree {k} from our scores: same leaves {same_leaves}, largest difference {gap:.3g} of the largest")
        score = score + value
    return agree
