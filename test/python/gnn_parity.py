#!/usr/bin/env python3
"""PyTorch parity of the whole gnn network: loads each dump of test/models/dump_gnn_parity.cpp
(it describes them), rebuilds the network in torch (gnn_torch.py) on the same parameters and on the
graph as dumped, checks that gnn_torch.build_mesh_graph (the grid's mesh) or
gnn_torch.build_sphere_mesh_graph (gnn_mesh icosahedral: same nodes, edges and features, matched by
position) makes the same graph, runs L = sum(y * probe) backward and checks the output, the loss
and every parameter's gradient within 1e-5 relative (fp32). Exits 77 without torch/h5py/scipy.
usage: gnn_parity.py FILE..."""
import os
import sys

try:
    import h5py
    import numpy as np
    import scipy.spatial
    import torch
except Exception as e:
    print(f"SKIPPED: gnn parity needs torch and h5py ({type(e).__name__}: {e}); scripts/setup --reference")
    sys.exit(77)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gnn_torch  # noqa: E402
from parity_report import rel_err  # noqa: E402

RTOL = 1e-5


def sphere_graph_failures(f):
    """The dumped icosahedral graph against gnn_torch.build_sphere_mesh_graph, nodes matched by position."""
    py = gnn_torch.build_sphere_mesh_graph(f["graph/latitude"][()], f["graph/longitude"][()],
                                           int(f.attrs["refinements"]))
    ours = f["graph/mesh_features"][()].astype(np.float64)
    if ours.shape != py["nodes"].shape:
        return [f"sphere graph: {ours.shape[0]} mesh nodes, the Python build keeps {py['nodes'].shape[0]}"]
    d, to_py = scipy.spatial.cKDTree(py["nodes"]).query(ours)
    if d.max() > 1e-5 or len(set(to_py)) != len(to_py):
        return ["sphere graph: the mesh nodes are not the Python build's"]
    failures = []
    for name in ("m2m", "g2m", "m2g"):
        s, r, x = (f[f"graph/{name}/{k}"][()] for k in ("sender", "receiver", "features"))
        s = to_py[s] if name != "g2m" else s
        r = to_py[r] if name == "g2m" or name == "m2m" else r
        mine = {(int(a), int(b)): x[k] for k, (a, b) in enumerate(zip(s, r))}
        theirs = {(int(a), int(b)): py[name][2][k] for k, (a, b) in enumerate(zip(*py[name][:2]))}
        if len(mine) != len(s):
            failures.append(f"sphere graph {name}: an edge twice")
        for e in set(mine) ^ set(theirs):  # only at a tie: the radius (g2m) or the 3rd/4th nearest (m2g)
            p, m = (e[0], e[1]) if name == "g2m" else (e[1], e[0])
            if name == "g2m":
                a = 2 * np.arcsin(min(1.0, np.linalg.norm(py["grid"][p] - py["nodes"][m]) / 2))
                if abs(a - py["g2m_radius"]) < 1e-6:
                    continue
            if name == "m2g" and abs(py["third"][p] - py["fourth"][p]) < 1e-9:
                continue
            failures.append(f"sphere graph {name}: edge {e} in {'ours' if e in mine else 'the Python build'} only")
            break
        common = sorted(set(mine) & set(theirs))
        worst = max(np.abs(mine[e] - theirs[e]).max() for e in common)
        if worst > 1e-5:
            failures.append(f"sphere graph {name}: features differ by up to {worst:.2e}")
    return failures


def check(path):
    f = h5py.File(path, "r")
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
    if "refinements" in f.attrs:
        failures += sphere_graph_failures(f)
    else:
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
    print(f"gnn parity ({os.path.basename(path)}): {len(checks)} checks ({len(P)} parameter tensors), worst relative "
          f"error {worst:.2e}; {len(failures)} failures (the graph built in Python included)")
    return failures


failures = []
for path in sys.argv[1:]:
    failures += check(path)
if failures:
    print("FAIL:\n  " + "\n  ".join(failures))
    sys.exit(1)
