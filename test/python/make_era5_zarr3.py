"""Zarr v3 stores as zarr-python 3 and xarray write them by default (test_zarr_stores), from the data sets
of era5_datasets.py, so that each reads as its NetCDF twin from make_era5_grids.py:
  era5_cds_v3.zarr       era5_cds.nc's data set by to_zarr's defaults (Zarr v3: zarr.json, chunks
                         zstd-compressed under c/...), chunks of 5 times x 3 x 4 points
  era5_cds_sharded.zarr  the same, 5 x 3 x 4 chunks in shards of 10 x 6 x 8 (sharding_indexed, the
                         index after the chunks with its crc32c); t2m Blosc lz4, lsm and z zstd
  era5_packed_v3.zarr    era5_packed.nc's t2m, int16 packed (_FillValue -32767), gzip chunks
  era5_masked_v3.zarr    era5_masked.nc's t2m with _FillValue -9999 (xarray stores a float _FillValue
                         as base64 of its float64 bytes), chunk keys of the v2 encoding (0.0.0), crc32c
  era5_masked_sharded.zarr  era5_masked.nc's t2m, 1 x 3 x 4 chunks in shards of 8 x 6 x 8: the
                         all-NaN hour's chunks are never written (the index marks them)
  era5_masked_outer.zarr  era5_masked.nc's t2m through a sharding serializer (1 x 3 x 4 inner chunks,
                         the index at the start) and zstd after it: each whole shard compressed, as
                         zarr-python writes a sharding serializer with compressors
  era5_bad_sharded.zarr  era5_cds_sharded.zarr with t2m's shard c/1/0/0 cut short
  era5_transposed.zarr   t2m through a transpose codec (not read: refused by name)
  era5_3h_dates.zarr     era5_3h.nc's t2m by zarr-python's own API, time as numpy datetime64[s]
usage: make_era5_zarr3.py OUT_DIR  (run by the zarr-python 3 venv of scripts/setup --reference)
"""
import os
import sys

try:
    import xarray as xr  # noqa: F401 (era5_datasets')
    import zarr
    from zarr.codecs import BloscCodec, BytesCodec, Crc32cCodec, GzipCodec, ShardingCodec, TransposeCodec, ZstdCodec
except ImportError as e:
    print(f"make_era5_zarr3: {e} (.deps/zarr3env of scripts/setup --reference)")
    sys.exit(77)

from era5_datasets import CDS_TIME, PACKED_T2M, ZARR_CHUNKS, cds, masked, packed, three  # noqa: E402

if int(zarr.__version__.split(".")[0]) < 3:
    print(f"make_era5_zarr3: zarr-python {zarr.__version__}, not 3 (.deps/zarr3env)")
    sys.exit(77)
out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def path(name):
    return os.path.join(out, name)


# mode w: the fixture may run again over an old scratch.
cds.to_zarr(path("era5_cds_v3.zarr"), mode="w", encoding=dict(ZARR_CHUNKS, valid_time=CDS_TIME))
shards = {"t2m": (10, 6, 8), "lsm": (10, 6, 8), "z": (10, 2, 6, 8)}
sharded = {k: dict(v, shards=shards[k]) for k, v in ZARR_CHUNKS.items()}
sharded["t2m"]["compressors"] = [BloscCodec(cname="lz4", shuffle="shuffle")]
for name in ("era5_cds_sharded.zarr", "era5_bad_sharded.zarr"):
    cds.to_zarr(path(name), mode="w", encoding=dict(sharded, valid_time=CDS_TIME))
packed.to_zarr(path("era5_packed_v3.zarr"), mode="w",
               encoding={"t2m": dict(PACKED_T2M, compressors=[GzipCodec(level=4)])})
masked.to_zarr(path("era5_masked_v3.zarr"), mode="w",
               encoding={"t2m": {"_FillValue": -9999.0, "chunks": (8, 3, 4),
                                 "compressors": [ZstdCodec(level=3), Crc32cCodec()],
                                 "chunk_key_encoding": {"name": "v2", "separator": "."}}})
masked.to_zarr(path("era5_masked_sharded.zarr"), mode="w",
               encoding={"t2m": {"chunks": (1, 3, 4), "shards": (8, 6, 8)}})
masked.to_zarr(path("era5_masked_outer.zarr"), mode="w",
               encoding={"t2m": {"chunks": (8, 6, 8), "compressors": [ZstdCodec(level=3)],
                                 "serializer": ShardingCodec(chunk_shape=(1, 3, 4), index_location="start",
                                                             codecs=[BytesCodec(), ZstdCodec()])}})
masked.to_zarr(path("era5_transposed.zarr"), mode="w",
               encoding={"t2m": {"filters": [TransposeCodec(order=(2, 1, 0))]}})

# Written with zarr-python's own API, not xarray: the time as numpy datetime64[s] (no units
# attribute), as tools that store dates so write it.
group = zarr.open_group(path("era5_3h_dates.zarr"), mode="w")
names = {"time": ["time"], "latitude": ["latitude"], "longitude": ["longitude"], "t2m": ["time", "latitude", "longitude"]}
values = {"time": three["time"].values.astype("datetime64[s]"), "latitude": three["latitude"].values,
          "longitude": three["longitude"].values, "t2m": three["t2m"].values.astype("float32")}
for name, v in values.items():
    group.create_array(name, data=v, dimension_names=names[name])

shard = path("era5_bad_sharded.zarr/t2m/c/1/0/0")
with open(shard, "rb") as f:
    data = f.read()
with open(shard, "wb") as f:
    f.write(data[: len(data) // 2])
print("wrote", out)
