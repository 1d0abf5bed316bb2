#!/usr/bin/env python3
"""Training speed of hpctrain's diffusion model vs the same model in PyTorch (AdamW, same batch), on
this machine, one thread each, run back to back. Prints samples/s of both and the ratio per batch size.

  .deps/benchenv/bin/python perf/compare_diffusion.py [--build build] [--batches 16,256] [--samples 60000]
                                                     [--repeats 3]

Our side: `build/apps/train inputs/diffusion_quickstart.in` (1 rank, OMP_NUM_THREADS=1) with the batch
overridden; its per-window rates (metrics file, `samples_per_s` of the step records) after the first
window, median. With --repeats N the two run alternately N times per batch size; the table gives
min-max of each side's rate and of the ratio. PyTorch side: the same denoiser (test/python/diffusion_torch.py), data in memory,
timestep and noise drawn per step, forward, MSE, backward, AdamW step; median of per-window rates.
Not a pass/fail test: timings depend on the machine and its load."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "test", "python"))
os.environ["OMP_NUM_THREADS"] = "1"

import diffusion_torch as dt  # noqa: E402
import h5py  # noqa: E402
import torch  # noqa: E402


def ours(build, data, batch, steps, window):
    metrics = os.path.join(ROOT, "runs", f"perf_diffusion_b{batch}.jsonl")
    if os.path.exists(metrics):
        os.remove(metrics)
    rows = h5py.File(data, "r")["context"].shape[0]
    epochs = max(1, -(-steps * batch // rows))
    cmd = [os.path.join(build, "apps", "train"), os.path.join(ROOT, "inputs", "diffusion_quickstart.in"),
           "--set", f"data_file={data}", "--set", f"batch_size={batch}", "--set", f"epochs={epochs}",
           "--set", "validation_fraction=0", "--set", f"log_every={window}", "--set", f"metrics_file={metrics}",
           "--set", f"output={os.path.join(ROOT, 'runs', 'perf_diffusion.weights.h5')}", "--set", "warmup_steps=0"]
    env = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false")
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL, cwd=ROOT)
    rates = [r["samples_per_s"] for r in map(json.loads, open(metrics)) if r.get("type") == "step"]
    return statistics.median(rates[1:] if len(rates) > 2 else rates)


def pytorch(data, batch, steps, window):
    torch.set_num_threads(1)
    torch.manual_seed(0)
    with h5py.File(data, "r") as f:
        c = torch.tensor(f["context"][...])
        y = torch.tensor(f["fine"][...])
    c = (c - c.mean(0)) / c.std(0)
    y = (y - y.mean(0)) / y.std(0)
    _, abar = dt.cosine_abar(50)
    sa, sb = abar.sqrt().float(), (1 - abar).sqrt().float()
    net = dt.Denoiser()
    opt = torch.optim.AdamW(net.parameters(), lr=2e-3, weight_decay=1e-4)
    n = c.shape[0]
    perm = torch.randperm(n)
    rates, t0, pos = [], time.perf_counter(), 0
    for step in range(steps):
        if pos + batch > n:
            perm, pos = torch.randperm(n), 0
        idx = perm[pos:pos + batch]
        pos += batch
        t = torch.randint(0, 50, (batch,))
        eps = torch.randn(batch, 256)
        x_t = sa[t, None] * y[idx] + sb[t, None] * eps
        loss = torch.nn.functional.mse_loss(net(x_t, c[idx], t.float()), eps)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if (step + 1) % window == 0:
            t1 = time.perf_counter()
            rates.append(window * batch / (t1 - t0))
            t0 = t1
    return statistics.median(rates[1:] if len(rates) > 2 else rates)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--data", default=os.path.join(ROOT, "data", "downscaling.h5"))
    ap.add_argument("--batches", default="16,256")
    ap.add_argument("--samples", type=int, default=60000, help="training samples per measurement")
    ap.add_argument("--repeats", type=int, default=1)
    args = ap.parse_args()
    if not os.path.exists(args.data):
        subprocess.run([os.path.join(args.build, "apps", "diffgen"), args.data, "--rows", "20000"], check=True)
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, OMP_NUM_THREADS=1, data {args.data}")
    print(f"{'batch':>6} {'hpctrain samples/s':>22} {'pytorch samples/s':>22} {'ratio (min-max)':>16}")
    span = lambda v, f: f"{min(v):{f}}-{max(v):{f}}" if len(v) > 1 else f"{v[0]:{f}}"
    for b in [int(x) for x in args.batches.split(",")]:
        steps = max(40, args.samples // b)
        window = max(5, steps // 10)
        ours_rates, torch_rates = [], []
        for _ in range(args.repeats):
            torch_rates.append(pytorch(args.data, b, steps, window))
            ours_rates.append(ours(args.build, args.data, b, steps, window))
        ratios = [o / t for o, t in zip(ours_rates, torch_rates)]
        print(f"{b:>6} {span(ours_rates, '.0f'):>22} {span(torch_rates, '.0f'):>22} {span(ratios, '.2f'):>16}", flush=True)

if __name__ == "__main__":
    main()
