"""scenes_import on many Argoverse 2 scenario files (Parquet written by pandas + pyarrow, AV2's
columns, one scenario of 60 tracks x 110 steps each, its map beside it): the import reads one file
at a time and spools its scenes (Note [one file at a time], Note [scenes spooled]), so its peak
memory must not follow the number of files: 400 files against 40 of them (the bound, 1.5x, is
generous: holding every file's tracks and scenes took 3.6x here before). The 400 files' scenes
equal those of the same rows as one Parquet file (h5diff: per-file pieces join into the same
datasets); an import killed mid-way leaves no spool file and its rerun the same bytes; a truncated
file late among the 40 is refused with nothing written, no temporary file left.
usage: av2_stream.py SCENES_IMPORT OUT_DIR HAVE_PARQUET [FILES]"""
import json
import os
import shutil
import subprocess
import sys
import time

from tool_run import Checks, import_or_skip

np, pd = import_or_skip("numpy", "pandas")

tool, out, have_parquet = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
n_files = int(sys.argv[4]) if len(sys.argv) > 4 else 400
if not have_parquet:  # av2_parquet.py checks the refusal of a build without Arrow
    print("SKIPPED: scenes_import built without Parquet (HPCTRAIN_ENABLE_PARQUET)")
    sys.exit(77)
shutil.rmtree(out, ignore_errors=True)
os.makedirs(out)
check = Checks()
p = lambda *names: os.path.join(out, *names)  # noqa: E731

rng = np.random.default_rng(11)
tracks, steps = 60, 110
kinds = np.array(["vehicle", "pedestrian", "cyclist", "bus", "static"])


def scenario(k):
    """AV2's 16 columns for scenario k: every track over all 110 steps, straight at its own speed."""
    sid = f"{k:08x}-5a1e-4c0d-9e7f-{k:012d}"
    t = np.repeat(np.arange(tracks), steps)
    step = np.tile(np.arange(steps), tracks)
    x0, y0 = rng.normal(0, 30, tracks)[t], rng.normal(0, 30, tracks)[t]
    vx, vy = rng.normal(5, 2, tracks)[t], rng.normal(0, 2, tracks)[t]
    return sid, pd.DataFrame({
        "observed": step < 50, "track_id": np.where(t == 0, "AV", t.astype(str)),
        "object_type": kinds[t % len(kinds)], "object_category": np.where(t == 0, 3, 1), "timestep": step,
        "position_x": x0 + 0.1 * step * vx + rng.normal(0, 0.01, t.size),
        "position_y": y0 + 0.1 * step * vy + rng.normal(0, 0.01, t.size),
        "heading": np.arctan2(vy, vx), "velocity_x": vx, "velocity_y": vy, "scenario_id": sid,
        "start_timestamp": 315966000000000000 + k, "end_timestamp": 315966011000000000 + k,
        "num_timestamps": steps, "focal_track_id": "AV", "city": "PIT"})


def av2_map(k):
    lane = lambda y: [{"x": float(v), "y": y, "z": 0.0} for v in np.arange(-100, 101, 10)]  # noqa: E731
    return {"drivable_areas": {}, "pedestrian_crossings": {},
            "lane_segments": {str(i): {"id": i, "lane_type": "VEHICLE", "left_lane_boundary": lane(3.5 * i + 3.5),
                                       "right_lane_boundary": lane(3.5 * i)} for i in range(-8, 8)}}


began = time.time()
tables = []
for k in range(n_files):
    sid, table = scenario(k)
    os.makedirs(p("train", sid))
    table.to_parquet(p("train", sid, f"scenario_{sid}.parquet"), engine="pyarrow", index=False)
    with open(p("train", sid, f"log_map_archive_{sid}.json"), "w") as f:
        json.dump(av2_map(k), f)
    tables.append(table)
pd.concat(tables).to_parquet(p("all.parquet"), engine="pyarrow", index=False)
ids = sorted(os.listdir(p("train")))
os.makedirs(p("first"))
for sid in ids[:n_files // 10]:
    os.symlink(p("train", sid), p("first", sid))
print(f"{n_files} scenario files written in {time.time() - began:.1f} s")

common = ["--map", p("train"), "--history", "4.5", "--window", "10.5", "--align", "end"]


# Note [peak memory of a child]: Linux counts a forked child's memory from the parent's at the fork
# (an exec keeps the high-water mark), and this process holds pandas and the tables: a fresh,
# small Python starts the import and reports the import's own peak (wait4's ru_maxrss).
MEASURE = """import os, subprocess, sys, time
began = time.time()
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
said = child.stdout.read()
_, status, usage = os.wait4(child.pid, 0)
sys.stdout.write(said)
print(f"MEASURED {os.waitstatus_to_exitcode(status)} {usage.ru_maxrss / 1024} {time.time() - began}")
"""


def run(*args):
    """exit status, stdout + stderr, peak resident memory (MiB) and seconds of one import."""
    said = subprocess.run([sys.executable, "-S", "-c", MEASURE, tool, *map(str, args)], capture_output=True,
                          text=True).stdout
    said, _, last = said.rstrip("\n").rpartition("\n")
    _, rc, peak, seconds = (last if last.startswith("MEASURED") else "MEASURED -1 0 0").split()
    return int(rc), said + "\n", float(peak), float(seconds)


rc_few, said_few, peak_few, s_few = run(p("first"), p("first.h5"), *common)
rc_all, said_all, peak_all, s_all = run(p("train"), p("train.h5"), *common)
rc_one, said_one, peak_one, s_one = run(p("all.parquet"), p("one.h5"), *common)
print(said_few, said_all, said_one, sep="")
print(f"peak memory: {n_files // 10} files {peak_few:.0f} MiB ({s_few:.1f} s), {n_files} files {peak_all:.0f} MiB "
      f"({s_all:.1f} s), the {n_files} as one file {peak_one:.0f} MiB ({s_one:.1f} s)")
check(rc_few == 0 and rc_all == 0 and rc_one == 0 and f"from {n_files} recordings" in said_all,
      f"the folders and the one file import (exit {rc_few}, {rc_all}, {rc_one})")
check(peak_all < 1.5 * peak_few, f"{n_files} files' peak memory ({peak_all:.0f} MiB) stays within 1.5x of "
      f"{n_files // 10} files' ({peak_few:.0f} MiB)")


def datasets(path):
    listing = subprocess.run(["h5ls", "-r", path], capture_output=True, text=True).stdout
    return sorted(line.split()[0] for line in listing.splitlines() if " Dataset " in line)


names = datasets(p("one.h5"))
differ = [n for n in names if subprocess.run(["h5diff", p("one.h5"), p("train.h5"), n, n],
                                             capture_output=True).returncode != 0]
check(len(names) == 12 and datasets(p("train.h5")) == names and not differ,
      f"{n_files} files' scenes equal the same rows as one file's (differ: {differ})")

# Note [nameless spool]: an import killed mid-way (SIGKILL: no destructor runs) leaves nothing beside
# OUT, and a rerun writes the same bytes. It is killed once a spool (a file of its own open in OUT's
# folder, /proc/PID/fd) holds a file's scenes.
def spooled(pid):
    """whether the process has a file in OUT's folder open that holds bytes."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}").removesuffix(" (deleted)")
            if os.path.dirname(target) == os.path.realpath(out) and os.stat(f"/proc/{pid}/fd/{fd}").st_size > 0:
                return True
        except OSError:
            pass
    return False


if os.path.isdir("/proc/self/fd"):
    child = subprocess.Popen([tool, p("first"), p("killed.h5"), *common], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    waited = time.time()
    while child.poll() is None and not spooled(child.pid) and time.time() - waited < 120:
        time.sleep(0.01)
    alive = child.poll() is None
    child.kill()
    child.wait()
    left = sorted(n for n in os.listdir(out) if n.startswith("killed"))
    check(alive and not left, f"an import killed {time.time() - waited:.1f} s in, spooling (alive then: {alive}), "
          f"leaves nothing beside OUT (found {left})")
    rc, said, _, _ = run(p("first"), p("killed.h5"), *common)
    with open(p("killed.h5"), "rb") as a, open(p("first.h5"), "rb") as b:
        same = rc == 0 and a.read() == b.read()
    check(same, f"the rerun after the kill writes the same bytes as the import that was not killed (exit {rc})")

# A truncated file late in the folder: refused naming it, no output, no spool or temporary file. The
# folder of the first tenth (its files the same as train's, through the links), not all of train: the
# import reads every file before the late one, and 37 spooled scenes leave as much to clean up as
# 397 (it took 10 s of the test's 45 on 2 busy cores).
few = n_files // 10
late = p("first", ids[few - 3], f"scenario_{ids[few - 3]}.parquet")
with open(late, "rb") as f:
    whole = f.read()
with open(late, "wb") as f:
    f.write(whole[:len(whole) // 2])
rc, said, _, _ = run(p("first"), p("broken.h5"), *common)
left = [n for n in os.listdir(out) if n.startswith("broken")]
check(rc == 2 and late + ": not a readable Parquet file" in said and not left,
      f"a truncated file {few - 2} of {few}: exit {rc}, named, nothing left (found {left})")
if not check.failures:  # ~230 MB of tables and scenes: kept only to look into a failure
    shutil.rmtree(out, ignore_errors=True)
check.finish()
