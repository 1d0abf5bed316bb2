#!/usr/bin/env python3
"""A/B of two `train` binaries on the seed-000 denoiser by CPU time, for a loaded machine.

  python3 perf/ab_denoiser_cpu.py BASE_TRAIN NEW_TRAIN [--repeats 5] [--batches 16,256] [--core 1]
      [--bench build/perf/bench_gemm] [--data data/downscaling_scaling15360.h5]

Each repeat measures the single-core sgemm (bench_gemm, n = 1024, by its CPU time), then runs each
binary (alternating which goes first) twice, pinned to one core with one thread: 1 epoch and 4
epochs of the data (15360 rows: `build/apps/diffgen FILE --rows 15360 --seed 3`). The 3 extra
epochs' samples over the CPU seconds they added are the steady throughput: start-up, the data read
and the first epoch cancel, and time spent waiting for a core on a loaded machine is not counted.
share = 1.63 MFLOP per sample (the summary's model FLOPs) x samples per CPU-second / sgemm GFLOP per
CPU-second. Prints each repeat and a median [min-max] row per batch. Not a test."""
import argparse, json, os, re, resource, statistics, subprocess, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DECK = os.path.join(ROOT, "inputs", "diffusion_seed000.in")
FLOPS = 1.63e6
ap = argparse.ArgumentParser()
ap.add_argument("base"), ap.add_argument("new")
ap.add_argument("--repeats", type=int, default=5)
ap.add_argument("--batches", default="16,256")
ap.add_argument("--core", default="1")
ap.add_argument("--bench", default=os.path.join(ROOT, "build", "perf", "bench_gemm"))
ap.add_argument("--data", default=os.path.join(ROOT, "data", "downscaling_scaling15360.h5"))
ap.add_argument("--rows", type=int, default=15360)
a = ap.parse_args()
env = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false")
scratch = os.path.join(ROOT, "build", "ab_denoiser")
os.makedirs(scratch, exist_ok=True)


def run(binary, batch, epochs):
    t0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(["taskset", "-c", a.core, binary, DECK, "--set", f"data_file={a.data}",
                          "--set", f"batch_size={batch}", "--set", f"epochs={epochs}", "--set", "log_every=100000",
                          "--set", f"metrics_file={scratch}/m.jsonl", "--set", f"output={scratch}/w.h5"],
                         env=env, capture_output=True, text=True)
    t1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    m = re.findall(rf"Epoch {epochs}/{epochs}: avg loss = (\S+) ", out.stdout + out.stderr)
    if not m:
        raise SystemExit(out.stdout[-2000:] + out.stderr[-2000:])
    return (t1.ru_utime - t0.ru_utime) + (t1.ru_stime - t0.ru_stime), m[-1]


def sgemm():
    out = subprocess.run(["taskset", "-c", a.core, a.bench, "--benchmark_filter=BM_KokkosBlasGemm/n:1024/mode:0",
                          "--benchmark_format=json"], env=env, capture_output=True, text=True).stdout
    b = json.loads(out[out.index("{"):])["benchmarks"][0]
    cpu = b["cpu_time"] * {"ms": 1e-3, "us": 1e-6, "ns": 1e-9, "s": 1}[b["time_unit"]]
    return 2 * 1024**3 / cpu / 1e9


def summary(v, fmt):
    return f"{fmt.format(statistics.median(v))} [{fmt.format(min(v))}-{fmt.format(max(v))}]"


print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load average before: {os.getloadavg()}")
for batch in [int(b) for b in a.batches.split(",")]:
    rows = {k: [] for k in ("gemm", "base", "new", "ratio", "share_base", "share_new")}
    for r in range(a.repeats):
        g = sgemm()
        res = {}
        for tag in (("base", "new") if r % 2 == 0 else ("new", "base")):
            binary = a.base if tag == "base" else a.new
            one, _ = run(binary, batch, 1)
            four, loss = run(binary, batch, 4)
            res[tag] = (3 * a.rows / (four - one), loss)
        rows["gemm"].append(g)
        for tag in ("base", "new"):
            rows[tag].append(res[tag][0])
            rows["share_" + tag].append(100 * FLOPS * res[tag][0] / (g * 1e9))
        rows["ratio"].append(res["new"][0] / res["base"][0])
        print(f"batch {batch} repeat {r}: sgemm {g:.1f} GFLOP/cpu-s; base {res['base'][0]:.0f} samples/cpu-s "
              f"(loss {res['base'][1]}); new {res['new'][0]:.0f} (loss {res['new'][1]})", flush=True)
    print(f"| {batch} | {summary(rows['gemm'], '{:.1f}')} | {summary(rows['base'], '{:.0f}')} | "
          f"{summary(rows['new'], '{:.0f}')} | {summary(rows['ratio'], '{:.2f}x')} | "
          f"{summary(rows['share_base'], '{:.0f}%')} | {summary(rows['share_new'], '{:.0f}%')} |", flush=True)
print(f"# load average after: {os.getloadavg()}")
