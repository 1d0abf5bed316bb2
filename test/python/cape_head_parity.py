#!/usr/bin/env python3
"""PyTorch parity of the cape matching head (models/cape/cape_head.hpp): reads cape_head_parity.h5
(test_cape's HeadParityDump: random support and query feature maps, keypoints with some invisible,
our predictions, softmax maps, per-episode losses and the gradients of the feature maps), runs the
same arithmetic in torch (Gaussian heatmap pooling, scaled dot-product similarity, softmax,
soft-argmax, L1 + heatmap MSE over the keypoints visible in both images) with autograd for the
gradients, in float32 and in float64, and checks ours against both within 1e-5 (max abs difference
over each tensor, relative to its largest magnitude). Exits 77 (ctest: skipped) without torch or h5py."""
import sys

try:
    import h5py
    import numpy as np
    import torch
except Exception as e:
    print(f"SKIPPED: cape head parity needs torch and h5py ({type(e).__name__}: {e})")
    sys.exit(77)

TOL = 1e-5


def head(fs, fq, kps, kpq, sigma, scale, w_hm, dtype):
    fs = torch.tensor(fs, dtype=dtype, requires_grad=True)
    fq = torch.tensor(fq, dtype=dtype, requires_grad=True)
    kps, kpq = torch.tensor(kps, dtype=dtype), torch.tensor(kpq, dtype=dtype)
    n, d, h, w = fs.shape
    # Cell centres in cells and normalised; Gaussians in cells, normalised to sum 1 over the map.
    py, px = torch.meshgrid(torch.arange(h, dtype=dtype) + 0.5, torch.arange(w, dtype=dtype) + 0.5, indexing="ij")
    cx, cy = (px / w).reshape(-1), (py / h).reshape(-1)

    def gauss(kp):
        dx = px.reshape(1, 1, -1) - kp[..., 0:1] * w
        dy = py.reshape(1, 1, -1) - kp[..., 1:2] * h
        g = torch.exp(-(dx * dx + dy * dy) / (2 * sigma * sigma))
        return g / g.sum(-1, keepdim=True)

    a, target = gauss(kps), gauss(kpq)                          # [n, K, P]
    f = torch.einsum("nkp,ndp->nkd", a, fs.reshape(n, d, -1))    # pooled support features
    s = scale * torch.einsum("nkd,ndp->nkp", f, fq.reshape(n, d, -1))
    prob = torch.softmax(s, -1)
    pred = torch.stack([(prob * cx).sum(-1), (prob * cy).sum(-1)], -1)
    vis = kps[..., 2] * kpq[..., 2]
    m = (vis > 0).sum(-1, keepdim=True).clamp(min=1)
    l1 = (pred - kpq[..., :2]).abs().sum(-1)
    mse = ((prob - target) ** 2).sum(-1)
    loss = (vis * (l1 + w_hm * mse) / m).sum(-1)                 # per episode
    return fs, fq, pred, prob, loss


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "cape_head_parity.h5"
    with h5py.File(path, "r") as f:
        a = {k: f.attrs[k] for k in ("sigma", "heatmap_weight", "scale", "normaliser")}
        fs, fq, kps, kpq = (f[k][()] for k in ("fs", "fq", "kp_support", "kp_query"))
        ours = {k: f["ours/" + k][()] for k in ("pred", "prob", "loss", "dfs", "dfq")}
    worst = 0.0
    for dtype in (torch.float32, torch.float64):
        tfs, tfq, pred, prob, loss = head(fs, fq, kps, kpq, float(a["sigma"]), float(a["scale"]),
                                          float(a["heatmap_weight"]), dtype)
        (loss.sum() / float(a["normaliser"])).backward()
        theirs = {"pred": pred, "prob": prob.reshape(ours["prob"].shape), "loss": loss, "dfs": tfs.grad,
                  "dfq": tfq.grad}
        for k, t in theirs.items():
            t = t.detach().double().numpy()
            err = float(np.abs(ours[k] - t).max() / max(np.abs(t).max(), 1e-30))
            worst = max(worst, err)
            print(f"cape head parity ({str(dtype)[6:]}): {k:5s} max |ours - torch| / max |torch| = {err:.2e}")
            assert err <= TOL, f"{k}: {err:.2e} > {TOL}"
    print(f"cape head parity: worst {worst:.2e} (at most {TOL})")


if __name__ == "__main__":
    main()
