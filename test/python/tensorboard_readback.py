"""Reads our TensorBoard event files back with the real tensorboard package and checks every scalar
against the JSON-lines metrics file of the same run (exit 77 = tensorboard missing = skipped).

usage: tensorboard_readback.py EVENTS_DIR METRICS.jsonl
"""
import json
import math
import sys

try:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
except ImportError:
    print("SKIP: the tensorboard package is missing (scripts/setup --reference installs it)")
    sys.exit(77)

TAGS = {  # (record type, field) -> tag; docs/outputs.md "TensorBoard" documents the same table
    ("step", "loss"): "train/loss", ("step", "lr"): "train/lr", ("step", "grad_norm"): "train/grad_norm",
    ("step", "samples_per_s"): "perf/samples_per_s", ("epoch", "train_loss"): "epoch/train_loss",
    ("epoch", "val_loss"): "val/loss", ("epoch", "samples_per_s"): "perf/epoch_samples_per_s",
    ("epoch", "seconds"): "perf/epoch_seconds", ("epoch", "compute_s"): "time/compute_s",
    ("epoch", "comm_s"): "time/comm_s", ("epoch", "io_s"): "time/io_s",
    ("summary", "samples_per_s"): "summary/samples_per_s", ("summary", "seconds"): "summary/seconds",
}


def main(events_dir, metrics_path):
    acc = EventAccumulator(events_dir, size_guidance={"scalars": 0})  # 0: keep every event
    acc.Reload()
    records = [json.loads(line) for line in open(metrics_path) if line.strip()]
    found = set(acc.Tags()["scalars"])
    failures = []
    last_step = 0
    for (kind, field), tag in sorted(TAGS.items()):
        expected = []
        for r in records:
            if "step" in r:
                last_step = r.get("step", last_step)
            if r["type"] == kind and r.get(field) is not None:
                expected.append((int(r.get("step", last_step)), r[field]))
        if not expected:
            failures.append(f"{metrics_path} has no {kind} records with {field}")
            continue
        if tag not in found:
            failures.append(f"tag {tag} missing (event file has {sorted(found)})")
            continue
        got = [(e.step, e.value) for e in acc.Scalars(tag)]
        if len(got) != len(expected):
            failures.append(f"{tag}: {len(got)} events, the metrics file has {len(expected)}")
            continue
        for (gs, gv), (es, ev) in zip(got, expected):
            # TensorBoard keeps float32, the metrics file 9 significant digits of the double.
            if gs != es or not math.isclose(gv, ev, rel_tol=2e-7, abs_tol=1e-30):
                failures.append(f"{tag}: step {gs} value {gv!r}, metrics file: step {es} value {ev!r}")
    for f in failures:
        print("FAIL:", f)
    if failures:
        return 1
    print(f"PASS: {len(TAGS)} tags agree with {metrics_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
