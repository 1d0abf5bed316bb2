"""Writes token bags as a user would with h5py: a ragged int64 field `tokens` (values plus
`tokens_offsets`, Note [ragged fields] in src/data/field.hpp) and float32 `targets` [N, 1] = the mean
of the tokens' hidden values plus noise. Prints the targets' variance (the mean predictor's MSE).
usage: make_token_bags.py OUT.h5 ROWS"""
import sys

import h5py
import numpy as np

out, rows = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(11)
value = rng.standard_normal(40)
lengths = rng.integers(1, 13, rows)
offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
tokens = rng.integers(0, 40, offsets[-1]).astype(np.int64)
targets = np.array([value[tokens[a:b]].mean() for a, b in zip(offsets[:-1], offsets[1:])])
targets = (targets + 0.05 * rng.standard_normal(rows)).astype(np.float32)[:, None]
with h5py.File(out, "w") as f:
    f["tokens"] = tokens
    f["tokens_offsets"] = offsets
    f["targets"] = targets
print(float(targets.var()))
