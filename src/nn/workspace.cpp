// Workspace planning and the one allocation (see workspace.hpp).
#include "nn/workspace.hpp"

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
  buffer_ = View1<Scalar>("workspace", planned_ + kAlign);
  Scalar* base = buffer_.data();
  const auto misalign = reinterpret_cast<std::uintptr_t>(base) % 64;
  if (misalign != 0) base += (64 - misalign) / sizeof(Scalar);
  for (std::size_t i = 0; i < tensors_.size(); ++i)
    tensors_[i] = Tensor<Scalar>(base + requests_[i].offset, tensors_[i].shape());
}

template class Workspace<float>;
template class Workspace<double>;

}  // namespace hpct::nn
