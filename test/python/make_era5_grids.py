"""ERA5-like files as users get them, for the netcdf source's CDS conventions (test_era5_sources).

Values are exact in float32 and known to the test (t, j, i: time, latitude, longitude indices):
  t2m = 270 + t + 0.5 j + 0.25 i,  z = level + 2 t + j - i (levels 850 and 500),  lsm = (i + j) % 2
  era5_cds.nc     the new CDS NetCDF: time `valid_time` (int64 seconds since 1970-01-01), coordinates
                  `number` (scalar) and `expver` (strings along valid_time), latitude north to south
                  (52.0 .. 50.75), longitude across 0 in 0-360 (358.5 .. 0.75), hourly from
                  2024-06-20 00:00 with the hour 06:00 missing (13 times, t the hour), t2m and lsm
                  over (valid_time, latitude, longitude) (lsm constant in time), z over
                  (valid_time, pressure_level, latitude, longitude)
  era5_3h.nc      t2m every 3 hours from 2024-03-20 00:00 (10 times, t = hours / 3), latitude
                  -180-180 longitudes (-1.5 .. 0.75), float64
  era5_packed.nc  t2m packed as int16 (scale_factor 0.01, add_offset 270, _FillValue -32767) with the
                  point (j 0, i 0) missing at every time, time 7 missing at every point, and
                  t2m[time 4, j 2, i 3] missing (a stray gap)
  era5_masked.nc  era5_cds.nc's t2m over 40 hours with the points (j 2..3, i 3..4) missing (NaN) at
                  every time ("land") and hour 20 missing at every point
  era5_cds.zarr   era5_cds.nc's data set by xarray's to_zarr with zarr-python 2's defaults (Zarr v2,
                  Blosc lz4), chunks of 5 times x 3 x 4 points, so that a sample spans several
  era5_packed_zlib.zarr  era5_packed.nc's, int16 packed, zlib-compressed chunks
  era5_bad.zarr   era5_cds.zarr with t2m's chunk 1.0.0 cut short
  era5_v3.zarr    a store with only the root zarr.json of Zarr v3 (zarr-python 3's default format)
usage: make_era5_grids.py OUT_DIR
"""
import os
import sys

try:
    import numcodecs
    import numpy as np
    import xarray as xr
    import zarr  # noqa: F401 (to_zarr's)
except ImportError as e:
    print(f"make_era5_grids: {e} (python3-xarray, python3-zarr)")
    sys.exit(77)

NY, NX = 6, 7
lat = 52.0 - 0.25 * np.arange(NY)
lon360 = (358.5 + 0.25 * np.arange(NX)) % 360.0
out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def fields(hours):
    t = np.asarray(hours, dtype=np.float64)[:, None, None]
    j = np.arange(NY)[None, :, None]
    i = np.arange(NX)[None, None, :]
    t2m = 270.0 + t + 0.5 * j + 0.25 * i
    z = np.stack([lev + 2.0 * t + j - i for lev in (850.0, 500.0)], axis=1)
    lsm = np.broadcast_to(((i + j) % 2).astype(np.float64), t2m.shape)
    return t2m, z, lsm


hours = [h for h in range(14) if h != 6]
times = np.datetime64("2024-06-20T00:00", "ns") + np.array(hours) * np.timedelta64(1, "h")
t2m, z, lsm = fields(hours)
cds = xr.Dataset(
    {
        "t2m": (("valid_time", "latitude", "longitude"), t2m.astype(np.float32),
                {"units": "K", "long_name": "2 metre temperature", "GRIB_paramId": 167}),
        "lsm": (("valid_time", "latitude", "longitude"), lsm.astype(np.float32), {"units": "(0 - 1)"}),
        "z": (("valid_time", "pressure_level", "latitude", "longitude"), z.astype(np.float32),
              {"units": "m**2 s**-2"}),
    },
    coords={
        "number": 0,
        "valid_time": ("valid_time", times),
        "pressure_level": ("pressure_level", np.array([850.0, 500.0]), {"units": "hPa", "positive": "down"}),
        "latitude": ("latitude", lat, {"units": "degrees_north", "standard_name": "latitude"}),
        "longitude": ("longitude", lon360, {"units": "degrees_east", "standard_name": "longitude"}),
        "expver": ("valid_time", np.array(["0001"] * len(hours))),
    },
    attrs={"GRIB_centre": "ecmf", "Conventions": "CF-1.7", "institution": "European Centre for Medium-Range Weather Forecasts"},
)
cds.to_netcdf(os.path.join(out, "era5_cds.nc"),
              encoding={"valid_time": {"units": "seconds since 1970-01-01", "dtype": "int64"}})

# 3-hourly, -180-180 longitudes, float64.
hours3 = list(range(10))
t2m3, _, _ = fields(hours3)
three = xr.Dataset(
    {"t2m": (("time", "latitude", "longitude"), t2m3)},
    coords={"time": np.datetime64("2024-03-20T00:00", "ns") + np.array(hours3) * np.timedelta64(3, "h"),
            "latitude": lat, "longitude": -1.5 + 0.25 * np.arange(NX)},
)
three.to_netcdf(os.path.join(out, "era5_3h.nc"))

# int16 packed with missing points.
hp = list(range(10))
t2mp, _, _ = fields(hp)
t2mp[:, 0, 0] = np.nan
t2mp[4, 2, 3] = np.nan
t2mp[7] = np.nan
packed = xr.Dataset(
    {"t2m": (("time", "latitude", "longitude"), t2mp)},
    coords={"time": np.datetime64("2024-01-01T00:00", "ns") + np.array(hp) * np.timedelta64(1, "h"),
            "latitude": lat, "longitude": lon360},
)
packed.to_netcdf(os.path.join(out, "era5_packed.nc"), encoding={
    "t2m": {"dtype": "int16", "scale_factor": 0.01, "add_offset": 270.0, "_FillValue": -32767}})
# Always-missing points and a missing hour, nothing else.
hm = list(range(40))
t2mm, _, _ = fields(hm)
t2mm[:, 2:4, 3:5] = np.nan
t2mm[20] = np.nan
masked = xr.Dataset(
    {"t2m": (("valid_time", "latitude", "longitude"), t2mm.astype(np.float32))},
    coords={"valid_time": np.datetime64("2024-06-20T00:00", "ns") + np.array(hm) * np.timedelta64(1, "h"),
            "latitude": ("latitude", lat, {"units": "degrees_north"}),
            "longitude": ("longitude", lon360, {"units": "degrees_east"})},
)
masked.to_netcdf(os.path.join(out, "era5_masked.nc"))

# Zarr v2 stores as xarray writes them (mode w: the fixture may run again over an old scratch).
chunks = {"t2m": {"chunks": (5, 3, 4)}, "lsm": {"chunks": (5, 3, 4)}, "z": {"chunks": (5, 1, 3, 4)}}
cds.to_zarr(os.path.join(out, "era5_cds.zarr"), mode="w",
            encoding=dict(chunks, valid_time={"units": "seconds since 1970-01-01", "dtype": "int64"}))
packed.to_zarr(os.path.join(out, "era5_packed_zlib.zarr"), mode="w", encoding={
    "t2m": {"dtype": "int16", "scale_factor": 0.01, "add_offset": 270.0, "_FillValue": -32767,
            "compressor": numcodecs.Zlib(level=4)}})
cds.to_zarr(os.path.join(out, "era5_bad.zarr"), mode="w", encoding=chunks)
chunk = os.path.join(out, "era5_bad.zarr", "t2m", "1.0.0")
with open(chunk, "rb") as f:
    data = f.read()
with open(chunk, "wb") as f:
    f.write(data[: len(data) // 2])
os.makedirs(os.path.join(out, "era5_v3.zarr"), exist_ok=True)
with open(os.path.join(out, "era5_v3.zarr", "zarr.json"), "w") as f:
    f.write('{"zarr_format": 3, "node_type": "group", "attributes": {}}')
print("wrote", out)
