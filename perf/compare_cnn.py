#!/usr/bin/env python3
"""Training speed of hpctrain's convolutional models vs the same models in PyTorch (oneDNN on the
CPU), at 1 and 2 threads, in one go: ResNet-18 (torchvision's width 64, imagenet stem, 10 classes)
on random square images of each --sizes (default 64x64; photographs: 128, 224) at --batch (default
32), and `model cape` at its default size (inputs/cape_quickstart.in: ResNet-18 width 16, 2 stages,
64x64, 1-shot episodes) at --batch episodes. Prints samples/s of both and the ratio ours / PyTorch
per case, repeated --repeats times (min-max of the ratios; within a repeat each case runs ours then
PyTorch back to back), with the CPU model (lscpu) and the load (uptime) before and after.

  .deps/benchenv/bin/python perf/compare_cnn.py [--build build] [--steps 8] [--repeats 2] [--conv-algorithm library]
      [--cases resnet18,cape] [--threads 1,2] [--sizes 64] [--batch 32] [--cpu-time] [--nchw] [--build2 DIR]

ResNet-18 at 224x224 is about 5.5 GFLOP per sample forward + backward, so a step of batch 32 takes
seconds on 2 cores: `--sizes 128,224 --steps 3` keeps a repeat to minutes.

Our side: `build/apps/train` on 1 rank (OMP_NUM_THREADS = threads) with the deck's batch set; the
median of its per-window rates (metrics file `samples_per_s`) after the first window. PyTorch side:
the same network, data in memory, forward, loss, backward, AdamW step, timed after 2 warm-up steps.
With --cpu-time also CPU seconds per step (user + system, all threads), which a loaded machine
disturbs less than wall time: ours from two more runs, of 1 and 3 epochs (the difference over the
2 epochs' steps, so start-up, the JIT kernels' generation and the tuning steps cancel), PyTorch's
from time.process_time() around its timed steps; the ratio PyTorch / ours (above 1: ours needs less).
With --nchw ours runs a second time per case with HPCTRAIN_NO_BLOCKED=1 (activations in NCHW
between the layers instead of oneDNN's nChw16c, Note [blocked activations] in nn/conv_onednn.hpp):
the columns "ours NCHW" and blocked / NCHW (CPU time too with --cpu-time).
With --build2 DIR ours also runs from a second build right after the first in each case (e.g. one
against oneDNN 3.2, scripts/setup --onednn3 with BUILD_DIR): the columns "ours 2" and 2 / ours
(CPU time too: ours / 2, above 1: the second build needs less); each build's libdnnl is printed.
Not a pass/fail test: timings depend on the machine and its load."""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "test", "python"))

import h5py  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
from resnet_parity import ResNet  # noqa: E402


def sh(cmd):
    return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.strip()


def run_train(build, deck, sets, batch, threads, metrics, epochs=1):
    """One `train` run; returns the CPU seconds it took (user + system)."""
    cmd = [os.path.join(build, "apps", "train"), os.path.join(ROOT, "inputs", deck), "--set", f"batch_size={batch}",
           "--set", "validation_file=", "--set", "validation_fraction=0", "--set", "log_every=2",
           "--set", f"metrics_file={metrics}", "--set", f"output={os.path.join(ROOT, 'runs', 'perf_cnn.weights.h5')}",
           "--set", "warmup_steps=0", "--set", "sync_batch_norm=false"] + [a for s in sets for a in ("--set", s)]
    cmd += ["--set", f"epochs={epochs}"]
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_PROC_BIND="false")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL, cwd=ROOT)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def ours(build, deck, sets, batch, steps, threads, name):
    metrics = os.path.join(ROOT, "runs", f"perf_cnn_{name}.jsonl")
    if os.path.exists(metrics):
        os.remove(metrics)
    run_train(build, deck, sets, batch, threads, metrics)
    rates = [r["samples_per_s"] for r in map(json.loads, open(metrics)) if r.get("type") == "step"]
    return statistics.median(rates[1:] if len(rates) > 2 else rates)


def ours_cpu(build, deck, sets, batch, threads, steps_per_epoch):
    """CPU seconds per step: a 3-epoch run less a 1-epoch run, over the 2 epochs' steps."""
    none = os.path.join(ROOT, "runs", "perf_cnn_cpu.jsonl")
    one = run_train(build, deck, sets, batch, threads, none, 1)
    three = run_train(build, deck, sets, batch, threads, none, 3)
    return (three - one) / (2 * steps_per_epoch)


CPU = {}  # the last timed() call's CPU seconds per step


def nchw(f, *args):
    """f(*args) with our activations in NCHW between the layers (HPCTRAIN_NO_BLOCKED=1)."""
    os.environ["HPCTRAIN_NO_BLOCKED"] = "1"
    try:
        return f(*args)
    finally:
        os.environ.pop("HPCTRAIN_NO_BLOCKED")


def timed(step, steps):
    for _ in range(2):
        step()
    t, c = time.perf_counter(), time.process_time()
    for _ in range(steps):
        step()
    CPU["torch"] = (time.process_time() - c) / steps
    return time.perf_counter() - t


def torch_resnet(x, y, batch, steps):
    model = ResNet(18, 64, 10, 3, False)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
    i = [0]

    def step():
        s = (i[0] * batch) % (x.shape[0] - batch + 1)
        i[0] += 1
        loss = nn.functional.cross_entropy(model(x[s:s + batch]), y[s:s + batch])
        opt.zero_grad()
        loss.backward()
        opt.step()
    return steps * batch / timed(step, steps)


class CapeNet(nn.Module):
    """The cape backbone (ResNet-18 stem + 2 stages, width 16, 1x1 projection to 64) and head, as
    models/cape (the head's arithmetic as test/python/cape_head_parity.py)."""

    def __init__(self, width=16, stages=2, dim=64, sigma=1.0, scale=0.125, w_hm=2.0):
        super().__init__()
        r = ResNet(18, width, 10, 3, False)
        self.stem = nn.Sequential(r.conv1, r.bn1, nn.ReLU(), r.maxpool)
        self.stages = nn.Sequential(*[getattr(r, f"layer{s + 1}") for s in range(stages)])
        self.proj = nn.Conv2d(width << (stages - 1), dim, 1)
        self.sigma, self.scale, self.w_hm = sigma, scale, w_hm

    def forward(self, support, query, kps, kpq):
        n = support.shape[0]
        f = self.proj(self.stages(self.stem(torch.cat([support, query]))))
        fs, fq = f[:n].flatten(2), f[n:].flatten(2)
        h, w = f.shape[2], f.shape[3]
        py, px = torch.meshgrid(torch.arange(h) + 0.5, torch.arange(w) + 0.5, indexing="ij")
        px, py = px.reshape(1, 1, -1), py.reshape(1, 1, -1)

        def gauss(kp):
            g = torch.exp(-((px - kp[..., 0:1] * w) ** 2 + (py - kp[..., 1:2] * h) ** 2) / (2 * self.sigma ** 2))
            return g / g.sum(-1, keepdim=True)
        a, target = gauss(kps), gauss(kpq)
        feat = torch.einsum("nkp,ndp->nkd", a, fs)
        prob = torch.softmax(self.scale * torch.einsum("nkd,ndp->nkp", feat, fq), -1)
        pred = torch.stack([(prob * px / w).sum(-1), (prob * py / h).sum(-1)], -1)
        vis = kps[..., 2] * kpq[..., 2]
        m = (vis > 0).sum(-1, keepdim=True).clamp(min=1)
        loss = vis * ((pred - kpq[..., :2]).abs().sum(-1) + self.w_hm * ((prob - target) ** 2).sum(-1)) / m
        return loss.sum() / n


def torch_cape(images, keypoints, batch, steps):
    model = CapeNet()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)
    rng = np.random.default_rng(0)
    i = [0]

    def step():
        s = (i[0] * batch) % (images.shape[0] - batch + 1)
        i[0] += 1
        v = rng.permutation(2)  # support and query view (2 views per row)
        im = images[s:s + batch]
        loss = model(im[:, 3 * v[0]:3 * v[0] + 3], im[:, 3 * v[1]:3 * v[1] + 3], keypoints[s:s + batch, v[0]],
                     keypoints[s:s + batch, v[1]])
        opt.zero_grad()
        loss.backward()
        opt.step()
    return steps * batch / timed(step, steps)


def other_columns(rates, cpus, other_rates, other_cpus, ours_over_other):
    """Table columns for a second run of ours (NCHW, or another build) against the first: its median
    samples/s and the min-max of the rate ratio, then (with CPU times) its median CPU ms/step and the
    min-max of the CPU ratio; each ratio oriented so that above 1 favours the side it names first."""
    def ratio(first, second):
        return first / second if ours_over_other else second / first
    rr = [ratio(o, n) for (o, _), n in zip(rates, other_rates)]
    cols = f" {statistics.median(other_rates):.2f} | {min(rr):.2f}-{max(rr):.2f} |"
    if other_cpus is not None:
        cr = [ratio(n, o) for (o, _), n in zip(cpus, other_cpus)]
        cols += f" {1e3 * statistics.median(other_cpus):.1f} | {min(cr):.2f}-{max(cr):.2f} |"
    return cols


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--conv-algorithm", default="library", choices=["library", "onednn", "gemm", "direct"],
                    help="our convolutions: the decks' default `library` (oneDNN on host builds that found it, "
                         "else gemm) or a fixed one (not auto: its tuning steps would be timed)")
    ap.add_argument("--cpu-time", action="store_true", help="also CPU seconds per step (see above)")
    ap.add_argument("--cases", default="resnet18,cape", help="comma-separated: resnet18, cape")
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    ap.add_argument("--sizes", default="64", help="comma-separated ResNet-18 image sizes (square), e.g. 64,128,224")
    ap.add_argument("--batch", type=int, default=32, help="images (cape: episodes) per step")
    ap.add_argument("--nchw", action="store_true", help="also ours with HPCTRAIN_NO_BLOCKED=1 (see above)")
    ap.add_argument("--build2", help="also ours from this second build (see above)")
    a = ap.parse_args()
    os.makedirs(os.path.join(ROOT, "runs"), exist_ok=True)
    batch = a.batch
    rows = batch * (a.steps + 3)
    names = a.cases.split(",")
    sizes = [int(v) for v in a.sizes.split(",")]
    rs = np.random.default_rng(1)
    y = rs.integers(0, 10, size=rows)
    yt = torch.tensor(y)
    # Random images of each size for the ResNet (case "resnet18@SIZE"); posegen's data for cape.
    cases, resnet_sets, resnet_x = [], {}, {}
    for size in (sizes if "resnet18" in names else []):
        img = os.path.join(ROOT, "runs", f"perf_cnn_images_{size}.h5")
        x = rs.integers(0, 256, size=(rows, 3, size, size), dtype=np.uint8)
        with h5py.File(img, "w") as f:
            f["images"], f["labels"] = x, y
        case = f"resnet18@{size}"
        cases.append(case)
        resnet_x[case] = torch.tensor(x, dtype=torch.float32) / 255
        resnet_sets[case] = [f"data_file={img}", "resnet_width=64", "resnet_stem=imagenet",
                             "data_format=hdf5_images", f"conv_algorithm={a.conv_algorithm}"]
    if "cape" in names:
        cases.append("cape")
        cape_train, cape_test = (os.path.join(ROOT, "runs", f"perf_cnn_cape_{s}.h5") for s in ("train", "test"))
        subprocess.run([os.path.join(a.build, "apps", "posegen"), cape_train, cape_test, "--rows", str(rows),
                        "--test-rows", "8"], check=True, stdout=subprocess.DEVNULL)
        with h5py.File(cape_train, "r") as f:
            cim, ckp = torch.tensor(f["images"][()]), torch.tensor(f["keypoints"][()])
        cape_sets = [f"data_file={cape_train}", f"conv_algorithm={a.conv_algorithm}"]
    per_epoch = rows // batch
    cpu = sh("lscpu | grep 'Model name'")
    print(f"compare_cnn: {cpu}; {sh('nproc')} cores; torch {torch.__version__}; ours conv_algorithm "
          f"{a.conv_algorithm}; batch {batch}")
    for b in [a.build] + ([a.build2] if a.build2 else []):
        dnnl = sh(f"ldd {b}/apps/train | grep -o 'libdnnl[^ ]* => [^ ]*'") or "no oneDNN"
        print(f"compare_cnn: {b}: {dnnl}")
    print(f"compare_cnn: load before: {sh('uptime')}")
    results, cpu, flat, flat_cpu, second, second_cpu = {}, {}, {}, {}, {}, {}
    for r in range(a.repeats):
        for threads in map(int, a.threads.split(",")):
            torch.set_num_threads(threads)
            torch.manual_seed(0)
            for case in cases:
                resnet = case != "cape"
                deck, sets = ("resnet_digits.in", resnet_sets[case]) if resnet else ("cape_quickstart.in", cape_sets)
                o = ours(a.build, deck, sets, batch, a.steps, threads, case.replace("@", "_"))
                if a.build2:
                    second.setdefault((case, threads), []).append(
                        ours(a.build2, deck, sets, batch, a.steps, threads, case.replace("@", "_")))
                if a.nchw:
                    flat.setdefault((case, threads), []).append(
                        nchw(ours, a.build, deck, sets, batch, a.steps, threads, case.replace("@", "_")))
                if resnet:
                    t = torch_resnet(resnet_x[case], yt, batch, a.steps)
                else:
                    t = torch_cape(cim, ckp, batch, a.steps)
                results.setdefault((case, threads), []).append((o, t))
                line = (f"  repeat {r + 1}: {case:12s} {threads} thread(s): ours {o:7.2f} samples/s, "
                        f"PyTorch {t:7.2f} samples/s, ratio {o / t:5.2f}")
                if a.cpu_time:
                    tc = CPU["torch"]
                    oc = ours_cpu(a.build, deck, sets, batch, threads, per_epoch)
                    cpu.setdefault((case, threads), []).append((oc, tc))
                    line += f"; CPU ms/step ours {1e3 * oc:7.1f}, PyTorch {1e3 * tc:7.1f}, ratio {tc / oc:5.2f}"
                    if a.build2:
                        second_cpu.setdefault((case, threads), []).append(
                            ours_cpu(a.build2, deck, sets, batch, threads, per_epoch))
                        line += f", ours 2 {1e3 * second_cpu[(case, threads)][-1]:7.1f}"
                    if a.nchw:
                        flat_cpu.setdefault((case, threads), []).append(
                            nchw(ours_cpu, a.build, deck, sets, batch, threads, per_epoch))
                        line += f", ours NCHW {1e3 * flat_cpu[(case, threads)][-1]:7.1f}"
                if a.nchw:
                    line += f"; ours NCHW {flat[(case, threads)][-1]:7.2f} samples/s"
                if a.build2:
                    line += f"; ours 2 {second[(case, threads)][-1]:7.2f} samples/s"
                print(line, flush=True)
    print(f"compare_cnn: load after: {sh('uptime')}")
    head = "| case | threads | ours samples/s | PyTorch samples/s | ours / PyTorch (min-max) |"
    if a.cpu_time:
        head += " CPU ms/step ours | PyTorch | PyTorch / ours (min-max) |"
    if a.nchw:
        head += " ours NCHW samples/s | blocked / NCHW (min-max) |"
        if a.cpu_time:
            head += " CPU ms/step ours NCHW | NCHW / blocked (min-max) |"
    if a.build2:
        head += " ours 2 samples/s | 2 / ours (min-max) |"
        if a.cpu_time:
            head += " CPU ms/step ours 2 | ours / 2 (min-max) |"
    print(head)
    print("|---" * (head.count("|") - 1) + "|")
    for (case, threads), v in sorted(results.items(), key=lambda kv: (cases.index(kv[0][0]), kv[0][1])):
        ratios = [o / t for o, t in v]
        line = (f"| {case} | {threads} | {statistics.median(o for o, _ in v):.2f} | "
                f"{statistics.median(t for _, t in v):.2f} | {min(ratios):.2f}-{max(ratios):.2f} |")
        if a.cpu_time:
            c = cpu[(case, threads)]
            cr = [t / o for o, t in c]
            line += (f" {1e3 * statistics.median(o for o, _ in c):.1f} | {1e3 * statistics.median(t for _, t in c):.1f} |"
                     f" {min(cr):.2f}-{max(cr):.2f} |")
        if a.nchw:  # blocked / NCHW: above 1, blocked is faster (rates) or needs less CPU
            line += other_columns(v, cpu.get((case, threads)), flat[(case, threads)],
                                  flat_cpu.get((case, threads)) if a.cpu_time else None, ours_over_other=True)
        if a.build2:  # build 2 / ours: above 1, the second build is faster or needs less CPU
            line += other_columns(v, cpu.get((case, threads)), second[(case, threads)],
                                  second_cpu.get((case, threads)) if a.cpu_time else None, ours_over_other=False)
        print(line)


if __name__ == "__main__":
    main()
