// The resnet model's loss, gradients, metrics and predictions (see resnet_model.hpp).
#include "models/resnet/resnet_model.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/heartbeat.hpp"
#include "core/log.hpp"

namespace hpct {

// p = softmax of each row of z (rows [0, n)), max-subtracted. Not in an anonymous namespace: CUDA's
// extended lambdas need an enclosing function with external linkage.
void resnet_softmax_rows(const View2<float>& z, const View2<float>& p, int n) {
  const int d = static_cast<int>(z.extent(1));
  Kokkos::parallel_for(
      "resnet_softmax", range(0, n), KOKKOS_LAMBDA(const int i) {
        float m = z(i, 0);
        for (int j = 1; j < d; ++j) m = z(i, j) > m ? z(i, j) : m;
        double s = 0;
        for (int j = 0; j < d; ++j) s += kmath::exp(static_cast<double>(z(i, j) - m));
        for (int j = 0; j < d; ++j) p(i, j) = static_cast<float>(kmath::exp(static_cast<double>(z(i, j) - m)) / s);
      });
}

// Integer labels to float (exact below 2^24). A free function: CUDA's extended lambdas need an
// enclosing function with external linkage.
template <class Int>
void resnet_labels_to_float(const View1<float>& out, const Int* labels, int n) {
  const View1<float> o = out;
  Kokkos::parallel_for(
      "resnet_labels", range(0, n), KOKKOS_LAMBDA(const int i) { o(i) = static_cast<float>(labels[i]); });
}

ResNetModel::ResNetModel(const ResNetConfig& config, int capacity, double label_smoothing)
    : net_(config, capacity),
      loss_(nn::LossKind::cross_entropy, label_smoothing),
      labels_("resnet_labels", static_cast<std::size_t>(std::max(capacity, 1))) {}

void ResNetModel::constrain_fields(std::vector<FieldSpec>& fields) const {
  for (FieldSpec& f : fields)
    if (f.name == Batch::kTargets && f.dtype != DType::f32)
      f.min_value = 0, f.max_value = net_.config().classes - 1;
}

Tensor<float> ResNetModel::targets(const Batch& b) const {
  const Batch::Field& t = b.field(Batch::kTargets);
  if (t.dtype == DType::f32) return b.targets();
  if (t.dtype == DType::i64) resnet_labels_to_float(labels_, b.get_as<std::int64_t>(Batch::kTargets).data(), b.n);
  else resnet_labels_to_float(labels_, b.get_as<std::int32_t>(Batch::kTargets).data(), b.n);
  return Tensor<float>(labels_.data(), Shape{b.n, 1});
}

Tensor<float> ResNetModel::images(const Batch& b) const {
  const ResNetConfig& c = net_.config();
  const Tensor<float> x = b.inputs();
  if (x.cols() != static_cast<std::int64_t>(c.channels) * c.height * c.width)
    throw Error(strf("resnet: the images have %lld values each; the model was built for %dx%dx%d",
                     (long long)x.cols(), c.channels, c.height, c.width),
                ExitCode::bad_input);
  return Tensor<float>(x.data(), Shape{b.n, c.channels, c.height, c.width});
}

std::string ResNetModel::config_string() const {
  // Note [stored configuration] in models/registry.hpp.
  const ResNetConfig& c = net_.config();
  return strf(
      "channels=%d height=%d width=%d num_classes=%d resnet_depth=%d resnet_width=%d resnet_stem=%s "
      "conv_algorithm=%s conv_deterministic=%s sync_batch_norm=%s",
      c.channels, c.height, c.width, c.classes, c.depth, c.base_width, c.small_stem ? "small" : "imagenet",
      tuning_.choice().c_str(), tuning_.deterministic() ? "true" : "false", synchronised_ ? "true" : "false");
}

double ResNetModel::accumulate_gradients(const Batch& b, double normaliser) {
  net_.set_training(true);
  if (b.n == 0) {
    const ResNetConfig& c = net_.config();
    empty_training_step(Tensor<float>(labels_.data(), Shape{0, c.channels, c.height, c.width}));
    return 0.0;
  }
  const Tensor<float> x = images(b);
  tuning_.before();
  const Tensor<float> y(net_.forward(x, b.n));
  const double sum = loss_.forward_backward(y, targets(b), net_.output_grad_tensor(), nn::GradMode::assign, b.n,
                                            normaliser);
  net_.backward(x, b.n);
  tuning_.after(reducer_);
  return sum;
}

double ResNetModel::loss_sum(const Batch& b) {
  if (b.n == 0) return 0.0;
  net_.set_training(false);
  const Tensor<float> y(net_.forward(images(b), b.n));
  return loss_.forward(y, targets(b), b.n);
}

std::vector<MetricSpec> ResNetModel::metrics(const EvalOptions& o) const {
  return {loss_metric(),
          {"accuracy", "val acc", 4, 1, false},
          {"top_k_accuracy", strf("top-%d", o.top_k), 4, 1, false}};
}

void ResNetModel::evaluate(const Batch& b, const EvalOptions& o, std::vector<double>& sums) {
  evaluate_chunks(b, o, b.n, sums.data());
}

// Note [fused conv validation]: Note [fused validation] (train/evaluator.cpp) for the resnet. In
// evaluation batch norm normalises by its running statistics, pooling and the classifier work per
// image, so a row's logits are a function of that row alone; whether a batch of n rows gives them
// the bits a chunk alone gives is up to the kernels each batch size runs: oneDNN builds one
// convolution primitive per batch size (Note [oneDNN plans]) and may choose another blocking or
// method for another one, OpenBLAS another kernel for another GEMM shape, so no rule about the
// library's choices is assumed. Instead each (batch rows, chunk rows) pair is checked on its first
// batch: the fused logits against those of every chunk run alone, bitwise. The kernels' summation
// orders depend on the shapes, not the values (the weights and images have full mantissas, so two
// orders differ in some bit), so the verdict holds for every later batch of that pair; where it
// fails, that pair runs chunk by chunk (one micro-batch per chunk, as unfused), and the log says
// so. Either way each chunk's metrics are reduced over its own rows by the kernels a batch of that
// chunk alone runs (evaluate is the one chunk of b.n rows): the bits of one micro-batch per chunk.
void ResNetModel::evaluate_chunks(const Batch& b, const EvalOptions& o, int rows, double* sums) {
  if (b.n == 0) return;
  net_.set_training(false);
  const Tensor<float> x = images(b), t = targets(b);
  // Note [fused conv validation]: a pair's first batch checks the evaluation-mode logits of x's
  // rows in one batch against those of each chunk alone (Note [fused verdicts]).
  const bool fused = fused_.fused(b.n, rows, static_cast<std::size_t>(net_.config().classes),
                                  [&](int first, int count) {
                                    return net_.forward(x.row_range(first, count), count).data();
                                  });
  const Tensor<float> all = fused ? Tensor<float>(net_.forward(x, b.n)) : Tensor<float>();
  for (int first = 0, k = 0; first < b.n; first += rows, ++k) {
    const int m = std::min(rows, b.n - first);
    const Tensor<float> y = fused ? all.row_range(first, m) : Tensor<float>(net_.forward(x.row_range(first, m), m));
    const Tensor<float> tc = t.row_range(first, m);
    double* s = sums + static_cast<std::size_t>(k) * 3;
    s[0] += loss_.forward(y, tc, m);
    s[1] += static_cast<double>(nn::count_top_k_hits(y, tc, m, 1));
    s[2] += static_cast<double>(nn::count_top_k_hits(y, tc, m, o.top_k));
  }
}

std::vector<NamedShape> ResNetModel::predict_inputs() const {
  const ResNetConfig& c = net_.config();
  return {{Batch::kInputs, {c.channels, c.height, c.width}}};
}

std::vector<NamedShape> ResNetModel::predict_outputs(const PredictOptions& o) const {
  std::vector<NamedShape> out;
  const std::int64_t d = net_.config().classes;
  if (output_wanted(o, "outputs")) out.push_back({"outputs", {d}});
  if (output_wanted(o, "probabilities")) out.push_back({"probabilities", {d}});
  return out;
}

Predictions ResNetModel::predict(const Batch& b, const PredictOptions& o) {
  const ResNetConfig& c = net_.config();
  const Tensor<float> x = images(b);
  const int n = b.n, chunk = std::max(1, std::min(o.chunk, net_.capacity()));
  net_.set_training(false);
  PredictOutput y{"outputs",
                  {n, c.classes},
                  View1<float>("resnet_outputs", static_cast<std::size_t>(n) * c.classes)};
  const View2<float> ym = y.matrix();
  const std::int64_t row = x.cols();
  for (int first = 0; first < n; first += chunk) {
    Heartbeat::beat_current("predicting a batch", std::string());  // Note [the tools' guard]
    const int rows = std::min(chunk, n - first);
    const Tensor<float> part(x.data() + first * row, Shape{rows, c.channels, c.height, c.width});
    const auto out = net_.forward(part, rows);
    Kokkos::deep_copy(Kokkos::subview(ym, Kokkos::make_pair(first, first + rows), Kokkos::ALL()),
                      Kokkos::subview(out, Kokkos::make_pair(0, rows), Kokkos::ALL()));
  }
  Predictions p;
  if (output_wanted(o, "outputs")) p.push_back(y);
  if (output_wanted(o, "probabilities")) {
    PredictOutput pr{"probabilities", y.shape, View1<float>("resnet_probabilities", y.values.extent(0))};
    resnet_softmax_rows(ym, pr.matrix(), n);
    p.push_back(pr);
  }
  return p;
}

}  // namespace hpct
