#!/usr/bin/env python3
"""PyTorch parity for every layer and loss: loads the HDF5 files written by test_layer_parity_dump
(see test/nn/layer_parity_case.hpp for the layout), rebuilds each layer in torch on the same
parameters and inputs, runs L = sum(y * probe) backward, and checks our forward output, input
gradients and parameter gradients within 1e-5 relative (fp32). Exits 77 (ctest: skipped) with a
message when torch or h5py is not installed."""
import sys

try:
    import h5py
    import numpy as np
    import torch
    import torch.nn.functional as F
    import smart_torch
except Exception as e:  # ImportError, or a numpy ABI mismatch (ValueError) in a broken install
    print(f"SKIPPED: PyTorch layer parity needs torch and h5py ({type(e).__name__}: {e}); "
          "install them with scripts/setup --reference")
    sys.exit(77)

from parity_report import check_files, rel_err  # noqa: E402

RTOL = 1e-5
ACTIVATIONS = {"identity": lambda z: z, "relu": F.relu, "gelu": F.gelu, "silu": F.silu, "tanh": torch.tanh}


def text(f, key):
    v = f.attrs[key]
    return v.decode() if isinstance(v, bytes) else str(v)


def module_with(f, cls, *args, **kwargs):
    """A torch module whose parameters are the file's layer/<name> datasets."""
    m = cls(*args, **kwargs)
    with torch.no_grad():
        for name, p in m.named_parameters():
            p.copy_(torch.tensor(np.array(f["layer"][name])))
    return m


def build(f, kind, xs):
    """The torch forward of one case: returns (y, module or None)."""
    index = torch.tensor(np.array(f["input/index"])).long() if "input/index" in f else None
    target = torch.tensor(np.array(f["input/target"])) if "input/target" in f else None
    if kind == "linear":
        w = np.array(f["layer/weight"])
        m = module_with(f, torch.nn.Linear, w.shape[1], w.shape[0])
        return ACTIVATIONS[text(f, "activation")](m(xs[0])), m
    if kind == "activation":
        return ACTIVATIONS[text(f, "activation")](xs[0]), None
    if kind == "add":
        return ACTIVATIONS[text(f, "activation")](sum(xs)), None
    if kind == "layer_norm":
        d = xs[0].shape[-1]
        m = module_with(f, torch.nn.LayerNorm, d, eps=float(f.attrs["eps"]))
        return m(xs[0]), m
    if kind == "embedding":
        w = np.array(f["layer/weight"])
        m = module_with(f, torch.nn.Embedding, w.shape[0], w.shape[1])
        return m(index), m
    if kind == "gather":
        return xs[0].index_select(0, index), None
    if kind == "scatter_add":
        rows = int(f.attrs["rows"])
        return torch.zeros(rows, xs[0].shape[1]).index_add_(0, index, xs[0]), None
    if kind == "concat":
        return torch.cat(xs, dim=1), None
    if kind == "dropout":
        mask = torch.tensor(np.array(f["input/mask"]))
        return xs[0] * mask / (1.0 - float(f.attrs["p"])), None
    if kind == "conv2d":
        w = np.array(f["layer/weight"])
        groups = int(f.attrs["groups"])
        m = module_with(f, torch.nn.Conv2d, w.shape[1] * groups, w.shape[0], w.shape[2],
                        stride=int(f.attrs["stride"]), padding=int(f.attrs["padding"]),
                        dilation=int(f.attrs["dilation"]), groups=groups, bias="layer/bias" in f)
        return m(xs[0]), m
    if kind == "batch_norm2d":  # training mode: batch statistics, running statistics updated
        m = module_with(f, torch.nn.BatchNorm2d, xs[0].shape[1], eps=float(f.attrs["eps"]),
                        momentum=float(f.attrs["momentum"]))
        return m(xs[0]), m
    if kind == "max_pool2d":
        return F.max_pool2d(xs[0], int(f.attrs["kernel"]), int(f.attrs["stride"]), int(f.attrs["padding"])), None
    if kind == "global_avg_pool":
        return F.adaptive_avg_pool2d(xs[0], 1).flatten(1), None
    if kind == "resize_bilinear":
        size = (int(f.attrs["out_h"]), int(f.attrs["out_w"]))
        return F.interpolate(xs[0], size=size, mode="bilinear", align_corners=False), None
    if kind == "mse":
        return torch.nn.MSELoss()(xs[0], target).reshape(1, 1), None
    if kind == "cross_entropy":
        loss = torch.nn.CrossEntropyLoss(label_smoothing=float(f.attrs["label_smoothing"]))
        return loss(xs[0], target[:, 0].long()).reshape(1, 1), None
    if kind == "bce":
        return torch.nn.BCEWithLogitsLoss()(xs[0], target).reshape(1, 1), None
    if kind in smart_torch.KINDS:
        return smart_torch.build_layer(f, kind, xs)
    raise ValueError(f"unknown layer kind '{kind}'")


def check(path):
    with h5py.File(path, "r") as f:
        kind = text(f, "kind")
        xs = []
        while f"input/x{len(xs)}" in f:
            xs.append(torch.tensor(np.array(f[f"input/x{len(xs)}"]), requires_grad=True))
        y, module = build(f, kind, xs)
        probe = torch.tensor(np.array(f["probe"]))
        (y * probe.reshape(y.shape)).sum().backward()
        errors = {"y": rel_err(f["ours/y"], y.detach().numpy())}
        for k, x in enumerate(xs):
            errors[f"dx{k}"] = rel_err(f[f"ours/dx{k}"], x.grad.numpy())
        if module is not None and kind in smart_torch.KINDS:
            errors.update(smart_torch.grad_errors(module, f["ours/grad/layer"], rel_err))
        elif module is not None:
            for name, p in module.named_parameters():
                errors[f"{name}.grad"] = rel_err(f["ours/grad/layer"][name], p.grad.numpy())
            for name, b in module.named_buffers():  # batch norm's running statistics after the forward
                if name in f["layer"]:
                    errors[name] = rel_err(f["layer"][name], b.numpy())
        if "ours/grad" in f and module is None:
            errors["parameters without a torch module"] = float("inf")
    failures = []
    for k, e in errors.items():
        status = "ok" if e <= RTOL else "FAIL"
        print(f"{path} [{kind}] {k}: relative error {e:.2e} {status}")
        if not e <= RTOL:
            failures.append(f"{path}:{k}")
    return failures


def main():
    if len(sys.argv) < 2:
        print("usage: layer_parity.py parity_layer_*.h5")
        sys.exit(2)
    check_files(check, sys.argv[1:], RTOL,
                f"PyTorch {torch.__version__}: {len(sys.argv) - 1} layers, forward and all gradients agree "
                f"within {RTOL}")


if __name__ == "__main__":
    main()
