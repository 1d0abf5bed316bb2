#!/usr/bin/env python3
"""Training speed of hpctrain's gnn vs the same model in PyTorch (and JAX when the venv has it; it
does not today, so that column says so), at the seed's settings (latent 256, 12 layers, batch 8),
on a wxgen region of --nx x --ny points, 1 and 2 threads, run back to back in one go:

  .deps/refenv/bin/python perf/compare_gnn.py [--build build] [--nx 24] [--ny 18] [--steps 4]

Our side: `build/apps/train` with inputs/gnn_seed001.in's model on 1 rank (OMP_NUM_THREADS=t,
validation off), samples/s of the run's summary (metrics file). PyTorch side: test/python/gnn_torch.py's
network on the same graph and widths, random inputs and targets, forward, MSE, backward, AdamW step;
samples/s over --steps steps after one warm-up step. Not a pass/fail test: timings depend on the
machine and its load (say which CPU and when in docs/gnn.md)."""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "test", "python"))


def ours(build, data, threads, steps, workdir):
    metrics = os.path.join(workdir, f"ours_t{threads}.jsonl")
    cmd = ["mpirun", "-np", "1", "--bind-to", "none", os.path.join(build, "apps", "train"),
           os.path.join(ROOT, "inputs", "gnn_seed001.in"), "--set", f"data_file={data}", "--set", "epochs=1",
           "--set", "validation_fraction=0", "--set", f"metrics_file={metrics}", "--set", "data_cache=memory",
           "--set", f"output={os.path.join(workdir, 'w.h5')}", "--set", f"checkpoint_dir={workdir}/ckpt"]
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_PROC_BIND="false",
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
    summary = [json.loads(l) for l in open(metrics) if '"summary"' in l][-1]
    return summary["samples_per_s"], summary.get("train_flops_per_sample", 0)


def torch_side(ny, nx, threads, steps, batch=8, latent=256, layers=12):
    import torch
    import gnn_torch
    torch.set_num_threads(threads)
    graph = gnn_torch.build_mesh_graph(ny, nx)
    S, d_in = 4, 2 * 4 + 1 + 1
    P = gnn_torch.init_params(d_in, S, latent, layers)
    opt = torch.optim.AdamW(P.values(), lr=1e-4)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(batch * graph["N"], d_in, generator=g)
    t = torch.randn(batch * graph["N"], S, generator=g)

    def step():
        opt.zero_grad()
        loss = ((gnn_torch.forward(P, graph, x, batch, layers) - t) ** 2).mean()
        loss.backward()
        opt.step()

    step()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    return steps * batch / (time.perf_counter() - start)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--nx", type=int, default=24)
    ap.add_argument("--ny", type=int, default=18)
    ap.add_argument("--steps", type=int, default=4)
    a = ap.parse_args()
    try:
        import jax  # noqa: F401
        have_jax = True
    except ImportError:
        have_jax = False
    with tempfile.TemporaryDirectory() as work:
        data = os.path.join(work, "wx.nc")
        # Enough initial times for `steps` steps of batch 8 (hours + 1 times give hours - 1 samples).
        subprocess.run([os.path.join(a.build, "apps", "wxgen"), data, "--nx", str(a.nx), "--ny", str(a.ny),
                        "--margin", "6", "--hours", str(8 * a.steps + 2), "--spinup", "6"], check=True,
                       stdout=subprocess.DEVNULL)
        print(f"gnn at the seed's settings (latent 256, 12 layers, batch 8), {a.ny} x {a.nx} grid, "
              f"{a.steps} steps; samples/s")
        print(f"{'threads':>7} {'hpctrain':>10} {'pytorch':>10} {'jax':>10} {'ours/best':>10}")
        for threads in (1, 2):
            mine, flops = ours(a.build, data, threads, a.steps, work)
            ref = torch_side(a.ny, a.nx, threads, a.steps)
            jax_rate = "n/a" if not have_jax else "todo"
            print(f"{threads:>7} {mine:>10.3f} {ref:>10.3f} {jax_rate:>10} {mine / ref:>10.2f}")
        print(f"(training FLOPs per sample: {flops:.3g}; jax: {'installed' if have_jax else 'not installed'})")


if __name__ == "__main__":
    main()
