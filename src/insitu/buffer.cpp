// The rolling buffer's push, with the Fortran transpose (see buffer.hpp).
#include "insitu/buffer.hpp"

#include <cmath>

namespace hpct::insitu {

RollingBuffer::RollingBuffer(std::uint64_t capacity, int d_in, int d_out)
    : capacity_(capacity),
      d_in_(d_in),
      d_out_(d_out),
      x_(capacity * static_cast<std::uint64_t>(d_in)),
      y_(capacity * static_cast<std::uint64_t>(d_out)) {}

template <class T>
long long RollingBuffer::push(const T* x, const T* y, std::uint64_t n, Order order) {
  const auto dx = static_cast<std::uint64_t>(d_in_), dy = static_cast<std::uint64_t>(d_out_);
  auto at = [&](const T* a, std::uint64_t d, std::uint64_t i, std::uint64_t j) {
    return order == Order::row_major ? a[i * d + j] : a[i + j * n];
  };
  // Validate everything first: a rejected push leaves the buffer as it was.
  for (std::uint64_t i = 0; i < n * dx; ++i)
    if (!std::isfinite(x[i])) return static_cast<long long>(i);
  for (std::uint64_t i = 0; i < n * dy; ++i)
    if (!std::isfinite(y[i])) return static_cast<long long>(n * dx + i);
  // Only the newest `capacity` of a large push survive; skip the rest.
  const std::uint64_t skip = n > capacity_ ? n - capacity_ : 0;
  for (std::uint64_t i = skip; i < n; ++i) {
    std::uint64_t s = head_;  // full: the oldest slot, and the next one becomes the oldest
    if (size_ < capacity_) s = (head_ + size_++) % capacity_;
    else head_ = (head_ + 1) % capacity_;
    float* xs = &x_[s * dx];
    float* ys = &y_[s * dy];
    for (std::uint64_t j = 0; j < dx; ++j) xs[j] = static_cast<float>(at(x, dx, i, j));
    for (std::uint64_t j = 0; j < dy; ++j) ys[j] = static_cast<float>(at(y, dy, i, j));
  }
  pushed_ += n;
  return -1;
}

template long long RollingBuffer::push<float>(const float*, const float*, std::uint64_t, Order);
template long long RollingBuffer::push<double>(const double*, const double*, std::uint64_t, Order);

}  // namespace hpct::insitu
