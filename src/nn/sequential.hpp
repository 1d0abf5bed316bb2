// Sequential: a chain of one-input layers, x -> layer_0 -> ... -> layer_{k-1} -> output(). It plans
// the gradient tensors between its layers in the Workspace and runs backward in reverse order, each
// layer assigning the gradient of its input (Note [the gradient rule]); the first layer's input
// gradient follows the caller's mode, or is skipped when the caller passes an empty dx.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "nn/layer.hpp"

namespace hpct::nn {

template <class Scalar>
class Sequential : public Layer<Scalar> {
 public:
  using T = Tensor<Scalar>;
  explicit Sequential(Workspace<Scalar>& ws) : ws_(&ws) {}

  // Constructs a layer in place, appends it and returns it.
  template <class L, class... Args>
  L& emplace(Args&&... args) {
    auto layer = std::make_unique<L>(std::forward<Args>(args)...);
    L& ref = *layer;
    if (!layers_.empty()) {
      // dL/d(output of the previous layer), the gradient the new layer hands back.
      const Shape s = layers_.back()->output().shape();
      grads_.push_back(&ws_->request("seq_grad", s));
    }
    layers_.push_back(std::move(layer));
    return ref;
  }

  void bind(const ParameterStore<Scalar>& store) override {
    for (auto& l : layers_) l->bind(store);
  }
  void forward(const T& x, int n) override {
    const T* in = &x;
    for (auto& l : layers_) {
      l->forward(*in, n);
      in = &l->output();
    }
  }
  void backward(const T& x, const T& dy, const T& dx, GradMode mode, int n) override {
    const T* g = &dy;
    for (std::size_t l = layers_.size(); l-- > 0;) {
      const T& in = l == 0 ? x : layers_[l - 1]->output();
      const T& d = l == 0 ? dx : *grads_[l - 1];
      layers_[l]->backward(in, *g, d, l == 0 ? mode : GradMode::assign, n);
      g = l == 0 ? g : grads_[l - 1];
    }
  }
  const T& output() const override {
    if (layers_.empty()) throw Error("internal: empty Sequential has no output");
    return layers_.back()->output();
  }
  std::size_t size() const { return layers_.size(); }
  Layer<Scalar>& operator[](std::size_t i) { return *layers_[i]; }

 private:
  Workspace<Scalar>* ws_;
  std::vector<std::unique_ptr<Layer<Scalar>>> layers_;
  std::vector<T*> grads_;  // grads_[l]: dL/d(output of layer l), l < size() - 1
};

}  // namespace hpct::nn
