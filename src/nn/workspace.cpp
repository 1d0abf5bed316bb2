// Workspace planning and the one allocation (see workspace.hpp).
#include "nn/workspace.hpp"

#include <cstdlib>
#include <string>

#include "core/error.hpp"

namespace hpct::nn {

template <class Scalar>
Tensor<Scalar>& Workspace<Scalar>::request(const std::string& name, const Shape& shape) {
  if (done_) throw Error("internal: workspace tensor '" + name + "' requested after allocate()");
  requests_.push_back({name, planned_});
  planned_ += (static_cast<std::size_t>(shape.size()) + kAlign - 1) / kAlign * kAlign;
  tensors_.emplace_back(nullptr, shape);
  return tensors_.back();
}

template <class Scalar>
void Workspace<Scalar>::allocate() {
  if (done_) throw Error("internal: workspace allocated twice");
  done_ = true;
  // Extra kAlign elements so that the first tensor can start on an aligned address.
  const std::size_t n = planned_ + kAlign;
  if (kHostBackend) {
    // Note [lazy zeroed workspace]: a View is zero-filled by a kernel that writes every page of the
    // buffer at once: for SMART-tiny at batch 4 (3.2 GB, sized for the largest scenes' edge
    // counts) that first touch was a quarter of a short run's CPU time, and most of those pages
    // are never used again by a batch of ordinary scenes. calloc hands out the same zeros, but a
    // block this large comes from fresh pages the kernel zeroes on first use, so only the pages a
    // step touches are ever faulted in and no second zeroing pass runs; small blocks are cleared
    // by calloc itself. Layers may rely on the zeros (as before). GPU builds keep the View.
    host_block_.reset(std::calloc(n, sizeof(Scalar)));
    if (!host_block_) throw Error("workspace: cannot allocate " + std::to_string(n * sizeof(Scalar)) + " bytes");
    buffer_ = View1<Scalar>(static_cast<Scalar*>(host_block_.get()), n);
  } else {
    buffer_ = View1<Scalar>("workspace", n);
  }
  Scalar* base = buffer_.data();
  const auto misalign = reinterpret_cast<std::uintptr_t>(base) % 64;
  if (misalign != 0) base += (64 - misalign) / sizeof(Scalar);
  for (std::size_t i = 0; i < tensors_.size(); ++i)
    tensors_[i] = Tensor<Scalar>(base + requests_[i].offset, tensors_[i].shape());
}

template class Workspace<float>;
template class Workspace<double>;

}  // namespace hpct::nn
