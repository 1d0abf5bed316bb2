#!/usr/bin/env python3
"""PyTorch parity of the whole gnn network: loads scratch_gnn_parity.h5 (test/models/dump_gnn_parity.cpp
describes it), rebuilds the network in torch on the same parameters and graph (index_select for
senders/receivers, index_add_ for the sums), runs L = sum(y * probe) backward and checks the output,
the loss and every parameter's gradient within 1e-5 relative (fp32). Exits 77 without torch/h5py.
usage: gnn_parity.py FILE"""
import sys

try:
    import h5py
    import numpy as np
    import torch
    import torch.nn.functional as F
except Exception as e:
    print(f"SKIPPED: gnn parity needs torch and h5py ({type(e).__name__}: {e}); scripts/setup --reference")
    sys.exit(77)

RTOL = 1e-5


def rel_err(ours, ref):
    ours = np.asarray(ours, dtype=np.float64).ravel()
    ref = np.asarray(ref, dtype=np.float64).ravel()
    return float(np.linalg.norm(ours - ref) / max(np.linalg.norm(ref), 1e-30))


f = h5py.File(sys.argv[1], "r")
attr = {k: int(f.attrs[k]) for k in ["ny", "nx", "d_in", "d_out", "latent", "layers", "n"]}
n, L = attr["n"], attr["latent"]
N = attr["ny"] * attr["nx"]
P = {}


def collect(name, obj):
    if isinstance(obj, h5py.Dataset):
        P[name] = torch.tensor(obj[()], dtype=torch.float32, requires_grad=True)


f["params"].visititems(collect)
M = f["graph/mesh_features"].shape[0]


def edges(name, n_send, n_recv):
    s = torch.tensor(f[f"graph/{name}/sender"][()], dtype=torch.long)
    r = torch.tensor(f[f"graph/{name}/receiver"][()], dtype=torch.long)
    x = torch.tensor(f[f"graph/{name}/features"][()], dtype=torch.float32)
    E = s.shape[0]
    # The batch is n copies of the graph, sample-major (Note [batched graphs]).
    sb = torch.cat([s + b * n_send for b in range(n)])
    rb = torch.cat([r + b * n_recv for b in range(n)])
    return sb, rb, x.repeat(n, 1), n * n_recv


def mlp(prefix, x, norm=True):
    h = F.silu(F.linear(x, P[f"{prefix}/fc1/weight"], P[f"{prefix}/fc1/bias"]))
    y = F.linear(h, P[f"{prefix}/fc2/weight"], P[f"{prefix}/fc2/bias"])
    if norm:
        y = F.layer_norm(y, (y.shape[-1],), P[f"{prefix}/norm/weight"], P[f"{prefix}/norm/bias"], eps=1e-5)
    return y


def interaction(prefix, edge, send, recv, graph):
    s, r, _, n_recv = graph
    msg = mlp(f"{prefix}/edge_mlp", torch.cat([edge, send.index_select(0, s), recv.index_select(0, r)], dim=1))
    agg = torch.zeros(n_recv, msg.shape[1]).index_add_(0, r, msg)
    return recv + mlp(f"{prefix}/node_mlp", torch.cat([recv, agg], dim=1)), edge + msg


g2m, m2m, m2g = edges("g2m", N, M), edges("m2m", M, M), edges("m2g", M, N)
x = torch.tensor(f["x"][()])
mesh_x = torch.tensor(f["graph/mesh_features"][()]).repeat(n, 1)
gh = mlp("grid_embed", x)
mh = mlp("mesh_embed", mesh_x)
eg, em, ed = mlp("g2m_embed", g2m[2]), mlp("m2m_embed", m2m[2]), mlp("m2g_embed", m2g[2])
mesh, _ = interaction("encoder", eg, gh, mh, g2m)
gh1 = gh + mlp("grid_mlp", gh)
edge = em
for layer in range(attr["layers"]):
    mesh, edge = interaction(f"processor{layer}", edge, mesh, mesh, m2m)
go, _ = interaction("decoder", ed, mesh, gh1, m2g)
y = mlp("readout", go, norm=False)
probe = torch.tensor(f["probe"][()])
loss = (y * probe).sum()
loss.backward()

failures = []
worst = 0.0
checks = [("y", f["ours/y"][()], y.detach().numpy()), ("loss", f["ours/loss"][()], [loss.item()])]
checks += [(f"grad {k}", f[f"ours/grad/{k}"][()], p.grad.numpy()) for k, p in P.items()]
for what, ours, ref in checks:
    e = rel_err(ours, ref)
    worst = max(worst, e)
    if not e <= RTOL:
        failures.append(f"{what}: relative error {e:.3e}")
print(f"gnn parity: {len(checks)} checks ({len(P)} parameter tensors), worst relative error {worst:.2e}")
if failures:
    print("FAIL:\n  " + "\n  ".join(failures))
    sys.exit(1)
