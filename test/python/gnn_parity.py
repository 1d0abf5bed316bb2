#!/usr/bin/env python3
"""PyTorch parity of the whole gnn network: loads scratch_gnn_parity.h5 (test/models/dump_gnn_parity.cpp
describes it), rebuilds the network in torch (gnn_torch.py) on the same parameters and on the graph
as dumped, checks that gnn_torch.build_mesh_graph makes the same graph, runs L = sum(y * probe)
backward and checks the output, the loss and every parameter's gradient within 1e-5 relative
(fp32). Exits 77 without torch/h5py.
usage: gnn_parity.py FILE"""
import os
import sys

try:
    import h5py
    import numpy as np
    import torch
except Exception as e:
    print(f"SKIPPED: gnn parity needs torch and h5py ({type(e).__name__}: {e}); scripts/setup --reference")
    sys.exit(77)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gnn_torch  # noqa: E402

RTOL = 1e-5


def rel_err(ours, ref):
    ours = np.asarray(ours, dtype=np.float64).ravel()
    ref = np.asarray(ref, dtype=np.float64).ravel()
    if ours.shape != ref.shape:
        return float("inf")
    return float(np.linalg.norm(ours - ref) / max(np.linalg.norm(ref), 1e-30))


f = h5py.File(sys.argv[1], "r")
attr = {k: int(f.attrs[k]) for k in ["ny", "nx", "d_in", "d_out", "latent", "layers", "n"]}
n = attr["n"]
P = {}
f["params"].visititems(lambda name, obj: P.__setitem__(name, torch.tensor(obj[()], requires_grad=True))
                       if isinstance(obj, h5py.Dataset) else None)
graph = {"mesh_features": torch.tensor(f["graph/mesh_features"][()]), "N": attr["ny"] * attr["nx"],
         "M": f["graph/mesh_features"].shape[0]}
for name in ("g2m", "m2m", "m2g"):
    graph[name] = (torch.tensor(f[f"graph/{name}/sender"][()], dtype=torch.long),
                   torch.tensor(f[f"graph/{name}/receiver"][()], dtype=torch.long),
                   torch.tensor(f[f"graph/{name}/features"][()]))
failures = []
built = gnn_torch.build_mesh_graph(attr["ny"], attr["nx"])
for name in ("g2m", "m2m", "m2g"):
    for k, what in enumerate(("senders", "receivers")):
        if not torch.equal(built[name][k], graph[name][k]):
            failures.append(f"graph {name}: the Python build's {what} differ")
    if rel_err(built[name][2], graph[name][2]) > RTOL:
        failures.append(f"graph {name}: the Python build's features differ")
x = torch.tensor(f["x"][()])
y = gnn_torch.forward(P, graph, x, n, attr["layers"])
loss = (y * torch.tensor(f["probe"][()])).sum()
loss.backward()
worst = 0.0
checks = [("y", f["ours/y"][()], y.detach().numpy()), ("loss", f["ours/loss"][()], [loss.item()])]
checks += [(f"grad {k}", f[f"ours/grad/{k}"][()], p.grad.numpy()) for k, p in P.items()]
for what, ours, ref in checks:
    e = rel_err(ours, ref)
    worst = max(worst, e)
    if not e <= RTOL:
        failures.append(f"{what}: relative error {e:.3e}")
print(f"gnn parity: {len(checks)} checks ({len(P)} parameter tensors), worst relative error {worst:.2e}; "
      "graphs built in Python match")
if failures:
    print("FAIL:\n  " + "\n  ".join(failures))
    sys.exit(1)
