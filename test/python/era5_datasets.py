"""The ERA5-like data sets of the weather-source tests, built with numpy and xarray and written by
make_era5_grids.py (NetCDF, Zarr v2) and make_era5_zarr3.py (Zarr v3). Values are exact in float32
and known to the tests (t, j, i: time, latitude, longitude indices):
  t2m = 270 + t + 0.5 j + 0.25 i,  z = level + 2 t + j - i (levels 850 and 500),  lsm = (i + j) % 2
"""
import numpy as np
import xarray as xr

# Encodings shared by the writers.
CDS_TIME = {"units": "seconds since 1970-01-01", "dtype": "int64"}
PACKED_T2M = {"dtype": "int16", "scale_factor": 0.01, "add_offset": 270.0, "_FillValue": -32767}
# Chunks across the time and both axes, so that a sample spans several.
ZARR_CHUNKS = {"t2m": {"chunks": (5, 3, 4)}, "lsm": {"chunks": (5, 3, 4)}, "z": {"chunks": (5, 1, 3, 4)}}

NY, NX = 6, 7
lat = 52.0 - 0.25 * np.arange(NY)
lon360 = (358.5 + 0.25 * np.arange(NX)) % 360.0


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

# 3-hourly, -180-180 longitudes, float64; z on two pressure levels (test/data/anemoi's source).
hours3 = list(range(10))
t2m3, z3, _ = fields(hours3)
three = xr.Dataset(
    {"t2m": (("time", "latitude", "longitude"), t2m3),
     "z": (("time", "level", "latitude", "longitude"), z3, {"units": "m**2 s**-2"})},
    coords={"time": np.datetime64("2024-03-20T00:00", "ns") + np.array(hours3) * np.timedelta64(3, "h"),
            "level": ("level", np.array([850, 500]), {"units": "hPa", "positive": "down"}),
            "latitude": lat, "longitude": -1.5 + 0.25 * np.arange(NX)},
)

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