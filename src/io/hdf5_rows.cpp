// The growing row datasets of hdf5_rows.hpp.
#include "io/hdf5_rows.hpp"

#include <algorithm>

#include "io/hdf5_detail.hpp"

namespace hpct::h5 {

using detail::library_mutex;
using detail::LibraryLock;
using detail::native_type;

template <class T>
RowAppender<T>::RowAppender(const File& f, const std::string& name, std::vector<std::uint64_t> row_dims)
    : file_(&f), name_(name), row_dims_(std::move(row_dims)) {
  const LibraryLock lock(library_mutex());
  for (const std::uint64_t d : row_dims_) row_size_ *= d;
  std::vector<hsize_t> dims = {0}, max = {H5S_UNLIMITED}, chunk;
  // Chunks of about 1 MiB of rows (at least one): appends of any size stay cheap, reads of a block
  // of rows touch few chunks.
  chunk.push_back(std::max<hsize_t>(1, (1u << 20) / (row_size_ * sizeof(T))));
  for (const std::uint64_t d : row_dims_) dims.push_back(d), max.push_back(d), chunk.push_back(d);
  Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), max.data()), H5Sclose);
  Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  H5Pset_chunk(dcpl.id(), static_cast<int>(chunk.size()), chunk.data());
  H5Pset_obj_track_times(dcpl.id(), 0);  // the same data, the same file bytes (as h5::write)
  const Handle lcpl = detail::link_creation_with_parents();
  const hid_t d = H5Dcreate2(f.id(), name.c_str(), native_type<T>(), space.id(), lcpl.id(), dcpl.id(), H5P_DEFAULT);
  if (d < 0) throw Error(f.path() + ": cannot create dataset '" + name + "'");
  dataset_ = Handle(d, H5Dclose);
}

template <class T>
void RowAppender<T>::append(const T* rows, std::uint64_t count) {
  if (count == 0) return;
  const LibraryLock lock(library_mutex());
  std::vector<hsize_t> dims = {rows_ + count}, start = {rows_}, block = {count};
  for (const std::uint64_t d : row_dims_) dims.push_back(d), start.push_back(0), block.push_back(d);
  const std::string what = file_->path() + ": writing dataset '" + name_ + "'";
  if (H5Dset_extent(dataset_.id(), dims.data()) < 0) throw Error(what + " failed (cannot extend it)");
  Handle space(H5Dget_space(dataset_.id()), H5Sclose);
  H5Sselect_hyperslab(space.id(), H5S_SELECT_SET, start.data(), nullptr, block.data(), nullptr);
  Handle memory(H5Screate_simple(static_cast<int>(block.size()), block.data(), nullptr), H5Sclose);
  if (H5Dwrite(dataset_.id(), native_type<T>(), memory.id(), space.id(), H5P_DEFAULT, rows) < 0)
    throw Error(what + " failed (disk full?)");
  rows_ += count;
}

template class RowAppender<float>;
template class RowAppender<long long>;

}  // namespace hpct::h5
