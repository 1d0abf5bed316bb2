"""scenes_import on Argoverse 2 scenario files read as they ship (Parquet, written here by pandas with
pyarrow, AV2's 16 columns and dtypes) against the same tables as CSV: one table of three scenarios
as CSV, as one Parquet file, as three files in AV2's layout (train/<id>/scenario_<id>.parquet beside
log_map_archive_<id>.json, given as the folder and as the files), and with dictionary-encoded
(pandas category) and large_string columns in small row groups; every import gives scenes whose
datasets equal the CSV's byte for byte (h5diff). Then the refusals (exit 2, the file, row and
column named, nothing written): a truncated file, a CSV named .parquet, position_x as strings, a
null position_x beside a valid position_y, a scenario in two files, a folder without Parquet files.
In a build without Arrow (HAVE_PARQUET 0) only that a Parquet file is refused, saying how to get one.
usage: av2_parquet.py SCENES_IMPORT OUT_DIR HAVE_PARQUET"""
import json
import os
import shutil
import subprocess
import sys

from tool_run import Checks, import_or_skip

# pandas and pyarrow: .deps/zarr3env of scripts/setup --reference (a skip there is a failure).
np, pd, pa, pq = import_or_skip("numpy", "pandas", "pyarrow", "pyarrow.parquet")

tool, out, have_parquet = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
shutil.rmtree(out, ignore_errors=True)
os.makedirs(out)
check = Checks()
p = lambda *names: os.path.join(out, *names)  # noqa: E731


def run(*args):
    return subprocess.run([tool, *map(str, args)], capture_output=True, text=True)


def refused(args, target, said, what):
    r = run(*args, target)
    check(r.returncode == 2 and all(s in r.stderr for s in said) and not os.path.exists(target),
          f"{what}: exit {r.returncode}, {r.stderr.strip()!r}")


if not have_parquet:
    with open(p("a.parquet"), "w") as f:
        f.write("PAR1")
    refused([p("a.parquet")], p("a.h5"), [p("a.parquet") + ": a Parquet file, and this program finds no Parquet module",
                                           "libhpctrain_parquet.so", "scripts/setup"], "no Parquet module: refused")
    check.finish()
    sys.exit(0)

# Three AV2-style scenarios: 110 steps at 10 Hz, tracks entering late and leaving early, rows of
# unobserved steps (both positions NaN), positions with all their digits (exact reading).
rng = np.random.default_rng(7)
ids = [f"0a{k}f-8c3e-4e7b-9d{k}1-{k:012d}" for k in (3, 1, 2)]  # not in sorted order
rows = []
for s, sid in enumerate(ids):
    for t in range(4 + s):
        first, last = (0, 109) if t < 2 else (int(rng.integers(0, 40)), int(rng.integers(70, 110)))
        x0, y0, vx, vy = rng.normal(0, 20), rng.normal(0, 20), rng.normal(5, 2), rng.normal(0, 2)
        kind = ["vehicle", "pedestrian", "cyclist", "bus", "static"][(s + t) % 5]
        for step in range(first, last + 1):
            seen = not (t == 2 and 50 <= step < 55)
            rows.append({"observed": step < 50, "track_id": str(1000 * s + t) if t else "AV",
                         "object_type": kind, "object_category": 3 if t == 0 else 1, "timestep": step,
                         "position_x": x0 + 0.1 * step * vx + rng.normal(0, 0.01) if seen else np.nan,
                         "position_y": y0 + 0.1 * step * vy + rng.normal(0, 0.01) if seen else np.nan,
                         "heading": np.arctan2(vy, vx) + rng.normal(0, 0.01), "velocity_x": vx, "velocity_y": vy,
                         "scenario_id": sid, "start_timestamp": 315966000000000000 + s,
                         "end_timestamp": 315966011000000000 + s, "num_timestamps": 110, "focal_track_id": "AV",
                         "city": "PIT"})
table = pd.DataFrame(rows)
check(str(table["timestep"].dtype) == "int64" and str(table["observed"].dtype) == "bool", "AV2's dtypes")


def av2_map(x):
    lane = lambda y: [{"x": float(v), "y": y, "z": 0.0} for v in (x - 60, x, x + 60)]  # noqa: E731
    return {"drivable_areas": {}, "pedestrian_crossings": {},
            "lane_segments": {"1": {"id": 1, "lane_type": "VEHICLE", "left_lane_boundary": lane(1.75),
                                    "right_lane_boundary": lane(-1.75)}}}


# The CSV of all three (the former route: pandas to CSV) and AV2's layout, one folder per scenario.
# Sorted by scenario id, as a folder is read; each scenario's own order inside.
table["order"] = table["scenario_id"].map({sid: k for k, sid in enumerate(sorted(ids))})
table = table.sort_values("order", kind="stable").drop(columns="order").reset_index(drop=True)
table.to_csv(p("all.csv"), index=False)
table.to_parquet(p("all.parquet"), engine="pyarrow")
files = []
for k, sid in enumerate(sorted(ids)):
    os.makedirs(p("train", sid))
    files.append(p("train", sid, f"scenario_{sid}.parquet"))
    table[table["scenario_id"] == sid].to_parquet(files[-1], engine="pyarrow", index=False)
    with open(p("train", sid, f"log_map_archive_{sid}.json"), "w") as f:
        json.dump(av2_map(10.0 * k), f)
# Category columns (dictionary-encoded in Parquet) and large_string, in row groups of 97 rows.
cats = table.copy()
for c in ("track_id", "object_type", "scenario_id", "city"):
    cats[c] = cats[c].astype("category")
cats.to_parquet(p("category.parquet"), engine="pyarrow", row_group_size=97)
arrow = pa.Table.from_pandas(table, preserve_index=False)
arrow = arrow.cast(pa.schema([pa.field(f.name, pa.large_string()) if pa.types.is_string(f.type) or
                              pa.types.is_large_string(f.type) else f for f in arrow.schema]))
pq.write_table(arrow, p("large.parquet"), row_group_size=97)
check(pq.read_schema(p("large.parquet")).field("track_id").type == pa.large_string() and
      pq.read_schema(p("category.parquet")).field("object_type").type.id == pa.dictionary(pa.int8(), pa.string()).id,
      "large_string and dictionary columns written")

common = ["--map", p("train"), "--history", "4.5", "--window", "10.5", "--align", "end", "--other", "vehicle"]
r = run(p("all.csv"), p("csv.h5"), *common)
print(r.stdout, r.stderr)
check(r.returncode == 0 and "3 recordings" in r.stdout and "rows without a position" in r.stdout,
      "the CSV of three scenarios imports")


def datasets(path):
    listing = subprocess.run(["h5ls", "-r", path], capture_output=True, text=True).stdout
    return sorted(line.split()[0] for line in listing.splitlines() if " Dataset " in line)


def same_scenes(target, what):
    names = datasets(p("csv.h5"))
    got = datasets(target) if os.path.exists(target) else []
    differ = [n for n in names if subprocess.run(["h5diff", p("csv.h5"), target, n, n],
                                                 capture_output=True).returncode != 0]
    check(len(names) >= 12 and got == names and not differ, f"{what}: the CSV's scenes byte for byte (differ: {differ})")


for args, name, what in [([p("all.parquet")], "one.h5", "one Parquet file of the three"),
                         ([p("train")], "folder.h5", "the AV2 folder (train/<id>/scenario_<id>.parquet)"),
                         (files, "files.h5", "the three scenario files named"),
                         ([p("category.parquet")], "category.h5", "category columns, row groups of 97"),
                         ([p("large.parquet")], "large.h5", "large_string columns, row groups of 97")]:
    r = run(*args, p(name), *common)
    check(r.returncode == 0, f"{what}: imports ({r.stderr.strip()})")
    same_scenes(p(name), what)

# Refusals.
with open(p("all.parquet"), "rb") as f:
    whole = f.read()
with open(p("truncated.parquet"), "wb") as f:
    f.write(whole[:len(whole) // 2])
refused([p("truncated.parquet")], p("x.h5"), [p("truncated.parquet") + ": not a readable Parquet file (Arrow: "],
        "a truncated file")
shutil.copy(p("all.csv"), p("csv_named.parquet"))
refused([p("csv_named.parquet")], p("x.h5"), [p("csv_named.parquet") + ": not a readable Parquet file"],
        "a CSV named .parquet")
text_x = table.copy()
text_x["position_x"] = text_x["position_x"].astype(str)
text_x.to_parquet(p("text_x.parquet"))
refused([p("text_x.parquet")], p("x.h5"), [p("text_x.parquet") + ": position_x: holds ", "where numbers are expected"],
        "position_x as strings")
null_x = table.copy()
row = int(np.flatnonzero(null_x["position_y"].notna().to_numpy())[40])
null_x.loc[row, "position_x"] = None
null_x.to_parquet(p("null_x.parquet"))
refused([p("null_x.parquet")], p("x.h5"), [p("null_x.parquet") + f": row {row + 1}: position_x: empty (a null in a "
                                           "Parquet file), where position_y is given"],
        "a null position_x beside a valid position_y")
refused([files[0], files[1], p("all.parquet")], p("x.h5"),
        [p("all.parquet") + ": scenario '" + sorted(ids)[0] + "' is also in " + files[0]], "a scenario in two files")
os.makedirs(p("empty", "sub"))
refused([p("empty")], p("x.h5"), [p("empty") + ": a folder without *.parquet files"], "a folder without Parquet")
size = os.path.getsize(p("all.csv"))
r = run(p("all.parquet"), p("all.csv"), *common)  # OUT forgotten: the last table would be overwritten
check(r.returncode == 2 and p("all.csv") + ": the output" in r.stderr and os.path.getsize(p("all.csv")) == size,
      f"a table named as the output is refused and kept: {r.stderr.strip()!r}")
check.finish()
