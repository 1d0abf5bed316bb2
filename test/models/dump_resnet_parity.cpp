// Whole-network PyTorch parity of the ResNet (float32), written as HDF5 for
// test/python/resnet_parity.py. Two dumps of one training-mode forward (batch statistics) and the
// backward of L = sum(logits * probe): ResNet-18 (imagenet stem, width 16, 3x64x64 images, gemm
// convolutions, NCHW) and ResNet-50 (small stem, width 8, 3x16x16; direct convolutions). Attributes
// depth, width, stem, classes; params/<name> (our parameters under torchvision's state_dict names with
// '/' for '.'; running statistics as they were BEFORE the forward), input/x, probe, ours/y,
// ours/grad/<name>, ours/running/<name> (after).
// And the path users run (Note [parity on the default path]): a ResNet-18 model with a deck's
// default conv_algorithm, trained a few AdamW steps on cross-entropy (parity_resnet18_default.h5).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/rng.hpp"
#include "io/hdf5.hpp"
#include "models/resnet/resnet_model.hpp"
#include "nn/resnet.hpp"
#include "optim/optimizer.hpp"

namespace hpct {
namespace {

std::vector<float> host(const float* data, std::size_t count) {
  std::vector<float> v(count);
  Kokkos::deep_copy(Kokkos::View<float*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(v.data(), count),
                    Kokkos::View<const float*, MemSpace, Kokkos::MemoryUnmanaged>(data, count));
  return v;
}

View1<float> normal_view(std::size_t count, std::uint64_t key) {
  View1<float> v("v", count);
  auto h = Kokkos::create_mirror_view(v);
  for (std::size_t i = 0; i < count; ++i) h(i) = static_cast<float>(rng::normal(rng::hash(key, i)));
  Kokkos::deep_copy(v, h);
  return v;
}

// Batch norm weights and biases away from ones and zeros, so a swapped pair would show.
void spread_batch_norm(nn::ParameterStore<float>& store) {
  auto p = Kokkos::create_mirror_view(store.params());
  Kokkos::deep_copy(p, store.params());
  for (const auto& t : store.tensors()) {
    const bool bn_affine = t.name.find("bn") != std::string::npos ||
                           t.name.find("downsample/1") != std::string::npos;
    if (!bn_affine || !t.trainable) continue;
    const bool weight = t.name.size() >= 6 && t.name.compare(t.name.size() - 6, 6, "weight") == 0;
    for (std::uint64_t i = 0; i < t.size; ++i)
      p(t.offset + i) = static_cast<float>((weight ? 1.0 : 0.0) + 0.2 * rng::normal(rng::hash(3, t.offset + i)));
  }
  Kokkos::deep_copy(store.params(), p);
}

// Both dumps' starting point: the same seeded parameters (batch norm spread) and images.
std::vector<float> initial_parameters(nn::ParameterStore<float>& store) {
  store.initialize(11);
  spread_batch_norm(store);
  return host(store.params().data(), store.count());
}

View1<float> input_images(const ResNetConfig& c, int n) {
  return normal_view(static_cast<std::size_t>(n) * c.channels * c.height * c.width, 21);
}

std::vector<std::uint64_t> dims(std::initializer_list<int> d) {
  std::vector<std::uint64_t> r;
  for (int v : d) r.push_back(static_cast<std::uint64_t>(v));
  return r;
}

void write_network(const h5::File& f, const ResNetConfig& c) {
  h5::write_attr(f, "/", "depth", static_cast<long long>(c.depth));
  h5::write_attr(f, "/", "width", static_cast<long long>(c.base_width));
  h5::write_attr(f, "/", "classes", static_cast<long long>(c.classes));
  h5::write_attr(f, "/", "stem", std::string(c.small_stem ? "small" : "imagenet"));
}

void dump(const std::string& file, const ResNetConfig& c, int n) {
  ResNet<float> net(c, n);
  auto& store = net.store();
  const std::vector<float> before = initial_parameters(store);
  const View1<float> xv = input_images(c, n);
  const Tensor<float> x(xv.data(), Shape{n, c.channels, c.height, c.width});
  store.zero_grads();
  net.set_training(true);
  const auto y = net.forward(x, n);
  const View1<float> probe = normal_view(static_cast<std::size_t>(n) * c.classes, 22);
  Kokkos::deep_copy(net.output_grad_tensor().flat(), probe);
  net.backward(x, n);
  fence();
  const std::vector<float> after = host(store.params().data(), store.count());
  const std::vector<float> grads = host(store.grads().data(), store.count());
  const h5::File f = h5::File::create(file);
  write_network(f, c);
  for (const auto& t : store.tensors()) {
    h5::write(f, "params/" + t.name, t.shape, before.data() + t.offset);
    h5::write(f, (t.trainable ? "ours/grad/" : "ours/running/") + t.name, t.shape,
              (t.trainable ? grads : after).data() + t.offset);
  }
  const std::vector<float> xs = host(xv.data(), xv.extent(0)), ps = host(probe.data(), probe.extent(0));
  const std::vector<float> ys = host(y.data(), static_cast<std::size_t>(n) * c.classes);
  h5::write(f, "input/x", dims({n, c.channels, c.height, c.width}), xs.data());
  h5::write(f, "probe", dims({n, c.classes}), ps.data());
  h5::write(f, "ours/y", dims({n, c.classes}), ys.data());
}

// Note [parity on the default path]: users run `model resnet` without a conv_algorithm key, i.e.
// `library`: oneDNN convolutions on a host build that found it, and with them the blocked nChw16c
// activations (Note [blocked activations] in nn/conv_onednn.hpp) between the stem and the global
// pooling, a different batch norm, max pool, residual add and pooling code from the NCHW dumps
// above. This dump runs that path through the model itself (ResNetModel: the deck's default choice
// as apply_conv_keys passes it, its cross-entropy on integer labels) and the default optimizer
// (AdamW, weight decay on the store's decay mask) for `steps` steps, recording per step the loss,
// and after the first the logits and every gradient; at the end the weights, the running
// statistics and the evaluation-mode logits (running statistics). Attributes as above plus
// conv_algorithm, blocked, steps, lr, weight_decay; labels, ours/loss [steps], ours/y (step 1),
// ours/grad/<name> (step 1), ours/after/<name> (weights and running statistics after the steps),
// ours/eval_y.
void dump_default_path(const std::string& file, const ResNetConfig& c, int n, int steps) {
  ResNetModel model(c, n);
  model.set_conv_algorithm("library", false);  // the deck's default (resnet_family.cpp)
  auto& store = model.store();
  const std::vector<float> before = initial_parameters(store);
  const View1<float> xv = input_images(c, n);
  View1<std::int64_t> labels("labels", static_cast<std::size_t>(n));
  auto lh = Kokkos::create_mirror_view(labels);
  for (int i = 0; i < n; ++i) lh(i) = (3 * i + 1) % c.classes;
  Kokkos::deep_copy(labels, lh);
  const Tensor<float> x(xv.data(), Shape{n, c.channels, c.height, c.width});
  Batch b;
  b.set(Batch::kInputs, x);
  b.set(Batch::kTargets, Tensor<std::int64_t>(labels.data(), Shape{n, 1}));
  b.n = n;
  optim::OptimizerConfig oc;  // the deck's defaults (train/config.cpp) but a visible weight decay
  oc.kind = "adamw", oc.weight_decay = 0.05;
  const double lr = 1e-3;
  optim::Optimizer<float> opt(oc, store.count(), store.decay_mask());
  // The first step's logits from a training forward of its own, whose running statistics update
  // is then undone (the model's step does not hand its logits out).
  model.net().set_training(true);
  const std::vector<float> y1 = host(model.net().forward(x, n).data(), static_cast<std::size_t>(n) * c.classes);
  Kokkos::deep_copy(store.params(), Kokkos::View<const float*, Kokkos::HostSpace>(before.data(), before.size()));
  std::vector<double> losses;
  std::vector<float> grads;
  store.zero_grads();
  for (int step = 0; step < steps; ++step) {
    losses.push_back(model.accumulate_gradients(b, n) / n);  // Model: the sum over rows; mean as torch
    if (step == 0) grads = host(store.grads().data(), store.count());
    // Zeroing in the update, as the trainer's step does (Note [gradient zeroing in the update]):
    // the layers add their gradients to the store's.
    opt.step(store.param_span(), optim::Optimizer<float>::Vector(store.grads().data(), store.count()), lr, true);
  }
  const bool blocked = model.net().blocked();
  EXPECT_EQ(blocked, nn::conv_algorithm_available(nn::ConvAlgorithm::onednn))
      << "the default path of this build should run the activations blocked exactly when it has oneDNN";
  model.net().set_training(false);
  const std::vector<float> eval_y = host(model.net().forward(x, n).data(), static_cast<std::size_t>(n) * c.classes);
  fence();
  const std::vector<float> after = host(store.params().data(), store.count());
  const h5::File f = h5::File::create(file);
  write_network(f, c);
  h5::write_attr(f, "/", "conv_algorithm", std::string(nn::conv_algorithm_name(nn::conv_algorithm_library())));
  h5::write_attr(f, "/", "blocked", static_cast<long long>(blocked));
  h5::write_attr(f, "/", "steps", static_cast<long long>(steps));
  h5::write_attr(f, "/", "lr", lr);
  h5::write_attr(f, "/", "weight_decay", oc.weight_decay);
  for (const auto& t : store.tensors()) {
    h5::write(f, "params/" + t.name, t.shape, before.data() + t.offset);
    if (t.trainable) h5::write(f, "ours/grad/" + t.name, t.shape, grads.data() + t.offset);
    h5::write(f, "ours/after/" + t.name, t.shape, after.data() + t.offset);
  }
  const std::vector<float> xs = host(xv.data(), xv.extent(0));
  h5::write(f, "input/x", dims({n, c.channels, c.height, c.width}), xs.data());
  const std::vector<long long> ls(lh.data(), lh.data() + n);
  h5::write(f, "labels", dims({n}), ls.data());
  h5::write(f, "ours/loss", dims({steps}), losses.data());
  h5::write(f, "ours/y", dims({n, c.classes}), y1.data());
  h5::write(f, "ours/eval_y", dims({n, c.classes}), eval_y.data());
}

TEST(ResNetParityDump, ResNet18AndResNet50) {
  // Sizes where every batch norm sees at least 16 values per channel: with fewer, the batch
  // statistics' backward cancels so much that fp32 itself (ours or torch's) strays ~1e-2 from the
  // exact gradient (measured: torch fp32 vs fp64 1.2e-2 for ResNet-50 on 3 images of 64x64).
  ResNetConfig c;
  c.channels = 3, c.height = 64, c.width = 64, c.classes = 7, c.base_width = 16, c.depth = 18;
  dump("parity_resnet18.h5", c, 4);
  c.depth = 50, c.base_width = 8, c.height = c.width = 16, c.small_stem = true;
  c.conv_algorithm = nn::ConvAlgorithm::direct;
  dump("parity_resnet50.h5", c, 4);
}

TEST(ResNetParityDump, ResNet18OnTheDefaultPath) {
  ResNetConfig c;  // the ResNet-18 above: every width a multiple of 16, layer4 2x2 (blocked)
  c.channels = 3, c.height = 64, c.width = 64, c.classes = 7, c.base_width = 16, c.depth = 18;
  dump_default_path("parity_resnet18_default.h5", c, 4, 3);
}

}  // namespace
}  // namespace hpct
