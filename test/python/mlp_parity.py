#!/usr/bin/env python3
"""PyTorch parity for the MLP: loads the HDF5 files written by test_parity_dump (our weights in
PyTorch layout, a batch, our outputs and gradients), rebuilds the same network in torch, and checks
forward output, loss and every parameter gradient within 1e-5 relative; a file with tables emb0,
emb1, ... has their codes as its last inputs: torch.cat([numbers, emb_c(codes[:, c])...], 1) feeds
fc0 (Note [category embeddings]). Exits 77 (ctest: skipped)
with a message when torch or h5py is not installed."""
import sys

try:
    import h5py
    import numpy as np
    import torch
except Exception as e:  # ImportError, or a numpy ABI mismatch (ValueError) in a broken install
    print(f"SKIPPED: PyTorch parity needs torch and h5py ({type(e).__name__}: {e}); "
          "install them with scripts/setup --reference")
    sys.exit(77)

from parity_report import check_files, rel_err  # noqa: E402

ACTIVATIONS = {"relu": torch.nn.ReLU, "gelu": torch.nn.GELU, "silu": torch.nn.SiLU, "tanh": torch.nn.Tanh}
RTOL = 1e-5


def check(path):
    with h5py.File(path, "r") as f:
        act = f.attrs["activation"]
        act = act.decode() if isinstance(act, bytes) else str(act)
        names = sorted({k for k in f.keys() if k.startswith("fc")}, key=lambda s: int(s[2:]))
        layers = []
        for i, name in enumerate(names):
            w = torch.tensor(np.array(f[name]["weight"]))
            lin = torch.nn.Linear(w.shape[1], w.shape[0])
            with torch.no_grad():
                lin.weight.copy_(w)
                lin.bias.copy_(torch.tensor(np.array(f[name]["bias"])))
            layers.append(lin)
            if i + 1 < len(names):
                layers.append(ACTIVATIONS[act]())
        model = torch.nn.Sequential(*layers)
        tables = sorted({k for k in f.keys() if k.startswith("emb")}, key=lambda s: int(s[3:]))
        embs = [torch.nn.Embedding.from_pretrained(torch.tensor(np.array(f[k]["weight"])), freeze=False)
                for k in tables]
        x = torch.tensor(np.array(f["batch/x"]))
        t = torch.tensor(np.array(f["batch/t"]))
        if embs:
            numbers, codes = x[:, :x.shape[1] - len(embs)], x[:, x.shape[1] - len(embs):].long()
            y = model(torch.cat([numbers] + [e(codes[:, c]) for c, e in enumerate(embs)], 1))
        else:
            y = model(x)
        loss = torch.nn.functional.mse_loss(y, t)
        loss.backward()
        failures = []
        errors = {"y": rel_err(f["ours/y"], y.detach().numpy()),
                  "loss": rel_err(f["ours/loss"], [loss.item()])}
        for i, name in enumerate(names):
            lin = layers[2 * i]
            errors[f"{name}.weight.grad"] = rel_err(f[f"ours/grad/{name}/weight"], lin.weight.grad.numpy())
            errors[f"{name}.bias.grad"] = rel_err(f[f"ours/grad/{name}/bias"], lin.bias.grad.numpy())
        for name, e in zip(tables, embs):
            errors[f"{name}.weight.grad"] = rel_err(f[f"ours/grad/{name}/weight"], e.weight.grad.numpy())
    for k, e in errors.items():
        status = "ok" if e <= RTOL else "FAIL"
        print(f"{path} [{act}] {k}: relative error {e:.2e} {status}")
        if e > RTOL:
            failures.append(k)
    return failures


def main():
    check_files(check, sys.argv[1:], RTOL,
                f"PyTorch {torch.__version__}: forward, loss and all gradients agree within {RTOL}")


if __name__ == "__main__":
    main()
