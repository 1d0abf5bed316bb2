#!/usr/bin/env python3
"""The seed-000 denoiser session, ours vs PyTorch, side by side: throughput, ratio, share of the GEMM limit
and weak scaling 1 -> 2 ranks (issue 11's goals). One thread per process. Prints a markdown table.

  .deps/benchenv/bin/python perf/compare_session.py [--build build] [--batches 16,256] [--repeats 3] [--quick]

What each run does (both sides do the same work, in a fresh process each time):
- session: `train inputs/diffusion_seed000.in` (3840 rows, 1 epoch, I/O included) with the batch set; our
  figure is the metrics summary (`seconds` from the start of the epoch loop, data read included;
  `samples_per_s`). PyTorch: the same denoiser (test/python/diffusion_torch.py), clock started before
  the rows are read from the same HDF5 file with h5py, then normalisation, shuffle per epoch, timestep
  and noise per sample, MSE, backward, AdamW (lr 1e-3, weight decay 0.01, betas 0.9/0.999, eps 1e-8).
  Process wall time (start-up, imports, output) is reported separately.
- steady: the same over --scaling-rows rows for --steady-epochs epochs; the rate of the epochs after the
  first. 1 rank (mpirun -np 1 --bind-to core; PyTorch pinned to one core) and 2 ranks (mpirun -np 2
  --bind-to core; PyTorch DDP, gloo, 2 forked processes pinned to a core each, each taking every
  second row of the epoch's permutation as DistributedSampler does). Weak scaling efficiency =
  2-rank samples/s / (2 x 1-rank samples/s), batch per rank fixed.
- ceiling: two 1-rank runs of ours at the same time, one per core, that do not communicate. On a shared
  or virtualised host one of them is often slower (measured here: the slower at 84-103% of a run alone,
  either core); a synchronous 2-rank step waits for the slower rank, so slower / 1-rank alone bounds the
  weak-scaling efficiency any data-parallel implementation can reach on this host at that moment.
- GEMM limit: model FLOPs per sample (forward + backward GEMMs, from our summary) x samples/s over the
  single-core sgemm rate at n = 1024 (build/perf/bench_gemm, else torch.mm), measured in every repeat.
Runs are interleaved (ours, PyTorch, then PyTorch first in the next repeat) so machine load hits both
alike; every figure is median [min-max] over the repeats, ratios taken per repeat. Not a test: timings
depend on the machine and its load (the load average is printed)."""
import argparse
import datetime
import json
import math
import os
import shlex
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DECK = os.path.join(ROOT, "inputs", "diffusion_seed000.in")
SESSION_DATA = os.path.join(ROOT, "data", "downscaling_session.h5")  # the deck's data_file
ENV = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false", OMPI_ALLOW_RUN_AS_ROOT="1",
           OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
# The deck's optimizer (adamw, lr 1e-3, weight_decay 0.01) with hpctrain's AdamW defaults.
ADAMW = dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)


# ---------------------------------------------------------------- PyTorch side (runs in a child process)
def torch_rank(rank, world, a, port, cpus):
    if a.bind:
        os.sched_setaffinity(0, {cpus[rank % len(cpus)]})  # as mpirun --bind-to core does for ours
    sys.path.insert(0, os.path.join(ROOT, "test", "python"))
    import diffusion_torch as dt
    import h5py
    import torch
    torch.set_num_threads(1)
    ddp = None
    if world > 1:
        import torch.distributed as dist
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    torch.manual_seed(a.seed)  # same initial parameters on every rank (DDP broadcasts rank 0's anyway)
    net = dt.Denoiser()
    if world > 1:
        ddp = torch.nn.parallel.DistributedDataParallel(net)
    model = ddp if ddp is not None else net
    opt = torch.optim.AdamW(net.parameters(), **ADAMW)
    _, abar = dt.cosine_abar(50)
    sa, sb = abar.sqrt().float(), (1 - abar).sqrt().float()
    noise = torch.Generator().manual_seed(a.seed * 1000 + rank)
    if world > 1:
        dist.barrier()
    t0 = time.perf_counter()
    with h5py.File(a.data, "r") as f:  # read at every session, as our run reads its shard
        c = torch.from_numpy(f["context"][...])
        y = torch.from_numpy(f["fine"][...])
    c = (c - c.mean(0)) / c.std(0).clamp_min(1e-12)
    y = (y - y.mean(0)) / y.std(0).clamp_min(1e-12)
    n = c.shape[0]
    per_rank = -(-n // world)
    epoch_seconds = []
    for epoch in range(a.epochs):
        te = time.perf_counter()
        perm = torch.randperm(n, generator=torch.Generator().manual_seed(a.seed + epoch))
        if per_rank * world > n:  # DistributedSampler pads to equal shares
            perm = torch.cat([perm, perm[:per_rank * world - n]])
        mine = perm[rank::world]
        for s in range(0, per_rank, a.batch):
            idx = mine[s:s + a.batch]
            t = torch.randint(0, 50, (len(idx),), generator=noise)
            eps = torch.randn(len(idx), y.shape[1], generator=noise)
            x_t = sa[t, None] * y[idx] + sb[t, None] * eps
            loss = torch.nn.functional.mse_loss(model(x_t, c[idx], t.float()), eps)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        epoch_seconds.append(time.perf_counter() - te)
    seconds = time.perf_counter() - t0
    if rank == 0:
        print("RESULT " + json.dumps({"seconds": seconds, "samples": n * a.epochs, "epoch_seconds": epoch_seconds,
                                      "epoch_samples": n}), flush=True)
    if world > 1:
        dist.destroy_process_group()


def torch_worker(a):
    cpus = sorted(os.sched_getaffinity(0))
    if a.ranks == 1:
        torch_rank(0, 1, a, 0, cpus)
        return
    import torch.multiprocessing as mp
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # fork, not spawn: the children skip a second `import torch` (seconds on a loaded machine); each rank
    # builds its process group and model after the fork.
    mp.start_processes(torch_rank, args=(a.ranks, a, port, cpus), nprocs=a.ranks, join=True, start_method="fork")


def torch_sgemm_worker():
    import torch
    torch.set_num_threads(1)
    n = 1024
    x, w = torch.randn(n, n), torch.randn(n, n)
    torch.mm(x, w)
    best, reps = 0.0, 0
    t_end = time.perf_counter() + 1.0
    while time.perf_counter() < t_end or reps < 3:
        t = time.perf_counter()
        torch.mm(x, w)
        best = max(best, 2.0 * n ** 3 / (time.perf_counter() - t) * 1e-9)
        reps += 1
    print(f"RESULT {json.dumps({'gflops': best})}", flush=True)


# ---------------------------------------------------------------- the driver
def run(cmd, what):
    t = time.perf_counter()
    p = subprocess.run(cmd, cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.perf_counter() - t
    if p.returncode != 0:
        sys.exit(f"compare_session: {what} failed (exit {p.returncode}): {shlex.join(cmd)}\n{p.stdout[-3000:]}")
    return p.stdout, wall


def child_result(out, what):
    for line in out.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    sys.exit(f"compare_session: {what} printed no result:\n{out[-3000:]}")


def ours(a, tmp, data, batch, epochs, ranks):
    metrics = os.path.join(tmp, "metrics.jsonl")
    if os.path.exists(metrics):
        os.remove(metrics)
    launch = [] if ranks == 0 else ["mpirun", "-np", str(ranks), "--bind-to", a.mpi_bind] + shlex.split(a.mpirun_args)
    cmd = launch + [os.path.join(a.build, "apps", "train"), DECK, "--set", f"data_file={data}",
                    "--set", f"batch_size={batch}", "--set", f"epochs={epochs}", "--set", f"metrics_file={metrics}",
                    "--set", f"output={os.path.join(tmp, 'weights.h5')}"]
    _, wall = run(cmd, "train")
    recs = [json.loads(line) for line in open(metrics)]
    summary = [r for r in recs if r.get("type") == "summary"][-1]
    ep = [r for r in recs if r.get("type") == "epoch"]
    return {"rate": summary["samples_per_s"], "seconds": summary["seconds"], "wall": wall,
            "io_share": summary["io_s"] / summary["seconds"], "flops": summary["train_flops_per_sample"],
            "steady": steady_rate([r["seconds"] for r in ep], [r["samples_per_s"] * r["seconds"] for r in ep])}


def independent_pair(a, tmp, data, batch, epochs):
    """Two 1-rank runs of ours at the same time, one pinned to each of the first two cores, that do not
    communicate: the steady rate of the slower one. A synchronous 2-rank run cannot beat it on this host,
    so slower / 1-rank alone is the ceiling of its weak-scaling efficiency (Note in the module doc)."""
    procs, metrics = [], []
    for core in (0, 1):
        m = os.path.join(tmp, f"pair{core}.jsonl")
        if os.path.exists(m):
            os.remove(m)
        metrics.append(m)
        cmd = ["mpirun", "-np", "1", "--bind-to", "none", "taskset", "-c", str(core),
               os.path.join(a.build, "apps", "train"), DECK, "--set", f"data_file={data}", "--set",
               f"batch_size={batch}", "--set", f"epochs={epochs}", "--set", f"metrics_file={m}",
               "--set", f"output={os.path.join(tmp, f'pair{core}.h5')}"]
        procs.append(subprocess.Popen(cmd, cwd=ROOT, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                      text=True))
    rates = []
    for p, m in zip(procs, metrics):
        _, err = p.communicate()
        if p.returncode != 0:
            sys.exit(f"compare_session: independent run failed:\n{err[-3000:]}")
        ep = [json.loads(line) for line in open(m)]
        ep = [r for r in ep if r.get("type") == "epoch"]
        rates.append(steady_rate([r["seconds"] for r in ep], [r["samples_per_s"] * r["seconds"] for r in ep]))
    return min(rates)


def pytorch(a, data, batch, epochs, ranks):
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", "torch", "--data", data, "--batch", str(batch),
           "--epochs", str(epochs), "--ranks", str(max(ranks, 1)), "--seed", str(a.seed)]
    cmd += ["--bind"] if ranks else []
    out, wall = run(cmd, "PyTorch")
    r = child_result(out, "PyTorch")
    ep = r["epoch_seconds"]
    return {"rate": r["samples"] / r["seconds"], "seconds": r["seconds"], "wall": wall,
            "steady": steady_rate(ep, [r["epoch_samples"]] * len(ep))}


def steady_rate(seconds, samples):
    """Samples/s of the epochs after the first (the first one warms caches and allocators up)."""
    k = 1 if len(seconds) > 1 else 0
    return sum(samples[k:]) / sum(seconds[k:])


def sgemm(a):
    if a.gemm_gflops:
        return a.gemm_gflops, "given by --gemm-gflops"
    bench = os.path.join(a.build, "perf", "bench_gemm")
    if a.gemm == "bench" and os.path.exists(bench):
        for min_time in ("0.5", "0.5s"):  # Google Benchmark < 1.8 takes plain seconds, 1.8+ a unit
            p = subprocess.run([bench, "--benchmark_filter=BM_KokkosBlasGemm/n:1024/mode:0",
                                f"--benchmark_min_time={min_time}", "--benchmark_format=json"],
                               cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            if p.returncode == 0:
                text = p.stdout[p.stdout.index("{"):]
                return json.loads(text)["benchmarks"][0]["GFLOP"], "bench_gemm (KokkosBlas::gemm) n=1024"
    out, _ = run([sys.executable, os.path.abspath(__file__), "--worker", "sgemm"], "torch sgemm")
    return child_result(out, "torch sgemm")["gflops"], "torch.mm n=1024"


def ensure_data(a, path, rows):
    if os.path.exists(path):
        import h5py
        with h5py.File(path, "r") as f:
            have = f["context"].shape[0]
        if have == rows:
            return
        sys.exit(f"compare_session: {path} has {have} rows, expected {rows}: remove it to regenerate")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    run([os.path.join(a.build, "apps", "diffgen"), path, "--rows", str(rows), "--seed", "3"], "diffgen")


def fmt(xs, f="{:.0f}"):
    xs = [x for x in xs if x is not None and math.isfinite(x)]
    if not xs:
        return "-"
    if len(xs) == 1:
        return f.format(xs[0])
    return f"{f.format(statistics.median(xs))} [{f.format(min(xs))}-{f.format(max(xs))}]"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--batches", default="16,256", help="batch sizes (per rank), comma-separated")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="smoke run: small steady/scaling data, 2 epochs")
    ap.add_argument("--scaling-rows", type=int, default=15360,
                    help="rows of the steady-state/scaling data set (a multiple of 2 x batch keeps steps whole)")
    ap.add_argument("--steady-epochs", type=int, default=3)
    ap.add_argument("--mpi-bind", default="core", help="mpirun --bind-to value for the 1- and 2-rank runs")
    ap.add_argument("--mpirun-args", default="", help="more mpirun options, e.g. '--mca mpi_yield_when_idle 1'")
    ap.add_argument("--gemm", choices=["bench", "torch"], default="bench",
                    help="sgemm limit from bench_gemm or torch.mm")
    ap.add_argument("--gemm-gflops", type=float,
                    help="use this sgemm GFLOP/s (e.g. a quiet machine's) instead of measuring")
    ap.add_argument("--no-scaling", action="store_true", help="only the 1-rank session and steady figures")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--worker", choices=["torch", "sgemm"], help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    ap.add_argument("--batch", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--epochs", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--ranks", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument("--bind", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker == "torch":
        return torch_worker(a)
    if a.worker == "sgemm":
        return torch_sgemm_worker()

    a.build = os.path.abspath(a.build)
    batches = [int(b) for b in a.batches.split(",")]
    if a.quick:
        whole = 2 * max(batches)  # rows per 2-rank step at the largest batch: keep every step whole
        a.scaling_rows, a.steady_epochs = whole * -(-1024 // whole), 2
    for b in batches:
        if a.scaling_rows % (2 * b):
            print(f"compare_session: warning: --scaling-rows {a.scaling_rows} is not a multiple of 2 x {b}: "
                  "a partial last step lowers the 2-rank figures", file=sys.stderr)
    scaling_data = os.path.join(ROOT, "data", f"downscaling_scaling{a.scaling_rows}.h5")
    ensure_data(a, SESSION_DATA, 3840)
    ensure_data(a, scaling_data, a.scaling_rows)
    load_before = os.getloadavg()
    started = datetime.datetime.now(datetime.timezone.utc)
    R = {}  # (figure, side, batch) -> list over repeats

    def add(key, value):
        R.setdefault(key, []).append(value)

    gemm_what = ""
    with tempfile.TemporaryDirectory(prefix="compare_session_") as tmp:
        for rep in range(a.repeats):
            g, gemm_what = sgemm(a)
            add(("gemm",), g)
            order = ("ours", "torch") if rep % 2 == 0 else ("torch", "ours")
            for b in batches:
                plans = [("session", SESSION_DATA, 1, 0), ("r1", scaling_data, a.steady_epochs, 1)]
                if not a.no_scaling:
                    plans.append(("r2", scaling_data, a.steady_epochs, 2))
                for name, data, epochs, ranks in plans:
                    res = {}
                    for side in order:
                        res[side] = (ours(a, tmp, data, b, epochs, ranks) if side == "ours"
                                     else pytorch(a, data, b, epochs, ranks))
                        print(f"# repeat {rep + 1} batch {b} {name} {side}: {res[side]['rate']:.0f} samples/s "
                              f"(steady {res[side]['steady']:.0f}), process {res[side]['wall']:.2f} s",
                              file=sys.stderr, flush=True)
                    for side, r in res.items():
                        for k, v in r.items():
                            add((name, side, k, b), v)
                    add((name, "ratio", b), res["ours"]["rate"] / res["torch"]["rate"])
                    add((name, "steady_ratio", b), res["ours"]["steady"] / res["torch"]["steady"])
                    if name == "r2":
                        for side in ("ours", "torch"):
                            one = R[("r1", side, "steady", b)][-1]
                            add(("eff", side, b), res[side]["steady"] / (2 * one))
                        slower = independent_pair(a, tmp, data, b, epochs)
                        add(("ceiling", b), slower / R[("r1", "ours", "steady", b)][-1])
                        print(f"# repeat {rep + 1} batch {b} two independent 1-rank runs: slower {slower:.0f} "
                              f"samples/s", file=sys.stderr, flush=True)
                    for side in ("ours", "torch"):
                        add((name, side, "mfu", b), res["ours"]["flops"] * res[side]["rate"] / (g * 1e9))
                        add((name, side, "mfu_steady", b), res["ours"]["flops"] * res[side]["steady"] / (g * 1e9))
    print_table(a, R, batches, started, load_before, os.getloadavg(), gemm_what)


def print_table(a, R, batches, started, load_before, load_after, gemm_what):
    import torch
    model = subprocess.run(["lscpu"], stdout=subprocess.PIPE, text=True).stdout
    model = next((line.split(":", 1)[1].strip() for line in model.splitlines() if line.startswith("Model name")), "?")
    flops = R[("session", "ours", "flops", batches[0])][0]
    pct = "{:.0%}"
    python = sys.executable
    if python.startswith(ROOT + os.sep):
        python = os.path.relpath(python, ROOT)
    command = [python, os.path.relpath(__file__, ROOT)] + sys.argv[1:]
    print(f"Command: `{shlex.join(command)}`  ")
    print(f"Date: {started:%Y-%m-%d %H:%M} UTC; CPU: {model}, {os.cpu_count()} cores; load average "
          f"{load_before[0]:.1f} before, {load_after[0]:.1f} after; torch {torch.__version__}; {a.repeats} repeat(s), "
          f"median [min-max]  ")
    print(f"Single-core sgemm ({gemm_what}): {fmt(R[('gemm',)], '{:.1f}')} GFLOP/s; model: {flops / 1e6:.2f} MFLOP "
          f"per training sample (forward + backward GEMMs)  ")
    mpi = " ".join(["--bind-to", a.mpi_bind] + shlex.split(a.mpirun_args))
    print(f"Session: {os.path.relpath(DECK, ROOT)}, 3840 rows, 1 epoch, 1 thread. Steady: epochs 2-{a.steady_epochs} "
          f"of {a.scaling_rows} rows, one core per rank (mpirun {mpi}; PyTorch pinned).\n")
    print("| figure | " + " | ".join(f"batch {b}{'/rank' if not a.no_scaling else ''}" for b in batches) + " |")
    print("|---" * (len(batches) + 1) + "|")

    def row(label, key, f="{:.0f}", goal=None):
        cells = [fmt(R.get(key + (b,), []), f) for b in batches]
        if goal:
            cells = [f"{c} (goal {g})" for c, g in zip(cells, goal)]
        print(f"| {label} | " + " | ".join(cells) + " |")

    x = "{:.2f}x"
    row("session samples/s, ours", ("session", "ours", "rate"))
    row("session samples/s, PyTorch", ("session", "torch", "rate"))
    row("session ratio ours/PyTorch", ("session", "ratio"), x,
        [">= 3x" if b <= 16 else ">= 1.3x" if b >= 256 else "-" for b in batches])
    row("session seconds (epoch loop), ours", ("session", "ours", "seconds"), "{:.2f}")
    row("session seconds (epoch loop), PyTorch", ("session", "torch", "seconds"), "{:.2f}")
    row("session process wall s, ours", ("session", "ours", "wall"), "{:.2f}")
    row("session process wall s, PyTorch", ("session", "torch", "wall"), "{:.2f}")
    row("session I/O share, ours (summary io_s)", ("session", "ours", "io_share"), pct)
    row("session share of the sgemm limit, ours", ("session", "ours", "mfu"), pct)
    row("session share of the sgemm limit, PyTorch", ("session", "torch", "mfu"), pct)
    row("steady samples/s 1 rank, ours", ("r1", "ours", "steady"))
    row("steady samples/s 1 rank, PyTorch", ("r1", "torch", "steady"))
    row("steady ratio ours/PyTorch", ("r1", "steady_ratio"), x)
    row("steady share of the sgemm limit, ours", ("r1", "ours", "mfu_steady"), pct)
    row("steady share of the sgemm limit, PyTorch", ("r1", "torch", "mfu_steady"), pct)
    if not a.no_scaling:
        row("steady samples/s 2 ranks, ours", ("r2", "ours", "steady"))
        row("steady samples/s 2 ranks, PyTorch DDP (gloo)", ("r2", "torch", "steady"))
        row("weak scaling efficiency, ours", ("eff", "ours"), pct,
            [">= 85%" if b <= 16 else ">= 97%" if b >= 256 else "-" for b in batches])
        row("weak scaling efficiency, PyTorch DDP", ("eff", "torch"), pct)
        row("ceiling: slower of two independent 1-rank runs / 1 rank alone", ("ceiling",), pct)


if __name__ == "__main__":
    main()
