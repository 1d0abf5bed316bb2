#!/usr/bin/env python3
"""The whole `model transformer` against plain PyTorch: loads parity_lm.h5 written by test_lm_parity_dump
(test/models/transformer/dump_lm_parity.cpp), rebuilds the decoder functionally (token + position
embeddings, pre-norm blocks with masked softmax attention, final LayerNorm, head), runs
sum over rows of the mean next-token cross-entropy / normaliser backward, and checks the loss and
every parameter gradient within 1e-5 relative (fp32). Exits 77 (skipped) without torch or h5py."""
import math
import sys

try:
    import h5py
    import numpy as np
    import torch
    import torch.nn.functional as F
    from smart_parity import datasets, rel_err
except Exception as e:
    print(f"SKIPPED: LM parity needs torch and h5py ({type(e).__name__}: {e}); run scripts/setup --reference")
    sys.exit(77)

RTOL = 1e-5


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "parity_lm.h5"
    with h5py.File(path, "r") as f:
        attrs = dict(f.attrs)
        p = {k: torch.tensor(v, requires_grad=True) for k, v in datasets(f["params"]).items()}
        grads = datasets(f["grads"])
        tokens = torch.tensor(np.array(f["tokens"])).long()
    heads, layers = int(attrs["heads"]), int(attrs["layers"])
    lin = lambda x, n: F.linear(x, p[n + "/weight"], p.get(n + "/bias"))  # noqa: E731
    ln = lambda x, n: F.layer_norm(x, (x.shape[-1],), p[n + "/weight"], p[n + "/bias"], 1e-5)  # noqa: E731
    inputs, targets = tokens[:, :-1], tokens[:, 1:]
    n, s = inputs.shape
    x = p["tok_emb/weight"][inputs] + p["pos_emb/weight"][torch.arange(s)]
    d = x.shape[-1]
    mask = torch.ones(s, s, dtype=torch.bool).triu(1)
    for layer in range(layers):
        b = f"block.{layer}"
        h_in = ln(x, b + "/ln1")
        split = lambda t: t.view(n, s, heads, d // heads).transpose(1, 2)  # noqa: E731
        q, k, v = (split(lin(h_in, f"{b}/attn/{w}")) for w in ("to_q", "to_k", "to_v"))
        a = (q @ k.transpose(-1, -2) / math.sqrt(d // heads)).masked_fill(mask, -math.inf).softmax(-1)
        h = x + lin((a @ v).transpose(1, 2).reshape(n, s, d), b + "/attn/to_out")
        x = h + lin(F.relu(lin(ln(h, b + "/ln2"), b + "/ff1")), b + "/ff2")
    logits = lin(ln(x, "ln_f"), "head")
    loss_sum = F.cross_entropy(logits.reshape(n * s, -1), targets.reshape(-1), reduction="sum") / s
    (loss_sum / float(attrs["normaliser"])).backward()
    errors = {"loss": abs(float(attrs["loss_sum"]) - loss_sum.item()) / abs(loss_sum.item())}
    for name, t in p.items():
        errors[f"grad {name}"] = rel_err(grads[name], t.grad.numpy()) if t.grad is not None else float("inf")
    for k, e in sorted(errors.items(), key=lambda kv: -kv[1])[:4]:
        print(f"{k}: relative error {e:.2e}")
    failed = [k for k, e in errors.items() if not e <= RTOL]
    if failed:
        print(f"FAILED: {len(failed)} quantities differ from PyTorch by more than {RTOL}: {', '.join(failed[:10])}")
        sys.exit(1)
    print(f"PyTorch {torch.__version__}: transformer loss and {len(p)} parameter gradients agree within {RTOL}")


if __name__ == "__main__":
    main()
