// A contiguous dataset written in pieces of rows (h5::write_in_pieces in hdf5.hpp): arrays larger
// than memory, such as scenes_import's scenes of a whole data set, kept in a spool file until their
// size is known.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "io/hdf5.hpp"
#include "io/hdf5_detail.hpp"

namespace hpct::h5 {

using detail::library_mutex;
using detail::LibraryLock;
using detail::native_type;

// Note [a contiguous dataset in pieces]
// A reader of these files (train's scene data, smart_eval, h5diff, a user's checksum) should not be
// able to tell how a file was written. The dataset is created exactly as write() creates it (the
// same dataspace and creation properties: contiguous, no times) and filled by hyperslabs of whole
// rows, first to last. Contiguous storage is allocated whole at the first write (HDF5's late
// allocation) and no fill value is written, so the file's structure and bytes equal those of one
// H5Dwrite of the whole array. An extendible (chunked) dataset would have avoided knowing the size
// first, but it changes the layout, the bytes and the reader's I/O pattern; the caller keeps the
// rows in a spool file instead (io/spool_file.hpp) and writes once it knows their count.
template <class T>
void write_in_pieces(const File& f, const std::string& name, const std::vector<std::uint64_t>& dims,
                     const std::function<void(T* out, std::uint64_t rows)>& fill, std::size_t piece_bytes) {
  if (dims.empty() || dims[0] == 0) {  // nothing to fill: as write() of an empty array
    const std::vector<T> none;
    write(f, name, dims, none.data());
    return;
  }
  std::uint64_t row = 1;  // elements per row
  for (std::size_t k = 1; k < dims.size(); ++k) row *= dims[k];
  const std::uint64_t per_piece = std::max<std::uint64_t>(1, piece_bytes /
                                                                 std::max<std::uint64_t>(1, row * sizeof(T)));
  std::vector<T> buffer(static_cast<std::size_t>(std::min(per_piece, dims[0]) * row));
  std::vector<hsize_t> hd(dims.begin(), dims.end());
  Handle space, dataset;
  {
    const LibraryLock lock(library_mutex());
    space = Handle(H5Screate_simple(static_cast<int>(hd.size()), hd.data(), nullptr), H5Sclose);
    Handle lcpl = detail::link_creation_with_parents();
    Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
    H5Pset_obj_track_times(dcpl.id(), 0);  // as write(): no modification times
    const hid_t d = H5Dcreate2(f.id(), name.c_str(), native_type<T>(), space.id(), lcpl.id(), dcpl.id(),
                               H5P_DEFAULT);
    if (d < 0) throw Error(f.path() + ": cannot create dataset '" + name + "'");
    dataset = Handle(d, H5Dclose);
  }
  for (std::uint64_t first = 0; first < dims[0];) {
    const std::uint64_t rows = std::min(per_piece, dims[0] - first);
    fill(buffer.data(), rows);  // outside the lock: it may read files and throw
    const LibraryLock lock(library_mutex());
    std::vector<hsize_t> start(hd.size(), 0), count(hd);
    start[0] = first, count[0] = rows;
    Handle memory(H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr), H5Sclose);
    if (H5Sselect_hyperslab(space.id(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr) < 0 ||
        H5Dwrite(dataset.id(), native_type<T>(), memory.id(), space.id(), H5P_DEFAULT, buffer.data()) < 0)
      throw Error(f.path() + ": writing dataset '" + name + "' failed (disk full?)");
    first += rows;
  }
  const LibraryLock lock(library_mutex());
  dataset.reset(), space.reset();
}

// T names a type in template arguments, where parentheses cannot go.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define HPCT_H5_PIECES(T)                                                                              \
  template void write_in_pieces<T>(const File&, const std::string&, const std::vector<std::uint64_t>&, \
                                   const std::function<void(T*, std::uint64_t)>&, std::size_t);
// NOLINTEND(bugprone-macro-parentheses)
HPCT_H5_PIECES(float)
HPCT_H5_PIECES(double)
HPCT_H5_PIECES(std::int32_t)
HPCT_H5_PIECES(long long)
#undef HPCT_H5_PIECES

}  // namespace hpct::h5
