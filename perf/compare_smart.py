#!/usr/bin/env python3
"""Training speed of hpctrain's `model smart` vs the same network in plain PyTorch (issue 19), on this
machine, 1 and 2 threads, run back to back. Prints samples/s of both and the ratio.

  .deps/benchenv/bin/python perf/compare_smart.py [--build build] [--batch 4] [--steps 6] [--threads 1,2]
                                               [--repeats 3] [--hidden 128 --heads 8 --map-layers 3
                                                --agent-layers 6 --vocab 2048 --freqs 64 --neighbours 16]

Defaults are SMART-tiny's settings (hidden 128, 8 heads, 3 map and 6 agent layers, vocab 2048) at a
small batch (CPU). Our side: `build/apps/train` (1 rank, OMP_NUM_THREADS=T) on trajgen scenes with
the settings as --set; samples/s of its metrics summary (the first step included). PyTorch side: the
functional reference of test/python/smart_parity.py (segment softmax by scatter ops) on our weights
(the weights file of our run), the token graph built in numpy by the same rules as
src/models/smart/scene_graph.cpp (drift-free tokens, nearest neighbours within the radii), forward,
label-smoothed cross-entropy, backward and an AdamW step per batch; torch.set_num_threads(T).
Each thread count runs ours and the reference alternately --repeats times; the table gives min-max
of each and the ratio of the medians, with the CPU model (lscpu) and `uptime`'s load before and after,
then the same in samples per CPU-second (user + sys; ours for its whole process, setup included, the
reference for its training loop), which a loaded machine moves much less than wall time, and per
CPU-second of the two training loops alone (ours: the metrics summary's `cpu_s`).
Then the dense causal attention layer (nn::CausalAttention, forward + backward, projections included):
perf/bench_causal_attention against the same layer in PyTorch. torch 1.13 (the reference venv) has no
scaled_dot_product_attention, so the PyTorch side is the explicit softmax(QK^T / sqrt(d) + causal
mask) V form; with torch >= 2 it uses F.scaled_dot_product_attention(is_causal=True) and says so.
Not a pass/fail test: timings depend on the machine and its load."""
import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "test", "python"))

import h5py  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import smart_parity  # noqa: E402

SHIFT, TOKENS = 5, 18
RANGES = [((-0.5, -1.2, -0.5), (7.5, 1.2, 0.5)), ((-0.2, -0.4, -0.6), (1.0, 0.4, 0.6)),
          ((-0.2, -0.8, -0.5), (3.5, 0.8, 0.5))]


def wrap(a):
    return (a + math.pi) % (2 * math.pi) - math.pi


class Vocab:
    """The fixed grid of src/models/smart/motion_tokens.cpp."""

    def __init__(self, v):
        self.v = v
        self.n = max(1, int(math.floor(round((v / 4.0) ** (1 / 3), 9))))
        self.nx = max(1, v // (self.n * self.n))

    def token_and_apply(self, ty, x, y, h, x1, y1, h1):
        lo, hi = RANGES[ty]
        c, s = math.cos(h), math.sin(h)
        d = (c * (x1 - x) + s * (y1 - y), -s * (x1 - x) + c * (y1 - y), wrap(h1 - h))
        ns = (self.nx, self.n, self.n)
        cell = [min(max(int(math.floor((d[i] - lo[i]) / (hi[i] - lo[i]) * ns[i])), 0), ns[i] - 1) for i in range(3)]
        m = [lo[i] + (hi[i] - lo[i]) * (cell[i] + 0.5) / ns[i] for i in range(3)]
        tok = (cell[0] * self.n + cell[1]) * self.n + cell[2]
        return tok, x + c * m[0] - s * m[1], y + s * m[0] + c * m[1], wrap(h + m[2])


def nearest(pos, dst, cands, radius, k, exclude=None):
    d = np.hypot(pos[cands, 0] - dst[0], pos[cands, 1] - dst[1])
    keep = [(dd, c) for dd, c in zip(d, cands) if dd < radius and c != exclude]
    keep.sort()
    return [c for _, c in keep[:k]]


def rel(ps, pd):
    dx, dy = ps[0] - pd[0], ps[1] - pd[1]
    return [math.hypot(dx, dy), wrap(math.atan2(dy, dx) - pd[2]), wrap(ps[2] - pd[2])]


def build_graph(f, rows, vocab, span, kmap, kagent):
    """The token graph of scenes `rows` (scene_graph.cpp's rules), as torch tensors."""
    ao, mo = f["agent_state_offsets"][:], f["map_polyline_offsets"][:]
    g = {k: [] for k in ("token_in", "target", "weight", "map_feat")}
    e = {k: ([], [], []) for k in ("map_map", "temporal", "map_agent", "agent_agent")}
    T = TOKENS - 1
    n_agents = n_maps = 0
    for r in rows:
        st = f["agent_state"][ao[r]:ao[r + 1]]
        ty = f["agent_type"][ao[r]:ao[r + 1]]
        poly = f["map_polyline"][mo[r]:mo[r + 1]]
        mt = f["map_type"][mo[r]:mo[r + 1]]
        mbase, base = n_maps, n_agents
        mpose = []
        for p, k in zip(poly, mt):
            h = math.atan2(p[10, 1] - p[0, 1], p[10, 0] - p[0, 0])
            c, s = math.cos(h), math.sin(h)
            d = p - p[0]
            feat = np.stack([c * d[:, 0] + s * d[:, 1], -s * d[:, 0] + c * d[:, 1]], 1).ravel().tolist()
            g["map_feat"].append(feat + [1.0 if k == j else 0.0 for j in range(3)])
            mpose.append((p[5, 0], p[5, 1], h))
        mpose = np.array(mpose).reshape(-1, 3)
        na = len(st)
        apose = np.zeros((na * T, 3))
        for a in range(na):
            x, y, h = st[a, 0, :3]
            for k in range(TOKENS):
                q = st[a, (k + 1) * SHIFT]
                tok, x, y, h = vocab.token_and_apply(int(ty[a]), x, y, h, q[0], q[1], q[2])
                if k < T:
                    g["token_in"].append(int(ty[a]) * vocab.v + tok)
                    g["weight"].append(1.0 / (na * T))
                    apose[a * T + k] = (x, y, h)
                if k > 0:
                    g["target"].append(tok)
        allm = list(range(len(mpose)))
        for d in allm:
            for s in nearest(mpose, mpose[d], allm, 20.0, kmap, d):
                e["map_map"][0].append(mbase + s), e["map_map"][1].append(mbase + d)
                e["map_map"][2].append(rel(mpose[s], mpose[d]))
        for a in range(na):
            for t in range(T):
                node = a * T + t
                for t2 in range(max(0, t - span), t):
                    e["temporal"][0].append(base + a * T + t2), e["temporal"][1].append(base + node)
                    e["temporal"][2].append(rel(apose[a * T + t2], apose[node]) + [t2 - t])
                for s in nearest(mpose, apose[node], allm, 30.0, kmap):
                    e["map_agent"][0].append(mbase + s), e["map_agent"][1].append(base + node)
                    e["map_agent"][2].append(rel(mpose[s], apose[node]))
                same = [b * T + t for b in range(na)]
                for s in nearest(apose, apose[node], same, 60.0, kagent, node):
                    e["agent_agent"][0].append(base + s), e["agent_agent"][1].append(base + node)
                    e["agent_agent"][2].append(rel(apose[s], apose[node]))
        n_agents += na * T
        n_maps += len(mpose)
    out = {"token_in": torch.tensor(g["token_in"]), "target": torch.tensor(g["target"]),
           "weight": torch.tensor(g["weight"], dtype=torch.float32),
           "map_feat": torch.tensor(g["map_feat"], dtype=torch.float32)}
    for k, (s, d, r) in e.items():
        out[k + "/src"], out[k + "/dst"] = torch.tensor(s), torch.tensor(d)
        out[k + "/rel"] = torch.tensor(r, dtype=torch.float32).reshape(len(s), -1)
    return out


def ours(build, data, weights, a, threads):
    sets = {"smart_hidden": a.hidden, "smart_heads": a.heads, "smart_map_layers": a.map_layers,
            "smart_agent_layers": a.agent_layers, "motion_vocab": a.vocab, "smart_freqs": a.freqs,
            "smart_map_neighbours": a.neighbours, "smart_agent_neighbours": a.neighbours,
            "batch_size": a.batch, "epochs": 1, "validation_fraction": 0, "log_every": 1000000,
            "output": weights, "metrics_file": weights + ".metrics.jsonl"}
    cmd = [os.path.join(build, "apps", "train"), os.path.join(ROOT, "inputs", "smart_quickstart.in"),
           "--set", f"data_file={data}"]
    for k, v in sets.items():
        cmd += ["--set", f"{k}={v}"]
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_PROC_BIND="false")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    # The summary record of the metrics file: samples/s unrounded (the log line rounds it).
    with open(weights + ".metrics.jsonl") as f:
        summary = [r for r in map(json.loads, f) if r.get("type") == "summary"][-1]
    # Samples per CPU-second of the whole process, setup included (a bound that favours the
    # reference), and of the training loop alone (the summary's `cpu_s`, first step included: the
    # same span as the reference's; None from a build older than that field).
    loop = float(summary["samples"]) / float(summary["cpu_s"]) if summary.get("cpu_s") else None
    return float(summary["samples_per_s"]), float(summary["samples"]) / cpu, loop


def reference(weights, data, a, threads):
    torch.set_num_threads(threads)
    with h5py.File(weights, "r") as w:
        # The weights file holds the parameters at its root, and the vocabulary under smart/.
        params = {k: torch.tensor(v, requires_grad=True) for k, v in smart_parity.datasets(w).items()
                  if not k.startswith("smart/")}
    model = smart_parity.Smart(params, a.hidden, a.heads)
    opt = torch.optim.AdamW(params.values(), lr=1e-3, weight_decay=1e-4)
    vocab = Vocab(a.vocab)
    with h5py.File(data, "r") as f:
        scenes = len(f["agent_type_offsets"]) - 1
        batches = [build_graph(f, range(i * a.batch, (i + 1) * a.batch), vocab, 6, a.neighbours, a.neighbours)
                   for i in range(min(a.steps, scenes // a.batch))]
    start, cpu_start = time.perf_counter(), time.process_time()
    for g in batches:
        logits = model.logits(g, a.map_layers, a.agent_layers)
        ce = F.cross_entropy(logits, g["target"], label_smoothing=0.1, reduction="none")
        opt.zero_grad()
        ((g["weight"] * ce).sum() / a.batch).backward()
        opt.step()
    n = len(batches) * a.batch
    return n / (time.perf_counter() - start), n / (time.process_time() - cpu_start)


def causal_ours(build, threads):
    """ms per forward + backward of perf/bench_causal_attention, by (n, L, D, heads): the best of 5
    repetitions' mean wall times (the PyTorch side takes its best of 10 steps)."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_PROC_BIND="false")
    out = subprocess.run([os.path.join(build, "perf", "bench_causal_attention"), "--benchmark_format=json",
                          "--benchmark_min_time=0.2", "--benchmark_repetitions=5"], env=env, capture_output=True, text=True, check=True).stdout
    res = {}
    for b in json.loads(out[out.index("{"):])["benchmarks"]:
        if b.get("run_type", "iteration") != "iteration":
            continue  # the aggregates (mean, median, stddev)
        args = tuple(int(part.split(":")[1]) for part in b["name"].split("/")[1:5])
        ms = b["real_time"] * {"ms": 1.0, "us": 1e-3, "ns": 1e-6}[b["time_unit"]]
        res[args] = min(res.get(args, ms), ms)
    return res


def causal_torch(n, L, D, heads, threads, repeats=10):
    """The same layer in PyTorch: q/k/v/out projections (to_k without bias), causal attention."""
    torch.set_num_threads(threads)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, L, D, generator=g, requires_grad=True)
    dy = torch.randn(n, L, D, generator=g)
    lin = [torch.nn.Linear(D, D, bias=(i != 1)) for i in range(4)]
    mask = torch.ones(L, L, dtype=torch.bool).tril()
    sdpa = getattr(F, "scaled_dot_product_attention", None)

    def step():
        q, k, v = (lin[i](x).view(n, L, heads, D // heads).transpose(1, 2) for i in range(3))
        if sdpa is not None:
            a = sdpa(q, k, v, is_causal=True)
        else:
            s = (q @ k.transpose(-1, -2)) / math.sqrt(D // heads)
            a = torch.softmax(s.masked_fill(~mask, float("-inf")), -1) @ v
        lin[3](a.transpose(1, 2).reshape(n, L, D)).backward(dy)

    for _ in range(3):
        step()
    best = []
    for _ in range(repeats):
        t = time.perf_counter()
        step()
        best.append(time.perf_counter() - t)
    return min(best) * 1e3, ("F.scaled_dot_product_attention" if sdpa is not None else
                             "explicit softmax(QK^T)V (torch %s has no scaled_dot_product_attention)" % torch.__version__)


def machine():
    model = next((line.split(":", 1)[1].strip() for line in subprocess.run(["lscpu"], capture_output=True,
                  text=True).stdout.splitlines() if line.startswith("Model name")), "unknown CPU")
    return model, os.cpu_count()


def load():
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--threads", default="1,2")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--map-layers", type=int, default=3)
    p.add_argument("--agent-layers", type=int, default=6)
    p.add_argument("--vocab", type=int, default=2048)
    p.add_argument("--freqs", type=int, default=64)
    p.add_argument("--neighbours", type=int, default=16)
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data, weights = os.path.join(tmp, "scenes.h5"), os.path.join(tmp, "weights.h5")
        subprocess.run([os.path.join(a.build, "apps", "trajgen"), data, "--scenes", str(a.batch * a.steps),
                        "--seed", "3"], check=True, capture_output=True)
        cpu, cores = machine()
        print(f"SMART (hidden {a.hidden}, {a.heads} heads, {a.map_layers} map + {a.agent_layers} agent layers, "
              f"vocab {a.vocab}), batch {a.batch}, {a.steps} steps, {a.repeats} repeats, "
              f"{time.strftime('%Y-%m-%d %H:%M')}, {cpu} ({cores} cores), torch {torch.__version__}")
        print(f"load before: {load()}", flush=True)
        print(f"{'threads':>7} {'ours samples/s (min-max)':>25} {'PyTorch samples/s (min-max)':>28} "
              f"{'ratio of medians':>17}", flush=True)
        threads = [int(x) for x in a.threads.split(",")]
        cpu_rows = []
        for t in threads:
            o, r, oc, rc, ol = [], [], [], [], []
            for _ in range(a.repeats):
                wall, cpu, loop = ours(a.build, data, weights, a, t)
                o.append(wall), oc.append(cpu)
                if loop is not None:
                    ol.append(loop)
                wall, cpu = reference(weights, data, a, t)
                r.append(wall), rc.append(cpu)
            mo, mr = sorted(o)[len(o) // 2], sorted(r)[len(r) // 2]
            print(f"{t:>7} {min(o):>12.3f} - {max(o):<10.3f} {min(r):>14.3f} - {max(r):<11.3f} {mo / mr:>17.2f}",
                  flush=True)
            cpu_rows.append((t, oc, rc, ol))
        # CPU time moves much less with the load than wall time: samples per CPU-second (user + sys),
        # ours for the whole process (setup included), the reference for its training loop.
        print("samples per CPU-second (ours: whole process, setup included; PyTorch: its training loop):")
        for t, oc, rc, _ in cpu_rows:
            mo, mr = sorted(oc)[len(oc) // 2], sorted(rc)[len(rc) // 2]
            print(f"{t:>7} {min(oc):>12.3f} - {max(oc):<10.3f} {min(rc):>14.3f} - {max(rc):<11.3f} {mo / mr:>17.2f}",
                  flush=True)
        # The fairer CPU figure: the training loops alone on both sides (ours without its setup).
        if all(ol for _, _, _, ol in cpu_rows):
            print("samples per CPU-second of the training loops alone (ours: the summary's cpu_s):")
            for t, _, rc, ol in cpu_rows:
                mo, mr = sorted(ol)[len(ol) // 2], sorted(rc)[len(rc) // 2]
                print(f"{t:>7} {min(ol):>12.3f} - {max(ol):<10.3f} {min(rc):>14.3f} - {max(rc):<11.3f} "
                      f"{mo / mr:>17.2f}", flush=True)
        print(f"load after: {load()}", flush=True)
        print("dense causal attention layer, forward + backward, ms (ours: perf/bench_causal_attention):")
        for t in threads:
            mine = causal_ours(a.build, t)
            for (n, L, D, h), ms in sorted(mine.items()):
                theirs, form = causal_torch(n, L, D, h, t)
                print(f"  threads {t}  n {n} L {L} D {D} heads {h}: ours {ms:.2f} ms, PyTorch {theirs:.2f} ms "
                      f"({form}), ratio {theirs / ms:.2f}", flush=True)
        print(f"load at the end: {load()}")


if __name__ == "__main__":
    main()
