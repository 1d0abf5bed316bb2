#!/usr/bin/env python3
"""The gnn in the seed's stack, for perf/compare_gnn.py: JAX + Haiku (hk.Linear, hk.LayerNorm) +
Optax AdamW, the whole training step (forward, MSE, backward, update) under jax.jit, on the graph
test/python/gnn_torch.py builds (the one src/models/gnn/mesh_graph.cpp builds). Run in its own
process so the XLA thread flags take effect before jax is imported:

  .deps/benchenv/bin/python perf/gnn_jax.py --threads 1 --nx 24 --ny 18 --steps 4

prints one line, the samples/s over --steps steps after the compiling warm-up step, of wall time
and of the process's CPU time."""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "test", "python"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--nx", type=int, default=24)
    ap.add_argument("--ny", type=int, default=18)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--latent", type=int, default=256)
    ap.add_argument("--layers", type=int, default=12)
    a = ap.parse_args()
    # XLA's CPU backend: one Eigen pool of --threads threads for the matrix products and fusions.
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                               f" --xla_cpu_multi_thread_eigen={'true' if a.threads > 1 else 'false'}"
                               f" intra_op_parallelism_threads={a.threads}")
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import haiku as hk
    import jax
    import jax.numpy as jnp
    import numpy as np
    import optax

    import gnn_torch  # the graph builder only (pure Python; its tensors are converted to numpy)

    graph = gnn_torch.build_mesh_graph(a.ny, a.nx)
    N, M, n, L = graph["N"], graph["M"], a.batch, a.latent

    def batched(name, n_send, n_recv):  # n copies of an edge set, sample-major (like ours)
        s, r, x = (t.numpy() for t in graph[name])
        return (np.concatenate([s + b * n_send for b in range(n)]).astype(np.int32),
                np.concatenate([r + b * n_recv for b in range(n)]).astype(np.int32),
                np.tile(x, (n, 1)), n * n_recv)

    g2m, m2m, m2g = batched("g2m", N, M), batched("m2m", M, M), batched("m2g", M, N)
    mesh_features = np.tile(graph["mesh_features"].numpy(), (n, 1))
    S, d_in = 4, 2 * 4 + 1 + 1

    def mlp(name, x, out=L, norm=True):  # Linear -> SiLU -> Linear -> LayerNorm, as neural-lam's
        y = hk.Linear(out, name=f"{name}_fc2")(jax.nn.silu(hk.Linear(L, name=f"{name}_fc1")(x)))
        return hk.LayerNorm(-1, True, True, eps=1e-5, name=f"{name}_norm")(y) if norm else y

    def interaction(name, edge, send, recv, g):
        s, r, _, n_recv = g
        msg = mlp(f"{name}_edge", jnp.concatenate([edge, send[s], recv[r]], axis=1))
        agg = jax.ops.segment_sum(msg, r, num_segments=n_recv)
        return recv + mlp(f"{name}_node", jnp.concatenate([recv, agg], axis=1)), edge + msg

    def network(x):
        gh = mlp("grid_embed", x)
        mh = mlp("mesh_embed", mesh_features)
        eg, em, ed = mlp("g2m_embed", g2m[2]), mlp("m2m_embed", m2m[2]), mlp("m2g_embed", m2g[2])
        mesh, _ = interaction("encoder", eg, gh, mh, g2m)
        gh1 = gh + mlp("grid_mlp", gh)
        edge = em
        for layer in range(a.layers):
            mesh, edge = interaction(f"processor{layer}", edge, mesh, mesh, m2m)
        go, _ = interaction("decoder", ed, mesh, gh1, m2g)
        return mlp("readout", go, out=S, norm=False)

    net = hk.without_apply_rng(hk.transform(network))
    rng = np.random.default_rng(1)
    x = jnp.asarray(rng.standard_normal((n * N, d_in), dtype=np.float32))
    t = jnp.asarray(rng.standard_normal((n * N, S), dtype=np.float32))
    params = net.init(jax.random.PRNGKey(0), x)
    opt = optax.adamw(1e-4)
    state = opt.init(params)

    @jax.jit
    def step(params, state, x, t):
        loss, grads = jax.value_and_grad(lambda p: jnp.mean((net.apply(p, x) - t) ** 2))(params)
        updates, state = opt.update(grads, state, params)
        return optax.apply_updates(params, updates), state, loss

    params, state, loss = step(params, state, x, t)  # compiles
    loss.block_until_ready()
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(a.steps):
        params, state, loss = step(params, state, x, t)
    loss.block_until_ready()
    # samples/s of wall time, then of the process's CPU time (what an idle core would give).
    print(f"{a.steps * n / (time.perf_counter() - start):.4f} {a.steps * n / (time.process_time() - cpu):.4f}")


if __name__ == "__main__":
    main()
