#!/usr/bin/env python3
"""Network weights through safetensors into PyTorch: converts the weights files that test_convert
wrote (an mlp and the diffusion denoiser, written as train writes them) with build/apps/convert,
loads them with safetensors.torch.load_file into PyTorch modules with strict load_state_dict, and
checks that (1) every tensor equals the HDF5 dataset bit for bit, (2) the metadata carries the
model, config and extra datasets, (3) the modules reproduce our forward outputs (1e-5 relative, as
the other parity tests: float32 GEMMs in a different order). Exits 77 (ctest: skipped) when torch,
h5py or safetensors cannot be imported.

usage: safetensors_parity.py CONVERT_BINARY DIR   (DIR holds convert_{mlp,diffusion}.{weights,batch}.h5)"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import h5py
    import numpy as np
    import torch
    from safetensors import safe_open
    from safetensors.torch import load_file
    from diffusion_torch import Denoiser
except Exception as e:  # ImportError, or a numpy ABI mismatch in a broken install
    print(f"SKIPPED: needs torch, h5py and safetensors ({type(e).__name__}: {e}); "
          "install them with scripts/setup --reference")
    sys.exit(77)

RTOL = 1e-5
ACTIVATIONS = {"relu": torch.nn.ReLU, "gelu": torch.nn.GELU, "silu": torch.nn.SiLU, "tanh": torch.nn.Tanh}
failures = []


class Mlp(torch.nn.Module):
    """hpctrain's mlp: Linear layers fc0, fc1, ... with the activation between them."""

    def __init__(self, d_in, hidden, d_out, activation):
        super().__init__()
        dims = [d_in] + hidden + [d_out]
        self.n = len(dims) - 1
        for i in range(self.n):
            self.add_module(f"fc{i}", torch.nn.Linear(dims[i], dims[i + 1]))
        self.act = ACTIVATIONS[activation]()

    def forward(self, x):
        for i in range(self.n):
            x = getattr(self, f"fc{i}")(x)
            if i + 1 < self.n:
                x = self.act(x)
        return x


# Today's stored keys (the deck's names, Note [stored configuration]) -> the names used below; files
# written before use the names below already.
CONFIG_KEYS = {"hidden_sizes": "hidden", "time_embedding_dim": "time_dim", "diffusion_hidden": "hidden",
               "diffusion_depth": "depth", "diffusion_steps": "steps", "noise_schedule": "schedule",
               "diffusion_target": "target"}


def config(text):
    cfg = dict(kv.split("=", 1) for kv in text.split())
    return {CONFIG_KEYS.get(k, k): v for k, v in cfg.items()}


def check(name, ok, detail):
    print(f"{name}: {detail} {'ok' if ok else 'FAIL'}")
    if not ok:
        failures.append(name)


def rel_err(ours, ref):
    ours, ref = np.asarray(ours, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    return float(np.linalg.norm(ours - ref) / max(np.linalg.norm(ref), 1e-30))


def convert(convert_bin, weights):
    out = weights.replace(".weights.h5", ".safetensors")
    r = subprocess.run([convert_bin, "--to", "safetensors", weights, out], capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout, r.stderr)
        raise SystemExit(f"FAILED: convert --to safetensors {weights} exited {r.returncode}")
    return out


def common_checks(family, weights, path, module):
    state = load_file(path)
    module.load_state_dict(state, strict=True)  # raises on a missing or unexpected name, or a shape
    with h5py.File(weights, "r") as f:
        exact = all(np.array_equal(state[k].numpy(), np.asarray(f[k.replace(".", "/")]))
                    and state[k].dtype == torch.float32 for k in state)
        with safe_open(path, "pt") as st:
            meta = st.metadata()
        attrs = {k: (v.decode() if isinstance(v, bytes) else str(v)) for k, v in f.attrs.items()}
        check(f"{family} tensors", exact, f"{len(state)} float32 tensors equal to the HDF5 datasets:")
        check(f"{family} metadata", meta.get("hpctrain.model") == family and
              meta.get("hpctrain.config") == attrs["config"], f"model {meta.get('hpctrain.model')!r}, config:")
        extras = json.loads(meta.get("hpctrain.extras", "{}"))
        want = {k: np.asarray(f[k]) for k in ("normalisation/context_mean", "normalisation/fine_std")
                if k in f}
        check(f"{family} extras", all(np.array_equal(np.array(extras[k]), v) for k, v in want.items()),
              f"{len(extras)} extra datasets in the metadata:")
    return meta


def main(convert_bin, folder):
    torch.set_num_threads(1)
    weights = os.path.join(folder, "convert_mlp.weights.h5")
    path = convert(convert_bin, weights)
    with h5py.File(weights, "r") as f:
        cfg = config(f.attrs["config"] if isinstance(f.attrs["config"], str) else f.attrs["config"].decode())
    mlp = Mlp(int(cfg["d_in"]), [int(h) for h in cfg["hidden"].split(",")], int(cfg["d_out"]), cfg["activation"])
    common_checks("mlp", weights, path, mlp)
    with h5py.File(os.path.join(folder, "convert_mlp.batch.h5"), "r") as f:
        x, y = torch.tensor(np.asarray(f["x"])), np.asarray(f["y"])
    with torch.no_grad():
        e = rel_err(y, mlp(x).numpy())
    check("mlp predictions", e <= RTOL, f"relative error {e:.2e} against our forward:")

    weights = os.path.join(folder, "convert_diffusion.weights.h5")
    path = convert(convert_bin, weights)
    with h5py.File(weights, "r") as f:
        cfg = config(f.attrs["config"] if isinstance(f.attrs["config"], str) else f.attrs["config"].decode())
    net = Denoiser(int(cfg["n_context"]), int(cfg["n_fine"]), int(cfg["time_dim"]), int(cfg["hidden"]),
                   int(cfg["depth"]))
    common_checks("diffusion", weights, path, net)
    with h5py.File(os.path.join(folder, "convert_diffusion.batch.h5"), "r") as f:
        xt, c, t = (torch.tensor(np.asarray(f[k])) for k in ("x_t", "c", "t"))
        eps = np.asarray(f["eps_hat"])
    with torch.no_grad():
        e = rel_err(eps, net(xt, c, t).numpy())
    check("diffusion predictions", e <= RTOL, f"relative error {e:.2e} against our forward:")

    if failures:
        print(f"FAILED: {', '.join(failures)}")
        return 1
    print(f"PyTorch {torch.__version__}: the safetensors files load into the modules and give our outputs")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
