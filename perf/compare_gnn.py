#!/usr/bin/env python3
"""Training speed of hpctrain's gnn vs the same model in the seed's stack (JAX + Haiku + Optax
AdamW, jit-compiled: perf/gnn_jax.py) and in PyTorch, at the seed's settings (latent 256, 12
layers, batch 8), on a wxgen region of --nx x --ny points, 1 and 2 threads, run back to back in one
go, --repeats times (the ratios as min-max over the repeats; each repeat runs the three side by
side, so a change of load hits all three):

  .deps/benchenv/bin/python perf/compare_gnn.py [--build build] [--nx 24] [--ny 18] [--steps 4] [--repeats 3]

Our side: `build/apps/train` with inputs/gnn_seed001.in's model on 1 rank (OMP_NUM_THREADS=t,
validation off), samples/s of its steps after the first (the metrics file's step records, log_every
1). PyTorch side: test/python/gnn_torch.py's
network on the same graph and widths, random inputs and targets, forward, MSE, backward, AdamW step;
samples/s over --steps steps after one warm-up step. Each side also as samples per second of CPU
time (ours: the CPU time of the run less that of a one-step run), which a loaded machine disturbs
far less than the wall time. JAX side: the same, the step jit-compiled in
its own process (XLA's thread flags). Prints the CPU model and the load average (uptime) before and
after. Not a pass/fail test: timings depend on the
machine and its load (say which CPU and when in docs/gnn-results.md)."""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "test", "python"))


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def ours(build, data, threads, steps, workdir, data_warm=None):
    """(wall samples/s of the steps after the first, CPU samples/s, training FLOPs per sample). The
    CPU rate: the CPU time of this run minus that of a run on data_warm (one step) over the samples
    of the extra steps, so start-up, graph building and the first step cancel out."""
    if data_warm is not None:
        before = children_cpu()
        wall, _, flops = ours(build, data, threads, steps, workdir)
        cpu_all = children_cpu() - before
        before = children_cpu()
        ours(build, data_warm, threads, 0, workdir)
        cpu_one = children_cpu() - before
        return wall, 8 * steps / max(cpu_all - cpu_one, 1e-9), flops
    metrics = os.path.join(workdir, f"ours_t{threads}.jsonl")
    if os.path.exists(metrics):
        os.remove(metrics)
    # The train binary alone (an MPI singleton): no mpirun process in the CPU time.
    cmd = [os.path.join(build, "apps", "train"),
           os.path.join(ROOT, "inputs", "gnn_seed001.in"), "--set", f"data_file={data}", "--set", "epochs=1",
           "--set", "validation_fraction=0", "--set", f"metrics_file={metrics}", "--set", "data_cache=memory",
           "--set", f"output={os.path.join(workdir, 'w.h5')}", "--set", f"checkpoint_dir={workdir}/ckpt",
           "--set", "log_every=1"]
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_PROC_BIND="false",
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
    records = [json.loads(l) for l in open(metrics)]
    summary = [r for r in records if r["type"] == "summary"][-1]
    # The steps after the first (cold: first touch of the workspace), as the references time theirs.
    rates = [r["samples_per_s"] for r in records if r["type"] == "step" and r["step"] > 1]
    wall = len(rates) / sum(1.0 / r for r in rates) if rates else float("nan")
    return wall, None, summary.get("train_flops_per_sample", 0)


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
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(steps):
        step()
    return steps * batch / (time.perf_counter() - start), steps * batch / (time.process_time() - cpu)


def jax_side(ny, nx, threads, steps):
    out = subprocess.run([sys.executable, os.path.join(HERE, "gnn_jax.py"), "--threads", str(threads), "--nx",
                          str(nx), "--ny", str(ny), "--steps", str(steps)], check=True, capture_output=True,
                         text=True)
    return tuple(float(v) for v in out.stdout.strip().splitlines()[-1].split())


def machine():
    model = next((l.split(":", 1)[1].strip() for l in subprocess.run(["lscpu"], capture_output=True, text=True)
                  .stdout.splitlines() if l.startswith("Model name")), "?")
    return model, subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--nx", type=int, default=24)
    ap.add_argument("--ny", type=int, default=18)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    ap.add_argument("--omp-wait-policy", choices=("active", "passive"),
                    help="OMP_WAIT_POLICY for ours and PyTorch (both OpenMP; JAX is not): passive stops idle "
                         "threads spinning, which on a machine with more runnable processes than cores takes "
                         "most of a 2-thread run's CPU time (docs/gnn-results.md, Speed)")
    a = ap.parse_args()
    if a.omp_wait_policy:
        os.environ["OMP_WAIT_POLICY"] = a.omp_wait_policy  # before torch (and its libgomp) loads
    try:
        import jax  # noqa: F401
        have_jax = True
    except ImportError:
        have_jax = False
    with tempfile.TemporaryDirectory() as work:
        data = os.path.join(work, "wx.nc")
        # Initial times for a warm-up step and `steps` steps of batch 8 (hours + 1 times give hours - 1
        # samples).
        data_warm = os.path.join(work, "wx1.nc")
        for path, batches in ((data, a.steps + 1), (data_warm, 1)):
            subprocess.run([os.path.join(a.build, "apps", "wxgen"), path, "--nx", str(a.nx), "--ny", str(a.ny),
                            "--margin", "6", "--hours", str(8 * batches + 2), "--spinup", "6"], check=True,
                           stdout=subprocess.DEVNULL)
        cpu, load = machine()
        print(f"gnn at the seed's settings (latent 256, 12 layers, batch 8), {a.ny} x {a.nx} grid, "
              f"{a.steps} steps; samples/s; {cpu}; {time.strftime('%Y-%m-%d %H:%M')}; before: {load}")
        print("samples/s of wall time, and [of CPU time] (what an idle core gives; on a loaded machine the")
        print("wall rates measure each process's share of the cores more than its code)")
        print(f"{'threads':>7} {'hpctrain':>16} {'pytorch':>16} {'jax':>16} {'ours/best wall [cpu]':>21}")
        ratios, cpu_ratios = {}, {}
        nan = float("nan")
        for _ in range(a.repeats):
            for threads in (int(t) for t in a.threads.split(",")):
                mine, mine_cpu, flops = ours(a.build, data, threads, a.steps, work, data_warm)
                ref, ref_cpu = torch_side(a.ny, a.nx, threads, a.steps)
                jx, jx_cpu = jax_side(a.ny, a.nx, threads, a.steps) if have_jax else (nan, nan)
                best, best_cpu = (max(ref, jx), max(ref_cpu, jx_cpu)) if have_jax else (ref, ref_cpu)
                ratios.setdefault(threads, []).append(mine / best)
                cpu_ratios.setdefault(threads, []).append(mine_cpu / best_cpu)
                cell = lambda w, c: f"{w:.3f} [{c:.3f}]"
                print(f"{threads:>7} {cell(mine, mine_cpu):>16} {cell(ref, ref_cpu):>16} {cell(jx, jx_cpu):>16} "
                      f"{cell(mine / best, mine_cpu / best_cpu):>21}", flush=True)
        print(f"after: {machine()[1]}")
        for threads in ratios:
            r, c = ratios[threads], cpu_ratios[threads]
            print(f"{threads} thread(s): ours / the faster of JAX and PyTorch: wall {min(r):.2f} - {max(r):.2f}, "
                  f"CPU time {min(c):.2f} - {max(c):.2f} over {len(r)} repeat(s)")
        print(f"(training FLOPs per sample: {flops:.3g}; jax: {'installed' if have_jax else 'not installed'})")


if __name__ == "__main__":
    main()
