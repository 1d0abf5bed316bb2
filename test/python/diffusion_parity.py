"""Parity of hpctrain's diffusion denoiser with PyTorch (float64): loads the HDF5 weights and a batch
written by test_diffusion_parity, recomputes eps_hat, the MSE loss and every parameter gradient, and
compares them with hpctrain's values. Exit codes: 0 pass, 1 mismatch, 77 torch/h5py unavailable (skip)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import diffusion_torch as dt
    import h5py
    import torch
except Exception as e:  # noqa: BLE001 - any import failure means "cannot run here"
    print(f"SKIP: PyTorch or h5py not importable ({e})")
    sys.exit(77)

TOL = 1e-5


def compare(name, ours, ref):
    ours = torch.as_tensor(ours, dtype=torch.float64)
    ref = ref.detach().to(torch.float64)
    if tuple(ours.shape) != tuple(ref.shape):
        print(f"FAIL {name}: shape {tuple(ours.shape)} vs torch {tuple(ref.shape)}")
        return False
    err = (ours - ref).abs().max().item()
    scale = max(ref.abs().max().item(), 1e-30)
    ok = err <= TOL * scale
    print(f"{'ok  ' if ok else 'FAIL'} {name:24s} max|diff| {err:.3e}  max|torch| {scale:.3e}  rel {err / scale:.2e}")
    return ok


def main(weights, batch):
    net, _ = dt.load(weights, torch.float64)
    with h5py.File(batch, "r") as f:
        x_t = torch.tensor(f["x_t"][...], dtype=torch.float64)
        c = torch.tensor(f["c"][...], dtype=torch.float64)
        t = torch.tensor(f["t"][...], dtype=torch.float64)
        eps = torch.tensor(f["eps"][...], dtype=torch.float64)
        eps_hat = f["eps_hat"][...]
        loss = f["loss"][...]
        grads = {name: f["grad/" + name.replace(".", "/")][...] for name, _ in net.named_parameters()}
    out = net(x_t, c, t)
    ref_loss = torch.nn.functional.mse_loss(out, eps)
    ref_loss.backward()
    ok = compare("eps_hat", eps_hat, out)
    ok &= compare("loss", loss.reshape(()), ref_loss)
    for name, p in net.named_parameters():
        ok &= compare("grad " + name, grads[name], p.grad)
    print("PASS" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print("usage: diffusion_parity.py WEIGHTS.h5 BATCH.h5")
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
