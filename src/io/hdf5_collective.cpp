// Files that every MPI rank writes together: the MPI-IO driver and collective hyperslab writes
// (parallel HDF5). Without the parallel library these calls report that they are unavailable.
#include <algorithm>

#include "core/error.hpp"
#include "io/hdf5.hpp"
#include "io/hdf5_detail.hpp"

namespace hpct::h5 {

using detail::library_mutex;
using detail::LibraryLock;
using detail::native_type;

bool parallel_available() {
#ifdef H5_HAVE_PARALLEL
  return true;
#else
  return false;
#endif
}

File File::create_collective(const std::string& path, MPI_Comm comm) {
  const LibraryLock lock(library_mutex());
#ifdef H5_HAVE_PARALLEL
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  if (H5Pset_fapl_mpio(fapl.id(), comm, MPI_INFO_NULL) < 0) throw Error(path + ": cannot set up MPI-IO access");
  return adopt(path, H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.id()),
               "cannot create HDF5 file (directory missing or not writable?)");
#else
  (void)comm;
  throw Error(path + ": writing one file from several ranks needs the parallel (MPI-IO) HDF5 build");
#endif
}

template <class T>
void write_rows_collective(const File& f, const std::string& name, const std::vector<std::uint64_t>& dims,
                           std::uint64_t first_row, std::uint64_t rows, const T* data) {
  const LibraryLock lock(library_mutex());
#ifdef H5_HAVE_PARALLEL
  const int rank = static_cast<int>(dims.size());
  std::vector<hsize_t> hd(dims.begin(), dims.end());
  Handle fspace(H5Screate_simple(rank, hd.data(), nullptr), H5Sclose);
  Handle lcpl = detail::link_creation_with_parents();
  // The same creation properties as write(): contiguous, no filters, no modification times, so the
  // file looks the same byte for byte whichever path wrote it.
  Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  H5Pset_obj_track_times(dcpl.id(), 0);
  hid_t d = H5Dcreate2(f.id(), name.c_str(), native_type<T>(), fspace.id(), lcpl.id(), dcpl.id(), H5P_DEFAULT);
  if (d < 0) throw Error(f.path() + ": cannot create dataset '" + name + "'");
  Handle dh(d, H5Dclose);
  std::vector<hsize_t> start(hd.size(), 0), count = hd;
  start[0] = first_row;
  count[0] = std::max<hsize_t>(rows, 1);  // a rank without rows selects nothing but still joins
  Handle mspace(H5Screate_simple(rank, count.data(), nullptr), H5Sclose);
  count[0] = rows;
  const bool ok = rows > 0 ? H5Sselect_hyperslab(fspace.id(), H5S_SELECT_SET, start.data(), nullptr, count.data(),
                                                 nullptr) >= 0
                           : H5Sselect_none(fspace.id()) >= 0 && H5Sselect_none(mspace.id()) >= 0;
  if (!ok) throw Error(f.path() + ": dataset '" + name + "': bad row block");
  Handle dxpl(H5Pcreate(H5P_DATASET_XFER), H5Pclose);
  H5Pset_dxpl_mpio(dxpl.id(), H5FD_MPIO_COLLECTIVE);
  const T none{};
  if (H5Dwrite(d, native_type<T>(), mspace.id(), fspace.id(), dxpl.id(), rows > 0 ? data : &none) < 0)
    throw Error(f.path() + ": writing dataset '" + name + "' failed (disk full?)");
#else
  (void)name, (void)dims, (void)first_row, (void)rows, (void)data;
  throw Error(f.path() + ": collective writes need the parallel (MPI-IO) HDF5 build");
#endif
}

template void write_rows_collective<float>(const File&, const std::string&, const std::vector<std::uint64_t>&,
                                           std::uint64_t, std::uint64_t, const float*);
template void write_rows_collective<double>(const File&, const std::string&, const std::vector<std::uint64_t>&,
                                            std::uint64_t, std::uint64_t, const double*);

}  // namespace hpct::h5
