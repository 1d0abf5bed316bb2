// What the HDF5 wrapper's translation units share and nothing else needs: the lock every HDF5
// call holds, the native type of an element type, the link-creation property list.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <mutex>
#include <type_traits>

#include "io/hdf5.hpp"

namespace hpct::h5::detail {

// Note (one HDF5 call at a time): Debian's HDF5 is built without its thread-safety lock, and the
// data loader thread reads while the main thread may write a checkpoint. Every function of the
// wrapper that calls into HDF5 holds this lock; recursive because they call one another.
std::recursive_mutex& library_mutex();
using LibraryLock = std::lock_guard<std::recursive_mutex>;

template <class T>
hid_t native_type() {
  if constexpr (std::is_same_v<T, float>) return H5T_NATIVE_FLOAT;
  else if constexpr (std::is_same_v<T, double>) return H5T_NATIVE_DOUBLE;
  else if constexpr (std::is_same_v<T, int>) return H5T_NATIVE_INT;
  else if constexpr (std::is_same_v<T, long long>) return H5T_NATIVE_LLONG;
  else if constexpr (std::is_same_v<T, std::int64_t>) return H5T_NATIVE_INT64;
  else if constexpr (std::is_same_v<T, std::uint64_t>) return H5T_NATIVE_UINT64;
  else if constexpr (std::is_same_v<T, std::uint8_t>) return H5T_NATIVE_UINT8;
  else if constexpr (std::is_same_v<T, std::int32_t>) return H5T_NATIVE_INT32;
  else static_assert(sizeof(T) == 0, "unsupported HDF5 element type");
}

// Link creation that makes missing intermediate groups.
Handle link_creation_with_parents();

}  // namespace hpct::h5::detail
