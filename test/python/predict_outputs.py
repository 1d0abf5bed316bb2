"""apps/predict's mlp outputs against a PyTorch forward pass (float64) of the same weights and stored
statistics (every input column standardised, the regressor's outputs mapped back: Note [mlp
standardisation]): the regressor's `outputs`, the classifier's logits and their softmax `probabilities`, within 1e-5
relative. Reads the files test/cli/predict_networks.sh leaves in WORKDIR. Exits 77 (skipped) when
torch or h5py is missing.

usage: predict_outputs.py WORKDIR
"""
import os
import sys

try:
    import h5py
    import numpy as np
    import torch
except Exception as e:  # ImportError, or a numpy ABI mismatch in a broken install
    print(f"SKIP: needs torch and h5py ({type(e).__name__}: {e}); install them with scripts/setup --reference")
    sys.exit(77)

ACTIVATIONS = {"relu": torch.relu, "gelu": torch.nn.functional.gelu, "silu": torch.nn.functional.silu,
               "tanh": torch.tanh}
RTOL = 1e-5


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def forward(weights, x):
    """The mlp of a weights file (layers fc0, fc1, ... as nn.Linear) on x, in float64, with the file's
    standardisation of the inputs and the outputs where it has one."""
    with h5py.File(weights, "r") as f:
        stats = {k: np.array(f["standardisation"][k]) for k in f.get("standardisation", {})}
        config = dict(kv.split("=", 1) for kv in text(f.attrs["config"]).split())
        act = ACTIVATIONS[config["activation"]]
        names = sorted((k for k in f.keys() if k.startswith("fc")), key=lambda s: int(s[2:]))
        if "inputs_mean" in stats:
            x = (np.asarray(x, np.float64) - stats["inputs_mean"]) / stats["inputs_std"]
        h = torch.tensor(x, dtype=torch.float64)
        for i, name in enumerate(names):
            w = torch.tensor(np.array(f[name]["weight"]), dtype=torch.float64)
            b = torch.tensor(np.array(f[name]["bias"]), dtype=torch.float64)
            h = h @ w.T + b
            if i + 1 < len(names):
                h = act(h)
    if "targets_mean" in stats:
        return h.numpy() * stats["targets_std"] + stats["targets_mean"]
    return h.numpy()


def rel_err(ours, ref):
    return float(np.linalg.norm(np.asarray(ours, np.float64) - ref) / max(np.linalg.norm(ref), 1e-30))


def main(work):
    failures = []

    def check(what, ours, ref):
        e = rel_err(ours, ref)
        ok = ours.shape == ref.shape and e <= RTOL
        print(f"{what}: shape {ours.shape}, relative error {e:.2e} {'ok' if ok else 'FAIL'}")
        if not ok:
            failures.append(what)

    with h5py.File(os.path.join(work, "reg.h5"), "r") as d, h5py.File(os.path.join(work, "p_reg1.h5"), "r") as p:
        check("regression outputs", p["outputs"][...], forward(os.path.join(work, "mlp_reg.h5"), d["inputs"][...]))
    with h5py.File(os.path.join(work, "cls.h5"), "r") as d, h5py.File(os.path.join(work, "p_cls.h5"), "r") as p:
        rows = p["outputs"].shape[0]
        logits = forward(os.path.join(work, "mlp_cls.h5"), d["inputs"][:rows])
        check("classifier logits", p["outputs"][...], logits)
        check("classifier probabilities", p["probabilities"][...],
              torch.softmax(torch.tensor(logits), dim=1).numpy())
    if failures:
        print("FAIL:", ", ".join(failures))
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
