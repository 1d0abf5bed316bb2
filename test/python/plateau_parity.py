#!/usr/bin/env python3
"""lr_schedule plateau against PyTorch: reads plateau_parity.txt (written by test_plateau: per case
the configuration, a series of validation losses with ties, NaN, Inf and values one ulp either side
of the improvement threshold, and our rate after each), feeds the same losses to
torch.optim.lr_scheduler.ReduceLROnPlateau and requires every rate to be equal, bit for bit.
Exits 77 (ctest: skipped) when torch is not installed."""
import sys

try:
    import torch
except Exception as e:  # ImportError, or a numpy ABI mismatch in a broken install
    print(f"SKIPPED: plateau parity needs torch ({type(e).__name__}: {e}); install it with scripts/setup --reference")
    sys.exit(77)


def cases(path):
    with open(path) as f:
        lines = [line.split() for line in f if line.strip()]
    for head, losses, lrs in zip(lines[0::3], lines[1::3], lines[2::3]):
        assert head[0] == "case" and losses[0] == "losses" and lrs[0] == "lrs", head
        name, factor, patience, threshold, mode, cooldown, min_lr, eps, lr = head[1:]
        yield (name, dict(factor=float(factor), patience=int(patience), threshold=float(threshold),
                          threshold_mode=mode, cooldown=int(cooldown), min_lr=float(min_lr), eps=float(eps)),
               float(lr), [float(x) for x in losses[1:]], [float(x) for x in lrs[1:]])


def main():
    failures, compared, drops = [], 0, 0
    for name, kw, lr, losses, ours in cases(sys.argv[1]):
        param = torch.zeros(1, requires_grad=True)
        opt = torch.optim.SGD([param], lr=lr)
        sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="min", **kw)
        before = lr
        for i, (x, got) in enumerate(zip(losses, ours)):
            sched.step(x)
            want = opt.param_groups[0]["lr"]
            drops += want != before
            before = want
            compared += 1
            if got != want:
                failures.append(f"{name}: epoch {i + 1} (loss {x!r}): ours {got!r}, torch {want!r}")
        if len(losses) != len(ours):
            failures.append(f"{name}: {len(losses)} losses but {len(ours)} rates")
    print(f"torch {torch.__version__}: {compared} rates compared, {drops} drops")
    if compared == 0 or drops == 0:
        failures.append("nothing compared, or no rate ever dropped")
    for f in failures[:20]:
        print("FAIL", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
