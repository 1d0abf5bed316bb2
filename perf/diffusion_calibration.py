#!/usr/bin/env python3
"""The diffusion downscaler's ensemble calibration (docs/diffusion-results.md, "Ensemble calibration"): the
sampler re-implemented in PyTorch on hpctrain's exported weights (test/python/diffusion_torch.py), with
the variance choices apps/sample does not offer, scored as apps/sample scores (ensemble-mean RMSE, CRPS,
spread/skill); and (--linear) the least-squares linear regression of fine on context, the reference row
of the docs' tables.

usage: perf/diffusion_calibration.py WEIGHTS.h5 DATA.h5 [--rows N] [--members M] VARIANT...
         VARIANT: ddpm-small (posterior variance beta-tilde, as apps/sample), ddpm-large (beta),
                  ddimS-etaE (DDIM on S steps with eta E, e.g. ddim10-eta0, ddim10-eta1)
       perf/diffusion_calibration.py --linear TRAIN.h5 DATA.h5 [--columns K] (the first K context columns)
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "python"))
import diffusion_torch as dt  # noqa: E402  (puts Debian's torch first, as the tests do)
import h5py  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402


def load(path, rows=None):
    """context and fine; fine as absolute values also for a diffgen --anomaly file (its block mean added)."""
    with h5py.File(path, "r") as f:
        ctx, fine = f["context"][:rows].astype(np.float64), f["fine"][:rows].astype(np.float64)
        return ctx, fine + (ctx[:, :1] if "anomaly" in f.attrs else 0)


def linear(train, data, columns):
    (ct, ft), (cv, fv) = load(train), load(data)
    sel = slice(0, columns)
    a = np.hstack([np.ones((len(ct), 1)), ct[:, sel]])
    w, *_ = np.linalg.lstsq(a, ft, rcond=None)
    pred = np.hstack([np.ones((len(cv), 1)), cv[:, sel]]) @ w
    print(f"linear regression on {a.shape[1] - 1} context columns: RMSE {np.sqrt(((pred - fv) ** 2).mean()):.3f}; "
          f"copy RMSE {np.sqrt(((cv[:, :1] - fv) ** 2).mean()):.3f}")


@torch.no_grad()
def sample(net, cfg, c, members, kind, steps, eta, seed=1, clip=6.0):
    """Members for the normalised contexts c [N, n_context]: normalised fine [N * members, n_fine]."""
    T = cfg["steps"]
    beta, abar = dt.cosine_abar(T)
    g = torch.Generator().manual_seed(seed)
    c = c.repeat_interleave(members, 0)
    x = torch.randn(c.shape[0], cfg["n_fine"], generator=g, dtype=c.dtype)
    visit = list(range(T - 1, -1, -1)) if kind == "ddpm" else \
        [round(k * (T - 1) / (steps - 1)) for k in range(steps - 1, -1, -1)]
    for k, t in enumerate(visit):
        ab = float(abar[t])
        out = net(x, c, torch.full((c.shape[0],), float(t), dtype=c.dtype))
        x0 = ab ** 0.5 * x - (1 - ab) ** 0.5 * out if cfg["target"] == "v" else (x - (1 - ab) ** 0.5 * out) / ab ** 0.5
        x0 = x0.clamp(-clip, clip)
        if kind == "ddpm":  # Ho et al. 2020: posterior mean, variance beta-tilde (small) or beta (large)
            abp, b = (float(abar[t - 1]) if t > 0 else 1.0), float(beta[t])
            x = abp ** 0.5 * b / (1 - ab) * x0 + (1 - b) ** 0.5 * (1 - abp) / (1 - ab) * x
            var = b * (1 - abp) / (1 - ab) if eta == "small" else b
            if t > 0:
                x = x + var ** 0.5 * torch.randn(x.shape, generator=g, dtype=x.dtype)
        else:  # Song et al. 2021, eq. 12 and 16
            abp = float(abar[visit[k + 1]]) if k + 1 < len(visit) else 1.0
            eps = (x - ab ** 0.5 * x0) / (1 - ab) ** 0.5
            sig = eta * ((1 - abp) / (1 - ab) * (1 - ab / abp)) ** 0.5
            x = abp ** 0.5 * x0 + max(1 - abp - sig ** 2, 0.0) ** 0.5 * eps
            if sig > 0:
                x = x + sig * torch.randn(x.shape, generator=g, dtype=x.dtype)
    return x


def scores(ens, y):
    """apps/sample's: ensemble-mean RMSE, the ensemble CRPS estimator, spread/skill (unbiased variance)."""
    mean = ens.mean(1)
    rmse = np.sqrt(((mean - y) ** 2).mean())
    crps = np.abs(ens - y[:, None]).mean(1) - np.abs(ens[:, :, None] - ens[:, None, :]).mean((1, 2)) / 2
    return rmse, crps.mean(), np.sqrt(ens.var(1, ddof=1).mean()) / rmse


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("weights")
    ap.add_argument("data")
    ap.add_argument("variants", nargs="*")
    ap.add_argument("--rows", type=int)
    ap.add_argument("--members", type=int, default=16)
    ap.add_argument("--linear", action="store_true", help="WEIGHTS is the training file: linear regression")
    ap.add_argument("--columns", type=int)
    a = ap.parse_intermixed_args()
    if a.linear:
        return linear(a.weights, a.data, a.columns)
    torch.set_num_threads(1)
    net, cfg = dt.load(a.weights, torch.float32)
    with h5py.File(a.weights, "r") as f:
        cm, cs, fm, fs = (f["normalisation/" + k][...] for k in ("context_mean", "context_std", "fine_mean", "fine_std"))
        skip = (f["linear_skip/weight"][...].reshape(len(fm), len(cm)), f["linear_skip/bias"][...]) \
            if cfg.get("diffusion_linear_skip") else None
    ctx, fine = load(a.data, a.rows)
    c = torch.tensor((ctx - cm) / cs, dtype=torch.float32)
    c_net = c[:, :c.shape[1] - cfg.get("static_columns", 0)]  # Note [statics to the linear skip only]
    for v in a.variants:
        kind, rest = v.split("-", 1)
        if kind == "ddpm":
            x = sample(net, cfg, c_net, a.members, "ddpm", 0, rest)
        else:
            x = sample(net, cfg, c_net, a.members, "ddim", int(kind[4:]), float(rest[3:]))
        ens = x.double().numpy().reshape(len(fine), a.members, -1) * fs + fm
        if skip is not None:  # Note [linear skip]: the linear map of the context added back
            ens += (fs * (skip[1] + ((ctx - cm) / cs) @ skip[0].T))[:, None, :]
        if cfg.get("anomaly"):  # Note [anomaly targets]: the members' absolute values, as apps/sample's
            ens += ctx[:, None, :1]
        print("%-14s %d contexts: RMSE %.3f  CRPS %.3f  spread/skill %.2f" % ((v, len(fine)) + scores(ens, fine)),
              flush=True)


if __name__ == "__main__":
    main()
