"""PyTorch twin of hpctrain's diffusion denoiser (src/models/diffusion_net.hpp), for parity tests and
the speed comparison. Attribute names match the HDF5 weight names ("time_mlp/weight" -> time_mlp.weight)."""
import math
import sys

# Debian's torch and h5py are built against Debian's numpy; a newer numpy in /usr/local must not shadow
# it when Debian's interpreter runs this directly. A venv (the reference or the comparison one) brings
# its own torch and numpy.
if sys.prefix == sys.base_prefix:
    sys.path.insert(0, "/usr/lib/python3/dist-packages")

import torch  # noqa: E402
from torch import nn  # noqa: E402


def sinusoidal(t, dim):
    half = dim // 2
    w = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float64) / half).to(t.dtype)
    a = t[:, None] * w[None, :]
    return torch.cat([torch.sin(a), torch.cos(a)], dim=1)


class Denoiser(nn.Module):
    def __init__(self, n_context=7, n_fine=256, time_dim=32, hidden=256, depth=2):
        super().__init__()
        self.time_dim = time_dim
        self.time_mlp = nn.Linear(time_dim, hidden)
        self.context_mlp = nn.Linear(n_context, hidden)
        self.input_proj = nn.Linear(n_fine, hidden)
        self.hidden = [nn.Linear(hidden, hidden) for _ in range(depth)]
        for k, layer in enumerate(self.hidden):
            self.add_module(f"hidden{k}", layer)
        self.output = nn.Linear(hidden, n_fine)

    def forward(self, x_t, c, t):
        act = nn.functional.silu
        t_emb = act(self.time_mlp(sinusoidal(t, self.time_dim)))
        c_emb = act(self.context_mlp(c))
        h = act(self.input_proj(x_t) + c_emb + t_emb)
        for layer in self.hidden:
            h = act(layer(h))
        return self.output(h)


# The stored configuration's keys (models/registry.hpp, Note [stored configuration]) -> ours.
CONFIG_KEYS = {"n_context": "n_context", "n_fine": "n_fine", "time_embedding_dim": "time_dim",
               "diffusion_hidden": "hidden", "diffusion_depth": "depth", "diffusion_steps": "steps",
               "noise_schedule": "schedule", "diffusion_target": "target"}


def parse_config(text):
    cfg = dict(kv.split("=", 1) for kv in text.split())
    cfg = {CONFIG_KEYS.get(k, k): v for k, v in cfg.items()}  # files from before use our names already
    flags = {"true": 1, "false": 0}  # boolean keys (anomaly, Note [anomaly targets])
    return {k: (v if k in ("schedule", "target") else flags[v] if v in flags else int(v)) for k, v in cfg.items()}


def load(path, dtype=torch.float64):
    """Denoiser with the weights of an hpctrain HDF5 file, plus its config dict."""
    import h5py
    with h5py.File(path, "r") as f:
        cfg = parse_config(f.attrs["config"] if isinstance(f.attrs["config"], str) else f.attrs["config"].decode())
        n_net = cfg["n_context"] - cfg.get("static_columns", 0)  # Note [statics to the linear skip only]
        net = Denoiser(n_net, cfg["n_fine"], cfg["time_dim"], cfg["hidden"], cfg["depth"]).to(dtype)
        state = {}
        for name, _ in net.named_parameters():
            state[name] = torch.tensor(f[name.replace(".", "/")][...], dtype=dtype)
        net.load_state_dict(state)
    return net, cfg


def cosine_abar(T, s=0.008, max_beta=0.999):
    f = lambda u: math.cos((u / T + s) / (1 + s) * math.pi / 2) ** 2  # noqa: E731
    betas = [min(1 - f(i + 1) / f(i), max_beta) for i in range(T)]
    abar, p = [], 1.0
    for b in betas:
        p *= 1 - b
        abar.append(p)
    return torch.tensor(betas, dtype=torch.float64), torch.tensor(abar, dtype=torch.float64)
