#!/usr/bin/env python3
"""Damaged copies of valid input files, read by the programs that read them: each reader must decode a
damaged file or refuse it with one error line naming it, never crash, hang, or leave an output.

For each case (a format and the program reading it: train on a tiny deck, scenes_import) a valid
input is made or taken from the fixtures, the case is run once on it (it must succeed), then N
deterministic mutations of one of its files (cut at several offsets, bytes flipped, set to 0xff or
zeroed at seeded positions; for text also a delimiter dropped or doubled, a line dropped or doubled,
a field replaced by junk) are each run in a fresh copy, with a timeout, and classified:
  ok       exit 0 (the damage was decodable: a pixel, a value)
  clean    non-zero exit, exactly one "error: " line on stderr naming the damaged file, no output left
  defect   a signal, a sanitizer report, a hang, no or several error lines, an error not naming the
           file, an output file left by a failed run
Defects are listed with their mutation and kept under WORK/defects/ (the damaged input, the log).
Made here with the standard library (damaged_inputs.py): CSV, TSV, LibSVM, PNG and TIFF folders,
scenes_import's CSV tracks; by the build's own tools: HDF5 (datagen) and NetCDF (wxgen). With --fixtures DIR (the test
tree, build/test) also the files the test fixtures write there with Pillow, xarray and ecCodes, where
present: scratch_image_files/ (make_image_files.py: JPEG, COCO JSON), scratch_image_formats/
(make_image_formats.py: WebP, TIFF), scratch_bitmap_images/ (make_bitmap_images.py: BMP, GIF, PNM, a
GTSRB-shaped folder of .ppm files), scratch_era5_grids/ (make_era5_grids.py, make_era5_grib.sh:
NetCDF, GRIB, Zarr v2), scratch_era5_zarr3/ (make_era5_zarr3.py: sharded Zarr v3); with
--parquet-python PY (an interpreter with pyarrow) the CSV table and tracks as Parquet.
usage: damaged_files.py BUILD_DIR WORK_DIR [--mutations N] [--cases A,B] [--fixtures DIR]
                        [--parquet-python PY] [--ranks2 K] [--ranks2-cases A,B] [--mpiexec MPIEXEC]
                        [--timeout S] [--jobs J] [--seed K]
  --ranks2 K: also run the first K mutations of each train case (of --ranks2-cases) on 2 ranks: no
  rank may hang, the error line is printed once.
Exit 0 when no defect, 1 otherwise (2: a case failed on its valid input).
Under AddressSanitizer and UBSan (ASAN_OPTIONS defaults to detect_leaks=0:allocator_may_return_null=1):
  f="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
  cmake -S . -B build-asan -DCMAKE_PREFIX_PATH=$PWD/.deps/kokkos -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    -DHPCTRAIN_ENABLE_BENCHMARKS=OFF -DCMAKE_CXX_FLAGS_RELEASE="-O1 -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS="$f" \
    -DCMAKE_C_FLAGS="$f" -DCMAKE_{EXE,SHARED,MODULE}_LINKER_FLAGS=-fsanitize=address,undefined
  cmake --build build-asan --target train scenes_import datagen wxgen hpctrain_parquet
  damaged_files.py build-asan build-asan/sweep --mutations 48 --ranks2 3 --fixtures build/test \
    --parquet-python .deps/zarr3env/bin/python   (about 15 minutes on 2 cores)"""
import argparse
import concurrent.futures
import os
import random
import shutil
import subprocess
import sys
import zlib

from damaged_inputs import make_image_folder, make_text_tables, make_tracks_csv

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# ---- the cases ------------------------------------------------------------------------------------
# name: (make(dir, build, fixtures) -> None or "absent", damaged file relative to dir, text?, the
# name the error must give, the command over {dir} {out} {build} {src}).
MLP = ["{build}/apps/train", "-", "--set", "model=mlp", "--set", "hidden_sizes=4", "--set", "batch_size=8",
       "--set", "epochs=1", "--set", "log_every=1000", "--set", "metrics_file=", "--set", "output={out}"]
TABLE = ["--set", "text_header=true", "--set", "label_column=y"]
IMAGES = ["{build}/apps/train", "{src}/inputs/resnet_folder.in", "--set", "data_file={dir}/folder",
          "--set", "validation_file=", "--set", "image_channels=1", "--set", "image_height=8",
          "--set", "image_width=8", "--set", "resnet_width=2", "--set", "resnet_depth=18",
          "--set", "resnet_stem=small", "--set", "num_classes={classes}", "--set", "batch_size=4",
          "--set", "epochs=1", "--set", "metrics_file=", "--set", "output={out}", "--set", "conv_algorithm=gemm"]
GNN = ["{build}/apps/train", "{src}/inputs/gnn_era5.in", "--set", "data_file={dir}/{data}",
       "--set", "output={out}", "--set", "metrics_file=", "--set", "epochs=1", "--set", "gnn_latent=8",
       "--set", "gnn_layers=1", "--set", "ar_steps=1", "--set", "ar_steps_schedule=",
       "--set", "derived_forcings=time_of_day", "--set", "gnn_output=increment", "--set", "batch_size=2"]
CAPE = ["{build}/apps/train", "{src}/inputs/cape_coco.in", "--set", "data_file={dir}/coco/train.json",
        "--set", "validation_file=", "--set", "image_height=32", "--set", "image_width=32",
        "--set", "resnet_width=4", "--set", "cape_dim=16", "--set", "batch_size=4", "--set", "epochs=1",
        "--set", "conv_algorithm=gemm", "--set", "metrics_file=", "--set", "output={out}"]
TRACKS = ["{build}/apps/scenes_import", "{dir}/{data}", "{out}", "--history", "1", "--window", "3"]


def fixture(sub, files):
    """make() copying `files` (paths under fixtures/sub) into the case's folder, keeping their paths."""
    def make(d, args):
        fx = args.fixtures
        if fx is None or not all(os.path.exists(f"{fx}/{sub}/{f}") for f in files):
            return "absent"
        for f in files:
            (shutil.copytree if os.path.isdir(f"{fx}/{sub}/{f}") else shutil.copy)(f"{fx}/{sub}/{f}", f"{d}/{f}")
    return make


def tool(*argv):
    def make(d, args):
        subprocess.run([a.format(dir=d, build=args.build) for a in argv], check=True, capture_output=True)
    return make


def folder(sub):
    """make() copying the image folder fixtures/sub to the case's folder/."""
    def make(d, args):
        if args.fixtures is None or not os.path.isdir(f"{args.fixtures}/{sub}"):
            return "absent"
        shutil.copytree(f"{args.fixtures}/{sub}", f"{d}/folder")
    return make


def single(path):
    """make() putting the fixture file `path` in folder/cls0/ beside PNGs of the script's (2 classes)."""
    def make(d, args):
        if args.fixtures is None or not os.path.exists(f"{args.fixtures}/{path}"):
            return "absent"
        make_image_folder(d, "png")
        shutil.copy(f"{args.fixtures}/{path}", f"{d}/folder/cls0/")
    return make


def parquet(make_csv, csv, name):
    """make() writing the CSV `csv` as the Parquet file `name` with pyarrow (--parquet-python)."""
    def make(d, args):
        py = args.parquet_python or ""
        if not os.path.exists(py) or subprocess.run([py, "-c", "import pyarrow"], capture_output=True).returncode:
            return "absent"
        make_csv(d)
        subprocess.run([py, "-c", "import sys, pyarrow.csv as c, pyarrow.parquet as p; "
                        "p.write_table(c.read_csv(sys.argv[1]), sys.argv[2])", f"{d}/{csv}", f"{d}/{name}"],
                       check=True)
        os.remove(f"{d}/{csv}")
    return make


CASES = {
    "csv": (lambda d, a: make_text_tables(d), "table.csv", True, "table.csv",
            MLP + TABLE + ["--set", "data_file={dir}/table.csv"]),
    "tsv": (lambda d, a: make_text_tables(d), "table.tsv", True, "table.tsv",
            MLP + TABLE + ["--set", "data_file={dir}/table.tsv"]),
    "libsvm": (lambda d, a: make_text_tables(d), "table.svm", True, "table.svm",
               MLP + ["--set", "data_file={dir}/table.svm"]),
    "hdf5": (tool("{build}/apps/datagen", "friedman1", "{dir}/data.h5", "--rows", "64"), "data.h5", False,
             "data.h5", MLP + ["--set", "data_file={dir}/data.h5"]),
    "png": (lambda d, a: make_image_folder(d, "png"), "folder/cls1/i1.png", False, "i1.png", IMAGES),
    "tiff": (lambda d, a: make_image_folder(d, "tif"), "folder/cls1/i1.tif", False, "i1.tif", IMAGES),
    "netcdf": (tool("{build}/apps/wxgen", "{dir}/wx.nc", "--nx", "8", "--ny", "6", "--margin", "4", "--hours", "30",
                    "--spinup", "6"), "wx.nc", False, "wx.nc",
               ["{build}/apps/train", "{src}/inputs/gnn_quickstart.in", "--set", "data_file={dir}/wx.nc",
                "--set", "output={out}", "--set", "metrics_file=", "--set", "epochs=1", "--set", "gnn_latent=8",
                "--set", "gnn_layers=1"]),
    "tracks_csv": (lambda d, a: make_tracks_csv(d), "tracks.csv", True, "tracks.csv",
                   [a.replace("{data}", "tracks.csv") for a in TRACKS]),
    # From the fixtures (--fixtures).
    "jpeg": (folder("scratch_image_files/photos"), "folder/cls1/p2.jpg", False, "p2.jpg", IMAGES),
    "webp": (folder("scratch_image_formats/mixed"), "folder/cls1/p2.webp", False, "p2.webp", IMAGES),
    "tiff_lzw": (folder("scratch_image_formats/mixed"), "folder/cls2/p4.tif", False, "p4.tif", IMAGES),
    "coco": (fixture("scratch_image_files", ["coco"]), "coco/train.json", True, "train.json", CAPE),
    "coco_jpeg": (fixture("scratch_image_files", ["coco"]), "coco/images/img1.jpg", False, "img1.jpg", CAPE),
    "coco_webp": (fixture("scratch_image_formats/orient", ["coco"]), "coco/face5_o6.webp", False,
                  "face5_o6.webp", CAPE + ["--set", "exif_orientation=apply"]),
}
# The image decoder's layouts (fixtures of make_image_formats.py and make_image_files.py), each one
# file in a folder of PNGs; EXIF orientations applied, RGB read as RGB.
FORMATS = "scratch_image_formats/formats/"
for name, path, more in (("tiff_tiled", FORMATS + "tiled.tif", []),
                         ("tiff_tiled_planes", FORMATS + "tiled_planes_be.tif", []),
                         ("tiff_planes", FORMATS + "planes.tif", ["--set", "image_channels=3"]),
                         ("tiff_palette", FORMATS + "palette.tif", ["--set", "image_channels=3"]),
                         ("tiff_bilevel", FORMATS + "bilevel.tif", []),
                         ("tiff_jpeg", FORMATS + "jpeg.tif", ["--set", "image_channels=3"]),
                         ("tiff_grey16", FORMATS + "grey16_deflate.tif", []),
                         ("tiff_rgb16", FORMATS + "rgb16.tif", ["--set", "image_channels=3"]),
                         ("tiff_o6", "scratch_image_formats/orient/o6_lzw.tif", []),
                         ("png16", FORMATS + "grey16.png", []),
                         ("webp_anim", FORMATS + "anim.webp", ["--set", "image_channels=3"]),
                         ("webp_lossy_rgba", FORMATS + "lossy_rgba.webp", []),
                         ("webp_o6", "scratch_image_formats/orient/o6.webp", []),
                         ("jpeg_exif", "scratch_image_files/exif/o6.jpg", ["--set", "image_channels=3"])):
    CASES[name] = (single(path), "folder/cls0/" + os.path.basename(path), False, os.path.basename(path),
                   IMAGES + ["--set", "exif_orientation=apply"] + more)
# BMP, GIF (stb_image) and PNM (libnetpbm) of make_bitmap_images.py likewise (RGB read as RGB); a
# GTSRB-shaped folder, its GT-*.csv beside the damaged .ppm.
for name, file in (("bmp", "rgb.bmp"), ("bmp_palette", "palette.bmp"), ("bmp_bilevel", "bilevel.bmp"),
                   ("gif", "rgb.gif"), ("gif_anim", "anim.gif"), ("ppm", "rgb.ppm"), ("pgm16", "grey16.pgm"),
                   ("pbm", "bilevel.pbm"), ("ppm_plain", "plain.ppm")):
    CASES[name] = (single("scratch_bitmap_images/formats/" + file), "folder/cls0/" + file, False, file,
                   IMAGES + (["--set", "image_channels=3"] if file.startswith(("rgb", "plain")) else []))
CASES["gtsrb"] = (folder("scratch_bitmap_images/gtsrb"), "folder/00001/00000_00001.ppm", False, "00000_00001.ppm",
                  IMAGES)
CASES.update({
    "grib": (fixture("scratch_era5_grids", ["era5.grib"]), "era5.grib", False, "era5.grib",
             [a.replace("{data}", "era5.grib") for a in GNN]),
    "era5_nc": (fixture("scratch_era5_grids", ["era5_cds.nc"]), "era5_cds.nc", False, "era5_cds.nc",
                [a.replace("{data}", "era5_cds.nc") for a in GNN]),
    # A chunk's values: a bad one is named by the store, variable and index (the data checks); damaged
    # metadata by its variable (and its file where the JSON does not parse).
    "zarr2_chunk": (fixture("scratch_era5_grids", ["era5_cds.zarr"]), "era5_cds.zarr/t2m/1.0.0", False,
                    "era5_cds.zarr", [a.replace("{data}", "era5_cds.zarr") for a in GNN]),
    "zarr2_meta": (fixture("scratch_era5_grids", ["era5_cds.zarr"]), "era5_cds.zarr/t2m/.zarray", True, "t2m",
                   [a.replace("{data}", "era5_cds.zarr") for a in GNN]),
    "zarr3_shard": (fixture("scratch_era5_zarr3", ["era5_cds_sharded.zarr"]), "era5_cds_sharded.zarr/t2m/c/0/0/0",
                    False, "era5_cds_sharded.zarr", [a.replace("{data}", "era5_cds_sharded.zarr") for a in GNN]),
    "zarr3_meta": (fixture("scratch_era5_zarr3", ["era5_cds_sharded.zarr"]), "era5_cds_sharded.zarr/t2m/zarr.json",
                   True, "t2m", [a.replace("{data}", "era5_cds_sharded.zarr") for a in GNN]),
    "parquet": (parquet(make_text_tables, "table.csv", "table.parquet"), "table.parquet", False, "table.parquet",
                MLP + TABLE + ["--set", "data_file={dir}/table.parquet"]),
    "tracks_parquet": (parquet(make_tracks_csv, "tracks.csv", "tracks.parquet"), "tracks.parquet", False,
                       "tracks.parquet", [a.replace("{data}", "tracks.parquet") for a in TRACKS]),
})


# ---- mutations ------------------------------------------------------------------------------------
def mutate(data, text, i, rng):
    """The i-th mutation of `data` (bytes): (description, damaged bytes)."""
    n = len(data)
    # Heads and tails both: a format's directory may be either (a TIFF's IFD, Parquet's footer).
    kinds = ["cut", "flip_head", "flip", "flip8", "zero", "ff", "cut", "zero_head", "flip_tail", "zero_tail"]
    if text:
        kinds += ["drop_delim", "dup_delim", "drop_line", "dup_line", "junk_field", "quote"]
    kind = kinds[i % len(kinds)]
    at = rng.randrange(max(n, 1))
    if kind == "cut":  # 0, 1/8 .. 7/8 of the bytes, then random offsets
        k = 2 * (i // len(kinds)) + (i % len(kinds) > 0)  # the how-many-th cut
        cut = n * k // 8 if k < 8 else rng.randrange(n)
        return f"cut at {cut} of {n}", data[:cut]
    if kind in ("flip", "flip_head", "flip_tail"):
        at = rng.randrange(min(n, 64)) if kind == "flip_head" else at
        at = max(0, n - 1 - rng.randrange(min(n, 128))) if kind == "flip_tail" else at
        x = rng.randrange(1, 256)
        return f"byte {at} xor {x:#x}", data[:at] + bytes([data[at] ^ x]) + data[at + 1:]
    if kind == "flip8":
        b = bytearray(data)
        spots = sorted(rng.randrange(n) for _ in range(8))
        for s in spots:
            b[s] ^= rng.randrange(1, 256)
        return f"8 bytes flipped at {spots}", bytes(b)
    if kind in ("zero", "ff", "zero_head", "zero_tail"):
        at = rng.randrange(min(n, 32)) if kind == "zero_head" else at
        at = max(0, n - 1 - rng.randrange(min(n, 128))) if kind == "zero_tail" else at
        k = min(rng.choice([4, 16, 64]), n - at)
        fill = b"\xff" if kind == "ff" else b"\0"
        return f"bytes {at}..{at + k - 1} set to {fill.hex()}", data[:at] + fill * k + data[at + k:]
    lines = data.split(b"\n")
    j = rng.randrange(len(lines))
    line = lines[j]
    delims = [k for k, c in enumerate(line) if c in b",\t: "]
    if kind in ("drop_delim", "dup_delim") and delims:
        k = rng.choice(delims)
        lines[j] = line[:k] + line[k + 1:] if kind == "drop_delim" else line[:k + 1] + line[k:]
        return f"line {j + 1}: a delimiter at {k} {'dropped' if kind == 'drop_delim' else 'doubled'}", b"\n".join(lines)
    if kind == "drop_line" or (kind in ("drop_delim", "dup_delim") and not delims):
        del lines[j]
        return f"line {j + 1} dropped", b"\n".join(lines)
    if kind == "dup_line":
        lines.insert(j, line)
        return f"line {j + 1} doubled", b"\n".join(lines)
    if kind == "junk_field":
        junk = rng.choice([b"abc", b"", b"nan", b"1e999", b"-", b"\0", b"\xff\xfe", b"{", b"]"])
        parts = line.split(b",") if b"," in line else line.split(b"\t") if b"\t" in line else line.split(b" ")
        parts[rng.randrange(len(parts))] = junk
        sep = b"," if b"," in line else b"\t" if b"\t" in line else b" "
        lines[j] = sep.join(parts)
        return f"line {j + 1}: a field set to {junk!r}", b"\n".join(lines)
    k = rng.randrange(len(line) + 1)
    lines[j] = line[:k] + b'"' + line[k:]
    return f"line {j + 1}: a quote at {k}", b"\n".join(lines)


# ---- running and classifying ----------------------------------------------------------------------
SANITIZER = ("ERROR: AddressSanitizer", "runtime error:", "ERROR: LeakSanitizer", "UndefinedBehaviorSanitizer",
             "AddressSanitizer:DEADLYSIGNAL")


def run(cmd, timeout, env):
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL)
        return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace")
        return None, out, (e.stderr or b"").decode(errors="replace")


def classify(rc, out, err, name, outputs, program):
    """(class, why) of one run. The error line: "error: ..." (train), "PROGRAM: ..." (the tools)."""
    log = out + err
    for s in SANITIZER:
        if s in log:
            return "defect", "sanitizer: " + next(l for l in log.splitlines() if s in l).strip()[:200]
    if rc is None:
        return "defect", "hang (timeout)"
    if rc < 0 or rc >= 128:
        return "defect", f"signal (exit {rc})"
    if rc == 0:
        return "ok", ""
    errors = [l for l in err.splitlines() if l.startswith(("error: ", program + ": "))]
    left = [o for o in outputs if os.path.exists(o)]
    if len(errors) != 1:
        return "defect", f"exit {rc} with {len(errors)} error lines: {err.strip()[-300:]!r}"
    if "internal error" in errors[0]:
        return "defect", f"exit {rc}, an internal error: {errors[0][:300]}"
    if name not in errors[0]:
        return "defect", f"exit {rc}, the error does not name {name}: {errors[0][:300]}"
    if left:
        return "defect", f"exit {rc}, output left: {left}"
    return "clean", f"exit {rc}: {errors[0][:160]}"


def one(case, base, i, ranks, args, env):
    """Runs mutation i of `case` in a copy of `base`: (case, i, ranks, mutation, class, why)."""
    make, target, text, name, cmd = CASES[case]
    d = f"{args.work}/runs/{case}_{i}_np{ranks}"
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(base, d, symlinks=True)
    with open(f"{d}/{target}", "rb") as f:
        data = f.read()
    what, bad = (("none", data) if i < 0 else
                 mutate(data, text, i, random.Random((zlib.crc32(case.encode()) * 1000 + i) * 7919 + args.seed)))
    with open(f"{d}/{target}", "wb") as f:
        f.write(bad)
    out = f"{d}/out.h5"
    argv = expand(cmd, d, out, args, case)
    if ranks > 1:
        argv = [args.mpiexec, "-np", str(ranks), "--oversubscribe", "--bind-to", "none"] + argv
    # Note [MPI session directories] (cmake/TestSessionDirs.cmake): runs started at once race on one.
    rc, so, se = run(argv, args.timeout, dict(env, OMPI_MCA_orte_tmpdir_base=f"{d}/ompi"))
    cls, why = classify(rc, so, se, name, [out], os.path.basename(cmd[0]))
    if i < 0 and cls != "ok":
        cls, why = "setup", f"the valid input fails: exit {rc}: {(so + se)[-2000:]}"
    if cls in ("defect", "setup"):
        keep = f"{args.work}/defects/{case}_{i}_np{ranks}"
        shutil.rmtree(keep, ignore_errors=True)
        os.makedirs(keep)
        shutil.copy(f"{d}/{target}", f"{keep}/{os.path.basename(target)}")
        with open(f"{keep}/log", "w") as f:
            f.write(f"{what}\n{' '.join(argv)}\nexit {rc}\n--- stdout\n{so}\n--- stderr\n{se}\n")
    shutil.rmtree(d, ignore_errors=True)
    return case, i, ranks, what, cls, why


def expand(cmd, d, out, args, case):
    classes = len(os.listdir(f"{d}/folder")) if os.path.isdir(f"{d}/folder") else 0
    argv = [a.format(dir=d, out=out, build=args.build, src=SRC, classes=classes) for a in cmd]
    if argv[1] == "-":  # a deck of --set keys only: an empty deck file beside the data
        with open(f"{d}/deck.in", "w") as f:
            f.write("# damaged_files.py: the keys are on the command line\n")
        argv[1] = f"{d}/deck.in"
    return argv


def main():
    p = argparse.ArgumentParser(usage=__doc__)
    p.add_argument("build")
    p.add_argument("work")
    p.add_argument("--mutations", type=int, default=24)
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--fixtures")
    p.add_argument("--parquet-python")
    p.add_argument("--ranks2", type=int, default=0)
    p.add_argument("--ranks2-cases")
    p.add_argument("--mpiexec", default="mpirun")
    p.add_argument("--timeout", type=float, default=120)
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    args.build, args.work = os.path.abspath(args.build), os.path.abspath(args.work)
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(f"{args.work}/runs")
    env = dict(os.environ, OMP_NUM_THREADS="1", OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_odls_base_sigkill_timeout="0")
    # An allocation past ASan's limit returns null, as malloc does past the address space (ecCodes
    # then reports a damaged message's length); leaks of the libraries are not the readers' concern.
    env.setdefault("ASAN_OPTIONS", "detect_leaks=0:allocator_may_return_null=1")
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1")
    jobs, absent = [], []
    for case in args.cases.split(","):
        base = f"{args.work}/base/{case}"
        os.makedirs(base)
        if CASES[case][0](base, args) == "absent":
            absent.append(case)
            continue
        jobs += [(case, base, i, 1) for i in range(-1, args.mutations)]
        if CASES[case][4][0].endswith("/train") and case in (args.ranks2_cases or case).split(","):  # tools: no MPI
            jobs += [(case, base, i, 2) for i in range(min(args.ranks2, args.mutations))]
    counts, defects, setup = {}, [], []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for case, i, ranks, what, cls, why in pool.map(lambda j: one(*j, args, env), jobs):
            counts.setdefault(case, {"ok": 0, "clean": 0, "defect": 0})
            if cls == "setup":
                setup.append(f"{case}: {why}")
                continue
            if i >= 0:
                counts[case][cls] += 1
            if cls == "defect":
                defects.append(f"{case} mutation {i} ({what}), {ranks} rank(s): {why}")
    print(f"{'case':<16}{'runs':>6}{'ok':>6}{'clean':>7}{'defect':>8}")
    for case, c in counts.items():
        print(f"{case:<16}{sum(c.values()):>6}{c['ok']:>6}{c['clean']:>7}{c['defect']:>8}")
    if absent:
        print("not in the fixtures (left out):", ", ".join(absent))
    for line in setup + defects:
        print(("SETUP " if line in setup else "DEFECT ") + line)
    sys.exit(2 if setup else 1 if defects else 0)


if __name__ == "__main__":
    main()
