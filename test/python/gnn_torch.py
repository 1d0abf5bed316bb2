"""The gnn model in PyTorch, for the parity test (gnn_parity.py) and the speed comparison
(perf/compare_gnn.py): the graphs as src/models/gnn/mesh_graph.cpp builds them, and the network as
src/models/gnn/gnn_net.cpp computes it (sample-major batches, index_select / index_add_)."""
import math

import torch
import torch.nn.functional as F


def build_mesh_graph(ny, nx):
    """Mesh features and the g2m, m2m, m2g edge sets (sender, receiver, features [E, 3]) of an
    ny x nx grid, edge for edge in the order mesh_graph.cpp makes them."""
    mny, mnx = ny // 3, nx // 3
    M, N = mny * mnx, ny * nx

    def grid_point(p):
        return (float(p % nx), float(p // nx))

    def mesh_point(m):
        return (3.0 * (m % mnx) + 1, 3.0 * (m // mnx) + 1)

    side = float(max(nx, ny))
    mesh_features = [v for m in range(M) for v in (mesh_point(m)[0] / side, mesh_point(m)[1] / side)]
    sets = {"g2m": ([], [], []), "m2m": ([], [], []), "m2g": ([], [], [])}

    def add(name, s, r, ps, pr):
        dx, dy = pr[0] - ps[0], pr[1] - ps[1]
        sets[name][0].append(s)
        sets[name][1].append(r)
        sets[name][2].append((math.sqrt(dx * dx + dy * dy), dx, dy))

    seen = set()
    s = 3
    while ny // s >= 2 and nx // s >= 2:
        ly, lx = ny // s, nx // s

        def fine(kx, ky):
            return ((ky * s + (s - 1) // 2 - 1) // 3) * mnx + (kx * s + (s - 1) // 2 - 1) // 3

        for ky in range(ly):
            for kx in range(lx):
                for dy in (-1, 0, 1):
                    for dx in (-1, 0, 1):
                        sx, sy = kx + dx, ky + dy
                        if (dx == 0 and dy == 0) or sx < 0 or sy < 0 or sx >= lx or sy >= ly:
                            continue
                        a, b = fine(sx, sy), fine(kx, ky)
                        if (a, b) not in seen:
                            seen.add((a, b))
                            add("m2m", a, b, mesh_point(a), mesh_point(b))
        s *= 3
    for m in range(M):
        pm = mesh_point(m)
        for p in range(N):
            pg = grid_point(p)
            if math.hypot(pg[0] - pm[0], pg[1] - pm[1]) <= 0.67 * 3:
                add("g2m", p, m, pg, pm)
    for p in range(N):
        pg = grid_point(p)
        near = sorted((math.hypot(pg[0] - mesh_point(m)[0], pg[1] - mesh_point(m)[1]), m) for m in range(M))[:4]
        for _, m in near:
            add("m2g", m, p, mesh_point(m), pg)
    longest = max(f[0] for f in sets["m2m"][2])
    out = {"mesh_features": torch.tensor(mesh_features, dtype=torch.float32).reshape(M, 2), "N": N, "M": M}
    for name, (snd, rcv, feats) in sets.items():
        out[name] = (torch.tensor(snd), torch.tensor(rcv), torch.tensor(feats, dtype=torch.float32) / longest)
    return out


def batched(edges, n, n_send, n_recv):
    """n copies of an edge set, sample-major: (senders, receivers, features, receiver rows)."""
    s, r, x = edges
    return (torch.cat([s + b * n_send for b in range(n)]), torch.cat([r + b * n_recv for b in range(n)]),
            x.repeat(n, 1), n * n_recv)


def mlp(P, prefix, x, norm=True):
    h = F.silu(F.linear(x, P[f"{prefix}/fc1/weight"], P[f"{prefix}/fc1/bias"]))
    y = F.linear(h, P[f"{prefix}/fc2/weight"], P[f"{prefix}/fc2/bias"])
    if norm:
        y = F.layer_norm(y, (y.shape[-1],), P[f"{prefix}/norm/weight"], P[f"{prefix}/norm/bias"], eps=1e-5)
    return y


def interaction(P, prefix, edge, send, recv, graph):
    s, r, _, n_recv = graph
    msg = mlp(P, f"{prefix}/edge_mlp", torch.cat([edge, send.index_select(0, s), recv.index_select(0, r)], dim=1))
    agg = torch.zeros(n_recv, msg.shape[1], dtype=msg.dtype).index_add_(0, r, msg)
    return recv + mlp(P, f"{prefix}/node_mlp", torch.cat([recv, agg], dim=1)), edge + msg


def forward(P, graph, x, n, layers):
    """The network on x [n N, d_in] (graph from build_mesh_graph or read back), -> [n N, d_out]."""
    N, M = graph["N"], graph["M"]
    g2m, m2m, m2g = (batched(graph["g2m"], n, N, M), batched(graph["m2m"], n, M, M),
                     batched(graph["m2g"], n, M, N))
    gh = mlp(P, "grid_embed", x)
    mh = mlp(P, "mesh_embed", graph["mesh_features"].repeat(n, 1))
    eg, em, ed = mlp(P, "g2m_embed", g2m[2]), mlp(P, "m2m_embed", m2m[2]), mlp(P, "m2g_embed", m2g[2])
    mesh, _ = interaction(P, "encoder", eg, gh, mh, g2m)
    gh1 = gh + mlp(P, "grid_mlp", gh)
    edge = em
    for layer in range(layers):
        mesh, edge = interaction(P, f"processor{layer}", edge, mesh, mesh, m2m)
    go, _ = interaction(P, "decoder", ed, mesh, gh1, m2g)
    return mlp(P, "readout", go, norm=False)


def init_params(d_in, d_out, latent, layers, seed=0):
    """Parameters under our store names, nn.Linear / nn.LayerNorm initialisation (for timing)."""
    g = torch.Generator().manual_seed(seed)
    P = {}

    def block(prefix, i, h, o, norm=True):
        for name, a, b in (("fc1", i, h), ("fc2", h, o)):
            bound = 1 / math.sqrt(a)
            P[f"{prefix}/{name}/weight"] = (torch.rand(b, a, generator=g) * 2 - 1) * bound
            P[f"{prefix}/{name}/bias"] = (torch.rand(b, generator=g) * 2 - 1) * bound
        if norm:
            P[f"{prefix}/norm/weight"], P[f"{prefix}/norm/bias"] = torch.ones(o), torch.zeros(o)

    L = latent
    block("grid_embed", d_in, L, L)
    block("mesh_embed", 2, L, L)
    for e in ("g2m_embed", "m2m_embed", "m2g_embed"):
        block(e, 3, L, L)
    for name in ["encoder"] + [f"processor{k}" for k in range(layers)] + ["decoder"]:
        block(f"{name}/edge_mlp", 3 * L, L, L)
        block(f"{name}/node_mlp", 2 * L, L, L)
    block("grid_mlp", L, L, L)
    block("readout", L, L, d_out, norm=False)
    for p in P.values():
        p.requires_grad_(True)
    return P


def build_sphere_mesh_graph(lat, lon, refinements):
    """gnn_mesh icosahedral's graph over points (lat, lon in degrees), built from the definition in
    src/models/gnn/sphere_mesh.hpp (Note [icosahedral multi-mesh]) with scipy: each level's triangles
    are the convex hull of its vertices (not the C++ subdivision's bookkeeping), the next level's
    vertices their edges' midpoints on the sphere. Returns the kept nodes' unit vectors [M, 3] and, per
    edge set, (sender, receiver, features [E, 3]) as index arrays over the kept nodes and the points,
    plus for m2g each point's 4th-nearest node distance (ties) and the g2m radius (both in radians)."""
    import numpy as np
    from scipy.spatial import ConvexHull, cKDTree

    def unit(la, lo):
        la, lo = np.radians(la), np.radians(lo)
        return np.stack([np.cos(la) * np.cos(lo), np.cos(la) * np.sin(lo), np.sin(la)], axis=-1)

    ring = np.degrees(np.arctan(0.5))
    vertices = np.concatenate([unit(np.array([90.0]), np.array([0.0])),
                               unit(np.full(5, ring), 72.0 * np.arange(5)),
                               unit(np.full(5, -ring), 72.0 * np.arange(5) + 36.0),
                               unit(np.array([-90.0]), np.array([0.0]))])
    edges = set()
    for level in range(refinements + 1):
        level_edges = set()
        for tri in ConvexHull(vertices).simplices:
            for a, b in ((tri[0], tri[1]), (tri[1], tri[2]), (tri[2], tri[0])):
                level_edges.add((min(a, b), max(a, b)))
        edges |= level_edges
        finest = max(np.arccos(np.clip(vertices[a] @ vertices[b], -1, 1)) for a, b in level_edges)
        if level < refinements:
            mids = np.array([vertices[a] + vertices[b] for a, b in sorted(level_edges)])
            vertices = np.concatenate([vertices, mids / np.linalg.norm(mids, axis=1, keepdims=True)])
    grid = unit(np.asarray(lat, dtype=np.float64), np.asarray(lon, dtype=np.float64))
    angle = lambda c: 2 * np.arcsin(np.minimum(1.0, c / 2))  # noqa: E731 (chord -> great-circle angle)
    g2m_radius = 0.6 * finest
    spacing = angle(cKDTree(grid).query(grid, k=2)[0][:, 1]).max()
    keep_radius = max(g2m_radius, spacing)
    dist, near = cKDTree(vertices).query(grid, k=4)
    dist = angle(dist)
    keep = np.zeros(len(vertices), dtype=bool)
    keep[near[:, :3].ravel()] = True
    keep |= angle(cKDTree(grid).query(vertices, k=1)[0]) <= keep_radius
    index = -np.ones(len(vertices), dtype=np.int64)
    index[keep] = np.arange(keep.sum())
    nodes = vertices[keep]

    def features(ps, pr):
        d = pr - ps
        h = np.hypot(pr[:, 0], pr[:, 1])
        east = np.stack([-pr[:, 1] / h, pr[:, 0] / h, np.zeros_like(h)], axis=1)
        north = np.stack([-pr[:, 2] * east[:, 1], pr[:, 2] * east[:, 0], h], axis=1)
        length = 6371.0 * angle(np.linalg.norm(d, axis=1))
        return np.stack([length, 6371.0 * (d * east).sum(1), 6371.0 * (d * north).sum(1)], axis=1)

    m2m = np.array([(index[a], index[b]) for a, b in edges if keep[a] and keep[b]]
                   + [(index[b], index[a]) for a, b in edges if keep[a] and keep[b]])
    g2m = [(p, m) for m in range(len(nodes)) for p in cKDTree(grid).query_ball_point(nodes[m], 2 * np.sin(g2m_radius / 2))]
    g2m = np.array(sorted(g2m, key=lambda e: (e[1], e[0])))
    m2g = np.array([(index[near[p, k]], p) for p in range(len(grid)) for k in range(3)])
    out = {"nodes": nodes, "g2m_radius": g2m_radius, "fourth": dist[:, 3], "third": dist[:, 2]}
    for name, e, ps, pr in (("m2m", m2m, nodes[m2m[:, 0]], nodes[m2m[:, 1]]),
                            ("g2m", g2m, grid[g2m[:, 0]], nodes[g2m[:, 1]]),
                            ("m2g", m2g, nodes[m2g[:, 0]], grid[m2g[:, 1]])):
        out[name] = (e[:, 0], e[:, 1], features(ps, pr))
    longest = out["m2m"][2][:, 0].max()
    for name in ("m2m", "g2m", "m2g"):
        out[name] = (out[name][0], out[name][1], out[name][2] / longest)
    out["grid"] = grid
    return out
