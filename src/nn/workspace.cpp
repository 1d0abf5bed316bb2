// Workspace planning and the one allocation (see workspace.hpp).
#include "nn/workspace.hpp"

#include <cstdlib>
#include <string>

#include "core/error.hpp"

namespace hpct::nn {

template <class Scalar>
Workspace<Scalar>::ScratchScope::ScratchScope(Workspace& ws, const std::string& unit) : ws_(ws) {
  if (ws.unit_ >= 0) throw Error("internal: workspace scratch unit '" + unit + "' opened inside another");
  ws.units_.push_back(unit);
  ws.unit_ = static_cast<int>(ws.units_.size()) - 1;
}

template <class Scalar>
Workspace<Scalar>::RecomputeScope::RecomputeScope(Workspace& ws, const std::string& unit) : ws_(ws) {
  if (ws.unit_ >= 0) throw Error("internal: workspace recomputed unit '" + unit + "' opened inside another");
  ws.units_.push_back(unit);
  ws.unit_ = static_cast<int>(ws.units_.size()) - 1;
  ws.recompute_ = true;
}

template <class Scalar>
Tensor<Scalar>& Workspace<Scalar>::request(const std::string& name, const Shape& shape) {
  if (done_) throw Error("internal: workspace tensor '" + name + "' requested after allocate()");
  const std::size_t size = (static_cast<std::size_t>(shape.size()) + kAlign - 1) / kAlign * kAlign;
  requests_.push_back({name, size, recompute_ ? unit_ : -1, recompute_});
  planned_ += size;
  tensors_.emplace_back(nullptr, shape);
  return tensors_.back();
}

template <class Scalar>
Tensor<Scalar>& Workspace<Scalar>::request_scratch(const std::string& name, const Shape& shape) {
  Tensor<Scalar>& t = request(name, shape);
  if (unit_ >= 0 && !recompute_) requests_.back().unit = 2 * unit_ + 1;
  return t;
}

template <class Scalar>
typename Workspace<Scalar>::Request& Workspace<Scalar>::request_of(const Tensor<Scalar>& t) {
  if (done_) throw Error("internal: workspace layout changed after allocate()");
  for (std::size_t i = 0; i < tensors_.size(); ++i)
    if (&tensors_[i] == &t) return requests_[i];
  throw Error("internal: a tensor not from this workspace");
}

template <class Scalar>
void Workspace<Scalar>::to_scratch(const Tensor<Scalar>& t) {
  if (unit_ < 0 || recompute_) return;  // a recomputed unit's tensors are all in its block already
  request_of(t).unit = 2 * unit_;
}

template <class Scalar>
void Workspace<Scalar>::keep(const Tensor<Scalar>& t) {
  Request& r = request_of(t);
  if (r.recompute) r.unit = -1, r.recompute = false;
}

template <class Scalar>
void Workspace<Scalar>::allocate() {
  if (done_) throw Error("internal: workspace allocated twice");
  done_ = true;
  // Note [scratch units]: tensors of their own first, in request order, then the scratch block,
  // each unit's forward tensors from its start, and its backward tensors from its start again; then
  // the recomputed units' block (Note [recomputed units]), each unit's tensors from its start.
  std::vector<std::size_t> offset(requests_.size()), unit_end(2 * units_.size(), 0), kept_end(units_.size(), 0);
  std::size_t own = 0;
  for (std::size_t i = 0; i < requests_.size(); ++i) {
    const Request& r = requests_[i];
    std::size_t& end = r.unit < 0    ? own
                       : r.recompute ? kept_end[static_cast<std::size_t>(r.unit)]
                                     : unit_end[static_cast<std::size_t>(r.unit)];
    offset[i] = end;
    end += r.size;
  }
  std::size_t scratch = 0, recomputed = 0;
  for (const std::size_t e : unit_end) scratch = e > scratch ? e : scratch;
  for (const std::size_t e : kept_end) recomputed = e > recomputed ? e : recomputed;
  for (std::size_t i = 0; i < requests_.size(); ++i)
    if (requests_[i].unit >= 0) offset[i] += own + (requests_[i].recompute ? scratch : 0);
  // Extra kAlign elements so that the first tensor can start on an aligned address.
  const std::size_t n = own + scratch + recomputed + kAlign;
  if (kHostBackend) {
    // Note [lazy zeroed workspace]: a View is zero-filled by a kernel that writes every page of the
    // buffer at once: for SMART-tiny at batch 4 (3.2 GB, sized for the largest scenes' edge
    // counts) that first touch was a quarter of a short run's CPU time, and most of those pages
    // are never used again by a batch of ordinary scenes. calloc hands out the same zeros, but a
    // block this large comes from fresh pages the kernel zeroes on first use, so only the pages a
    // step touches are ever faulted in and no second zeroing pass runs; small blocks are cleared
    // by calloc itself. Layers may rely on the zeros (as before). GPU builds keep the View.
    host_block_.reset(std::calloc(n, sizeof(Scalar)));
    if (!host_block_)
      throw WorkspaceAllocationError("workspace: cannot allocate " + std::to_string(n * sizeof(Scalar)) + " bytes");
    buffer_ = View1<Scalar>(static_cast<Scalar*>(host_block_.get()), n);
  } else {
    buffer_ = View1<Scalar>("workspace", n);
  }
  Scalar* base = buffer_.data();
  const auto misalign = reinterpret_cast<std::uintptr_t>(base) % 64;
  const std::size_t skip = misalign == 0 ? 0 : (64 - misalign) / sizeof(Scalar);  // bytes to elements
  base += skip;
  for (std::size_t i = 0; i < tensors_.size(); ++i)
    tensors_[i] = Tensor<Scalar>(base + offset[i], tensors_[i].shape());
}

template class Workspace<float>;
template class Workspace<double>;

}  // namespace hpct::nn
