#!/usr/bin/env python3
"""Training speed on one GPU, ours (a bundle of scripts/gpu-bundle, `device gpu`) against the same
models in PyTorch on the same GPU, with the settings of the CPU comparisons: seed 000's denoiser
(perf/compare_diffusion.py), ResNet-18 (perf/compare_cnn.py), SMART-tiny (perf/compare_smart.py) and
the seed-001 GNN (perf/compare_gnn.py). The PyTorch models are theirs (test/python/*), moved to the
device; cuDNN autotuning on (as our `conv_algorithm cudnn` plans are tuned). Writes a JSON table.

  python3 perf/gpu_compare.py --bundle DIR --out timings.json [--cases diffusion,resnet18,smart,gnn]
                              [--device cuda] [--repeats 2]

Ours: samples/s of the metrics file's step records after the first window (median). PyTorch:
samples/s over timed steps after warm-up steps, torch.cuda.synchronize() before each clock read.
Each case runs ours and PyTorch alternately --repeats times (min-max of each and of the ratio). A case
that fails is reported with its error and the others still run. Not a test: timings only."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [os.path.join(ROOT, "test", "python"), HERE]

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

DEV = "cuda"
OURS_DEVICE = "gpu"  # --ours-device cpu with --device cpu: the whole script on a host (a smoke test)


def sync():
    if DEV.startswith("cuda"):
        torch.cuda.synchronize()


def timed(step, steps, warm=3):
    for _ in range(warm):
        step()
    sync()
    t = time.perf_counter()
    for _ in range(steps):
        step()
    sync()
    return time.perf_counter() - t


def ours(bundle, deck, sets, work):
    """Median samples/s of our step records after the first (a GPU run from the bundle)."""
    metrics = os.path.join(work, "ours.jsonl")
    if os.path.exists(metrics):
        os.remove(metrics)
    cmd = [os.path.join(bundle, "train"), os.path.join("inputs", deck), "--set", f"device={OURS_DEVICE}", "--set",
           f"metrics_file={metrics}", "--set", f"output={work}/ours.out", "--set", "checkpoint_dir="]
    for k, v in sets.items():
        cmd += ["--set", f"{k}={v}"]
    run = subprocess.run(cmd, cwd=bundle, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"train exit {run.returncode}: {run.stderr.strip()[-600:]}")
    rates = [r["samples_per_s"] for r in map(json.loads, open(metrics)) if r.get("type") == "step"]
    if not rates:
        raise RuntimeError("no step records")
    return statistics.median(rates[1:] if len(rates) > 2 else rates)


def diffusion(bundle, work, batch=16, steps=400):
    """Seed 000's denoiser (inputs/diffusion_seed000.in): hidden 256, depth 2, 50 steps, AdamW."""
    import diffusion_torch as dt
    window = 25
    sets = {"data_file": "data/downscaling.h5", "batch_size": batch, "epochs": -(-steps * batch // 2000),
            "log_every": window, "validation_fraction": 0}
    mine = ours(bundle, "diffusion_seed000.in", sets, work)
    c, y = torch.randn(2000, 7, device=DEV), torch.randn(2000, 256, device=DEV)
    _, abar = dt.cosine_abar(50)
    sa, sb = abar.sqrt().float().to(DEV), (1 - abar).sqrt().float().to(DEV)
    net = dt.Denoiser().to(DEV)
    opt = torch.optim.AdamW(net.parameters(), lr=1e-3, weight_decay=0.01)

    def step():
        idx = torch.randint(0, 2000, (batch,), device=DEV)
        t = torch.randint(0, 50, (batch,), device=DEV)
        eps = torch.randn(batch, 256, device=DEV)
        x_t = sa[t, None] * y[idx] + sb[t, None] * eps
        loss = F.mse_loss(net(x_t, c[idx], t.float()), eps)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return mine, steps * batch / timed(step, steps), f"batch {batch}, hidden 256, depth 2"


def resnet18(bundle, work, batch=32, steps=30):
    """ResNet-18 at torchvision's width 64, imagenet stem, 10 classes, 64x64 images (compare_cnn.py)."""
    from resnet_parity import ResNet
    torch.backends.cudnn.benchmark = True
    sets = {"data_file": "data/images64.h5", "data_format": "hdf5_images", "validation_file": "",
            "validation_fraction": 0, "resnet_width": 64, "resnet_stem": "imagenet", "num_classes": 10,
            "batch_size": batch, "epochs": 8, "log_every": 2, "warmup_steps": 0,
            "conv_algorithm": "cudnn" if OURS_DEVICE == "gpu" else "onednn"}
    mine = ours(bundle, "resnet_digits.in", sets, work)
    model = ResNet(18, 64, 10, 3, False).to(DEV)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
    x, y = torch.rand(batch, 3, 64, 64, device=DEV), torch.randint(0, 10, (batch,), device=DEV)

    def step():
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return mine, steps * batch / timed(step, steps), f"batch {batch}, 64x64, width 64, cuDNN"


def smart(bundle, work, batch=8):
    """SMART-tiny (hidden 128, 8 heads, 3 map and 6 agent layers, vocab 2048), compare_smart.py's
    functional reference on our run's weights and the same scenes' token graphs."""
    import compare_smart as cs
    import h5py
    a = argparse.Namespace(hidden=128, heads=8, map_layers=3, agent_layers=6, vocab=2048, freqs=64, neighbours=16,
                           batch=batch, steps=5)
    weights = os.path.join(work, "smart.weights.h5")
    sets = {"data_file": "data/scenes.h5", "smart_hidden": a.hidden, "smart_heads": a.heads,
            "smart_map_layers": a.map_layers, "smart_agent_layers": a.agent_layers, "motion_vocab": a.vocab,
            "smart_freqs": a.freqs, "smart_map_neighbours": a.neighbours, "smart_agent_neighbours": a.neighbours,
            "batch_size": batch, "epochs": 3, "validation_fraction": 0, "log_every": 1}
    mine = ours(bundle, "smart_quickstart.in", sets, work)
    sets.update(epochs=1, output=weights)
    ours(bundle, "smart_quickstart.in", sets, work)  # the weights the reference starts from
    with h5py.File(weights, "r") as w:
        params = {k: torch.tensor(v).to(DEV).requires_grad_() for k, v in cs.smart_parity.datasets(w).items()
                  if not k.startswith("smart/")}
    model = cs.smart_parity.Smart(params, a.hidden, a.heads)
    opt = torch.optim.AdamW(params.values(), lr=1e-3, weight_decay=1e-4)
    vocab = cs.Vocab(a.vocab)
    with h5py.File(os.path.join(bundle, "data", "scenes.h5"), "r") as f:
        scenes = len(f["agent_type_offsets"]) - 1
        graphs = [cs.build_graph(f, range(i * batch, (i + 1) * batch), vocab, 6, a.neighbours, a.neighbours)
                  for i in range(min(a.steps, scenes // batch))]
    graphs = [{k: v.to(DEV) if torch.is_tensor(v) else v for k, v in g.items()} for g in graphs]
    i = [0]

    def step():
        g = graphs[i[0] % len(graphs)]
        i[0] += 1
        ce = F.cross_entropy(model.logits(g, a.map_layers, a.agent_layers), g["target"], label_smoothing=0.1,
                             reduction="none")
        opt.zero_grad()
        ((g["weight"] * ce).sum() / batch).backward()
        opt.step()
    steps = 4 * len(graphs)
    return mine, steps * batch / timed(step, steps), f"SMART-tiny, batch {batch}"


def gnn(bundle, work, batch=8, steps=8, latent=256, layers=12):
    """The seed-001 GNN (latent 256, 12 layers, batch 8) on a 24 x 18 wxgen region (compare_gnn.py)."""
    import gnn_torch
    sets = {"data_file": "data/wx_seed001.nc", "epochs": 1, "validation_fraction": 0, "data_cache": "memory",
            "log_every": 1, "prefetch_epoch": "false"}
    mine = ours(bundle, "gnn_seed001.in", sets, work)
    graph = gnn_torch.build_mesh_graph(18, 24)
    graph = {k: (tuple(t.to(DEV) for t in v) if isinstance(v, tuple) else v.to(DEV) if torch.is_tensor(v) else v)
             for k, v in graph.items()}
    S, d_in = 4, 2 * 4 + 1 + 1
    P = {k: v.to(DEV).requires_grad_() for k, v in gnn_torch.init_params(d_in, S, latent, layers).items()}
    opt = torch.optim.AdamW(P.values(), lr=1e-4)
    x = torch.randn(batch * graph["N"], d_in, device=DEV)
    t = torch.randn(batch * graph["N"], S, device=DEV)
    torch.set_default_device(DEV)  # gnn_torch's scatter buffers are made inside forward()

    def step():
        opt.zero_grad()
        loss = ((gnn_torch.forward(P, graph, x, batch, layers) - t) ** 2).mean()
        loss.backward()
        opt.step()
    try:
        rate = steps * batch / timed(step, steps, warm=2)
    finally:
        torch.set_default_device("cpu")
    return mine, rate, f"latent {latent}, {layers} layers, batch {batch}, 24 x 18 region"


CASES = {"diffusion": diffusion, "resnet18": resnet18, "smart": smart, "gnn": gnn}


def main():
    global DEV, OURS_DEVICE
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundle", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--ours-device", default="gpu", help="our `device` key (cpu: a smoke test on a host)")
    ap.add_argument("--repeats", type=int, default=2)
    a = ap.parse_args()
    DEV, OURS_DEVICE = a.device, a.ours_device
    bundle = os.path.abspath(a.bundle)
    name = torch.cuda.get_device_name(0) if DEV.startswith("cuda") else "cpu"
    result = {"torch": torch.__version__, "device": name, "cases": []}
    span = lambda v: f"{min(v):.0f}-{max(v):.0f}" if len(v) > 1 else f"{v[0]:.0f}"
    for case in a.cases.split(","):
        row = {"name": case}
        try:
            mine, theirs = [], []
            with tempfile.TemporaryDirectory() as work:
                for _ in range(a.repeats):
                    m, t, row["settings"] = CASES[case](bundle, work)
                    mine.append(m)
                    theirs.append(t)
            ratios = [m / t for m, t in zip(mine, theirs)]
            row.update(ours=span(mine), torch=span(theirs),
                       ratio=f"{min(ratios):.2f}-{max(ratios):.2f}" if len(ratios) > 1 else f"{ratios[0]:.2f}")
        except Exception as e:  # one case's failure is reported; the others still run
            row["error"] = f"{type(e).__name__}: {e}"
            row["ratio"] = "error"
            traceback.print_exc()
        print(json.dumps(row), flush=True)
        result["cases"].append(row)
        with open(a.out, "w") as f:  # after each case: a stage stopped by its time limit keeps the rest
            json.dump(result, f, indent=1)
    return 1 if any("error" in r for r in result["cases"]) else 0


if __name__ == "__main__":
    sys.exit(main())
