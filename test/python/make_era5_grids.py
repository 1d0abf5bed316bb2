"""ERA5-like files as users get them, for the netcdf source's CDS conventions (test_era5_sources).

The data sets and their values are built in era5_datasets.py (shared with make_era5_zarr3.py):
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
  era5_sfc_a.nc, era5_sfc_b.nc, era5_pl.nc  era5_cds.nc's t2m and lsm split in time (hours since
                  1900 and seconds since 1970), and z; era5_pl_short.nc  z over the first 10 times
  era5_3h_projected.nc  era5_3h.nc's t2m over (time, y, x) in metres with 2-D latitude/longitude
  era5_download.zip, era5_download.nc  a ZIP of era5_sfc_a.nc, as the CDS delivers mixed stepTypes
  era5_packed_a.nc, era5_packed_b.nc  era5_packed.nc's halves, packed with scale 0.01 and 0.25
  era5_packed_u16.nc, era5_packed_unsigned.nc  era5_packed.nc's t2m packed as uint16 (NetCDF-4) and
                  as NetCDF-3 short with _Unsigned "true"; *_decoded.nc: xarray's reading of each
  era5_cds.zarr   era5_cds.nc's data set by xarray's to_zarr with zarr-python 2's defaults (Zarr v2,
                  Blosc lz4), chunks of 5 times x 3 x 4 points, so that a sample spans several
  era5_packed_zlib.zarr  era5_packed.nc's, int16 packed, zlib-compressed chunks
  era5_packed_u16.zarr   era5_packed_u16.nc's, uint16 packed
  era5_bad.zarr   era5_cds.zarr with t2m's chunk 1.0.0 cut short
usage: make_era5_grids.py OUT_DIR
"""
import os
import sys
import zipfile

try:
    import netCDF4
    import numcodecs
    import numpy as np
    import xarray as xr
    import zarr  # noqa: F401 (to_zarr's)
except ImportError as e:
    print(f"make_era5_grids: {e} (python3-xarray, python3-zarr, python3-netcdf4)")
    sys.exit(77)

from era5_datasets import CDS_TIME, NX, NY, PACKED_T2M, ZARR_CHUNKS, cds, masked, packed, three  # noqa: E402

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
cds.to_netcdf(os.path.join(out, "era5_cds.nc"), encoding={"valid_time": CDS_TIME})
three.to_netcdf(os.path.join(out, "era5_3h.nc"))
packed.to_netcdf(os.path.join(out, "era5_packed.nc"), encoding={"t2m": PACKED_T2M})
masked.to_netcdf(os.path.join(out, "era5_masked.nc"))
# era5_3h.nc's t2m on a "projected" grid as CERRA's NetCDF has it: y and x in metres, latitude and
# longitude 2-D over (y, x) (here those of the regular grid, so every derived input must agree).
ys, xs = 5500.0 * np.arange(NY), 5500.0 * np.arange(NX)
lat2d, lon2d = np.meshgrid(three["latitude"].values, three["longitude"].values, indexing="ij")
projected = xr.Dataset(
    {"t2m": (("time", "y", "x"), three["t2m"].values.astype(np.float32))},
    coords={"time": three["time"].values, "y": ("y", ys, {"units": "m"}), "x": ("x", xs, {"units": "m"}),
            "latitude": (("y", "x"), lat2d, {"units": "degrees_north"}),
            "longitude": (("y", "x"), lon2d, {"units": "degrees_east"})},
)
projected.to_netcdf(os.path.join(out, "era5_3h_projected.nc"))
# The CDS data set as the store delivers it for longer periods (test_grid_file_lists): single levels in two
# files split in time (their times in different units), pressure levels in a third; the packed file
# in two halves packed differently; z over fewer times.
sfc, pl = cds[["t2m", "lsm"]], cds[["z"]]
sfc.isel(valid_time=slice(0, 6)).to_netcdf(os.path.join(out, "era5_sfc_a.nc"),
                                           encoding={"valid_time": {"units": "hours since 1900-01-01"}})
sfc.isel(valid_time=slice(6, None)).to_netcdf(os.path.join(out, "era5_sfc_b.nc"), encoding={"valid_time": CDS_TIME})
pl.to_netcdf(os.path.join(out, "era5_pl.nc"), encoding={"valid_time": CDS_TIME})
pl.isel(valid_time=slice(0, 10)).to_netcdf(os.path.join(out, "era5_pl_short.nc"), encoding={"valid_time": CDS_TIME})
# The CDS's download of a request mixing instantaneous and accumulated variables: a ZIP of NetCDF
# files, one per stepType, whatever name the user saved it under (cdsapi's target).
for name in ("era5_download.zip", "era5_download.nc"):
    with zipfile.ZipFile(os.path.join(out, name), "w") as z:
        z.write(os.path.join(out, "era5_sfc_a.nc"), "data_stream-oper_stepType-instant.nc")
packed.isel(time=slice(0, 5)).to_netcdf(os.path.join(out, "era5_packed_a.nc"), encoding={"t2m": PACKED_T2M})
packed.isel(time=slice(5, None)).to_netcdf(os.path.join(out, "era5_packed_b.nc"), encoding={
    "t2m": dict(PACKED_T2M, scale_factor=0.25, add_offset=260.0)})

# Unsigned 16-bit packing (Note [_Unsigned] in netcdf_grid.cpp): NetCDF-4's ushort by xarray, and
# NetCDF-3's short with _Unsigned "true" (netCDF4-python: the same stored values, all above 32767),
# each beside xarray's own decoding of it as float32.
U16 = {"dtype": "uint16", "scale_factor": 0.005, "add_offset": 100.0, "_FillValue": 65535}
packed.to_netcdf(os.path.join(out, "era5_packed_u16.nc"), encoding={"t2m": U16})
with netCDF4.Dataset(os.path.join(out, "era5_packed_u16.nc")) as src, \
        netCDF4.Dataset(os.path.join(out, "era5_packed_unsigned.nc"), "w", format="NETCDF3_64BIT") as dst:
    for name, dim in src.dimensions.items():
        dst.createDimension(name, len(dim))
    for name, var in src.variables.items():
        var.set_auto_maskandscale(False)
        raw = var[:]
        if name == "t2m":
            v = dst.createVariable(name, "i2", var.dimensions, fill_value=np.int16(-1))  # 65535 unsigned
            v.setncatts({"scale_factor": var.scale_factor, "add_offset": var.add_offset, "_Unsigned": "true"})
            v.set_auto_maskandscale(False)
            v[:] = raw.view(np.int16)
        else:
            v = dst.createVariable(name, "f8", var.dimensions)  # NetCDF-3 has no int64 (the time)
            v.setncatts({a: var.getncattr(a) for a in var.ncattrs() if a != "_FillValue"})
            v[:] = raw.astype(np.float64)
for name in ("era5_packed_u16", "era5_packed_unsigned"):
    with xr.open_dataset(os.path.join(out, name + ".nc")) as ds:
        ds.astype(np.float32).to_netcdf(os.path.join(out, name + "_decoded.nc"), encoding={"t2m": {"_FillValue": None}})

# Zarr v2 stores as xarray writes them (mode w: the fixture may run again over an old scratch).
cds.to_zarr(os.path.join(out, "era5_cds.zarr"), mode="w", encoding=dict(ZARR_CHUNKS, valid_time=CDS_TIME))
packed.to_zarr(os.path.join(out, "era5_packed_zlib.zarr"), mode="w",
               encoding={"t2m": dict(PACKED_T2M, compressor=numcodecs.Zlib(level=4))})
packed.to_zarr(os.path.join(out, "era5_packed_u16.zarr"), mode="w", encoding={"t2m": U16})
cds.to_zarr(os.path.join(out, "era5_bad.zarr"), mode="w", encoding=ZARR_CHUNKS)
chunk = os.path.join(out, "era5_bad.zarr", "t2m", "1.0.0")
with open(chunk, "rb") as f:
    data = f.read()
with open(chunk, "wb") as f:
    f.write(data[: len(data) // 2])
print("wrote", out)
