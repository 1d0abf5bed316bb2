"""NetCDF-4 files as xarray writes them, for the `netcdf` data source's tests (test_netcdf_source).

Values are exact in float32 and known to the test: h = 100 t + 10 y + x, u = -50 t + y - 2 x,
sun = t + 0.25 y, orog = 3 y + x (t, y, x: indices).
  grids_f32.nc   float32, dims (time, y, x) with CF `axis` attributes, coordinates, attributes; also
                 a variable h4 (time, level, y, x) for the wrong-dimensions error, level 50000 Pa
  grids_f64.nc   float64, dims (time, lon, lat): x before y, found by the names lat/lon
  grids_nan.nc   grids_f32.nc with h[time 5, y 2, x 3] = NaN
  grids_all_nan.nc  grids_f32.nc with h NaN everywhere
  grids_cut.nc   the first half of grids_f32.nc
  grids_offgrid.nc  grids_f32.nc with time 6 at 06:30
usage: make_netcdf_grids.py OUT_DIR
"""
import os
import sys

try:
    import numpy as np
    import xarray as xr
except ImportError as e:  # the runner (reference_python.sh) turns this into a failure where the venv exists
    print(f"make_netcdf_grids: {e} (python3-xarray)")
    sys.exit(77)

T, NY, NX = 12, 4, 5
t, y, x = np.meshgrid(np.arange(T), np.arange(NY), np.arange(NX), indexing="ij")
h = 100.0 * t + 10.0 * y + x
u = -50.0 * t + y - 2.0 * x
sun = t + 0.25 * y
orog = (3.0 * y + x)[0]
times = np.datetime64("2026-01-01T00:00") + np.arange(T) * np.timedelta64(1, "h")
ycoord = 25000.0 * np.arange(NY)  # metres
xcoord = 25000.0 * np.arange(NX)


def f32(dtype):
    ds = xr.Dataset(
        {
            "h": (("time", "y", "x"), h.astype(dtype), {"long_name": "fluid depth", "units": "m"}),
            "u": (("time", "y", "x"), u.astype(dtype), {"units": "m s-1"}),
            "sun": (("time", "y", "x"), sun.astype(dtype)),
            "orog": (("y", "x"), orog.astype(dtype), {"units": "m"}),
            "h4": (("time", "level", "y", "x"), h[:, None].astype(dtype)),
        },
        coords={"time": times, "y": ("y", ycoord, {"axis": "Y", "units": "m"}),
                "level": ("level", [50000.0], {"units": "Pa"}),  # CMIP's plev: pressure in Pa
                "x": ("x", xcoord, {"axis": "X", "units": "m"})},
        attrs={"Conventions": "CF-1.8", "title": "test grids"},
    )
    return ds


out = sys.argv[1]
os.makedirs(out, exist_ok=True)
f32(np.float32).to_netcdf(os.path.join(out, "grids_f32.nc"))
bad = f32(np.float32)
bad["h"][5, 2, 3] = np.nan
bad.to_netcdf(os.path.join(out, "grids_nan.nc"))
bad["h"][:] = np.nan
bad.to_netcdf(os.path.join(out, "grids_all_nan.nc"))
off = f32(np.float32)  # one time off the hourly grid: 06:30
off = off.assign_coords(time=off.time.values + np.where(np.arange(T) == 6, np.timedelta64(30, "m"), np.timedelta64(0, "m")))
off.to_netcdf(os.path.join(out, "grids_offgrid.nc"))
with open(os.path.join(out, "grids_f32.nc"), "rb") as f:  # a download cut short
    data = f.read()
with open(os.path.join(out, "grids_cut.nc"), "wb") as f:
    f.write(data[: len(data) // 2])
f64 = xr.Dataset(
    {
        "h": (("time", "lon", "lat"), h.transpose(0, 2, 1).astype(np.float64)),
        "u": (("time", "lon", "lat"), u.transpose(0, 2, 1).astype(np.float64)),
        "sun": (("time", "lon", "lat"), sun.transpose(0, 2, 1).astype(np.float64)),
        "orog": (("lon", "lat"), orog.T.astype(np.float64)),
    },
    coords={"time": times, "lat": 50.0 + 0.25 * np.arange(NY), "lon": 5.0 + 0.25 * np.arange(NX)},
)
f64.to_netcdf(os.path.join(out, "grids_f64.nc"))
print("wrote", out)
