// Forward and backward of the diffusion denoiser (see diffusion_net.hpp) on the nn layers.
#include "models/diffusion/diffusion_net.hpp"

#include <cmath>

#include "core/error.hpp"
#include "core/log.hpp"

namespace hpct {

std::uint64_t DiffusionConfig::parameter_count() const {
  auto lin = [](std::uint64_t in, std::uint64_t out) { return in * out + out; };
  const std::uint64_t H = static_cast<std::uint64_t>(hidden);
  return lin(static_cast<std::uint64_t>(time_dim), H) + lin(static_cast<std::uint64_t>(net_context()), H) +
         lin(static_cast<std::uint64_t>(n_fine), H) + static_cast<std::uint64_t>(depth) * lin(H, H) +
         lin(H, static_cast<std::uint64_t>(n_fine));
}

template <class Scalar>
void sinusoidal_embedding(const View1<Scalar>& t, const View2<Scalar>& emb, int n) {
  const int E = static_cast<int>(emb.extent(1)), half = E / 2;
  const double log_base = std::log(10000.0);
  Kokkos::parallel_for(
      "sinusoid_emb", range(0, static_cast<long>(n) * half), KOKKOS_LAMBDA(const long idx) {
        const long r = idx / half;
        const int i = static_cast<int>(idx % half);
        const double w = kmath::exp(-log_base * static_cast<double>(i) / static_cast<double>(half));
        const double a = static_cast<double>(t(r)) * w;
        emb(r, i) = static_cast<Scalar>(kmath::sin(a));
        emb(r, i + half) = static_cast<Scalar>(kmath::cos(a));
      });
}

// Note [timestep embedding table]: training draws whole timesteps 0..T-1, so the embedding's rows
// are T distinct ones, each costing E/2 double sin and cos (libm's, not vectorised: 1.2% of a
// batch-256 step). They are computed once, by the same code on the same values, into a table, and
// the step copies rows from it: the same bits as before. Other t (fractional, out of range) are
// computed as before.
template <class Scalar>
void sinusoidal_embedding(const View1<Scalar>& t, const View2<Scalar>& emb, int n, const View2<Scalar>& table) {
  const int E = static_cast<int>(emb.extent(1)), half = E / 2;
  const long rows = static_cast<long>(table.extent(0));
  const double log_base = std::log(10000.0);
  // Work items: on host backends a row (a table row is copied in one loop: per value, the
  // index arithmetic and the test on t cost more than the copy, 0.7% of a batch-16 step of the
  // denoiser), on devices a (row, i) pair. A label of at most 15 characters: a longer one is a
  // std::string allocation per launch.
  const long per_row = kHostBackend ? half : 1;
  for_range(
      "sinusoid_rows", 0l, static_cast<long>(n) * half / per_row, KOKKOS_LAMBDA(const long item) {
        const long r = item * per_row / half;
        const Scalar tr = t(r);
        const long ti = static_cast<long>(tr);
        const bool tabled = tr >= Scalar(0) && ti < rows && static_cast<Scalar>(ti) == tr;
        const int i0 = static_cast<int>(item * per_row % half);
        if (tabled) {
          for (int i = i0; i < i0 + per_row; ++i) {
            emb(r, i) = table(ti, i);
            emb(r, i + half) = table(ti, i + half);
          }
          return;
        }
        for (int i = i0; i < i0 + per_row; ++i) {
          const double w = kmath::exp(-log_base * static_cast<double>(i) / static_cast<double>(half));
          const double a = static_cast<double>(tr) * w;
          emb(r, i) = static_cast<Scalar>(kmath::sin(a));
          emb(r, i + half) = static_cast<Scalar>(kmath::cos(a));
        }
      });
}

namespace {
// The table of Note [timestep embedding table]: sinusoidal(0), ..., sinusoidal(steps - 1).
template <class Scalar>
View2<Scalar> timestep_embedding_table(int steps, int time_dim) {
  View1<Scalar> t("temb_steps", static_cast<std::size_t>(steps));
  Kokkos::parallel_for(
      "temb_steps", range(0, steps), KOKKOS_LAMBDA(const int i) { t(i) = static_cast<Scalar>(i); });
  View2<Scalar> table("temb_table", static_cast<std::size_t>(steps), static_cast<std::size_t>(time_dim));
  sinusoidal_embedding<Scalar>(t, table, steps);
  return table;
}

void check_config(const DiffusionConfig& c) {
  if (c.time_dim < 2 || c.time_dim % 2 != 0)
    throw Error("diffusion: time embedding size must be even and >= 2", ExitCode::bad_input);
  if (c.target != "eps" && c.target != "v")
    throw Error("diffusion: prediction target must be eps or v, not '" + c.target + "'", ExitCode::bad_input);
  if (c.hidden < 1 || c.depth < 0 || c.n_context < 1 || c.n_fine < 1)
    throw Error("diffusion: sizes must be positive", ExitCode::bad_input);
  if (c.static_columns < 0 || c.net_context() < 1)
    throw Error("diffusion: static_columns must leave the network at least one context column",
                ExitCode::bad_input);
}
}  // namespace

template <class Scalar>
DiffusionNet<Scalar>::DiffusionNet(const DiffusionConfig& config, int capacity, nn::Precision precision)
    : config_((check_config(config), config)),
      capacity_(capacity),
      time_mlp_(store_, ws_, "time_mlp", config.time_dim, config.hidden, capacity, nn::Activation::silu, precision),
      context_mlp_(store_, ws_, "context_mlp", config.net_context(), config.hidden, capacity, nn::Activation::silu,
                   precision),
      input_proj_(store_, ws_, "input_proj", config.n_fine, config.hidden, capacity, nn::Activation::identity,
                  precision),
      embedding_sum_(ws_, "embedding_sum", Shape{capacity, config.hidden}, nn::Activation::silu, precision),
      trunk_(ws_) {
  const DiffusionConfig& c = config;
  for (int k = 0; k < c.depth; ++k)
    trunk_.template emplace<nn::Linear<Scalar>>(store_, ws_, "hidden" + std::to_string(k), c.hidden, c.hidden,
                                                capacity, nn::Activation::silu, precision);
  trunk_.template emplace<nn::Linear<Scalar>>(store_, ws_, "output", c.hidden, c.n_fine, capacity,
                                              nn::Activation::identity, precision);
  temb_in_ = &ws_.request("temb_in", capacity, c.time_dim);
  d_h0_ = &ws_.request("d_h0", capacity, c.hidden);
  d_out_ = &ws_.request("d_out", capacity, c.n_fine);
  if (c.steps > 0) temb_table_ = timestep_embedding_table<Scalar>(c.steps, c.time_dim);
  store_.allocate();
  ws_.allocate();
  for (nn::Layer<Scalar>* l :
       {static_cast<nn::Layer<Scalar>*>(&time_mlp_), static_cast<nn::Layer<Scalar>*>(&context_mlp_),
        static_cast<nn::Layer<Scalar>*>(&input_proj_), static_cast<nn::Layer<Scalar>*>(&trunk_)})
    l->bind(store_);
}

template <class Scalar>
typename DiffusionNet<Scalar>::Matrix DiffusionNet<Scalar>::forward(const Tensor<Scalar>& x_t,
                                                                    const Tensor<Scalar>& c, const Vector& t,
                                                                    int n) {
  sinusoidal_embedding<Scalar>(t, View2<Scalar>(temb_in_->matrix()), n, temb_table_);
  time_mlp_.forward(*temb_in_, n);
  context_mlp_.forward(c, n);
  input_proj_.forward(x_t, n);
  embedding_sum_.forward({&input_proj_.output(), &context_mlp_.output(), &time_mlp_.output()}, n);
  trunk_.forward(embedding_sum_.output(), n);
  return trunk_.output().matrix();
}

template <class Scalar>
void DiffusionNet<Scalar>::backward(const Tensor<Scalar>& x_t, const Tensor<Scalar>& c, int n) {
  trunk_.backward(embedding_sum_.output(), *d_out_, *d_h0_, nn::GradMode::assign, n);
  // One gradient for all three summands (Note [shared input gradient]).
  const Tensor<Scalar>& dz = embedding_sum_.backward(*d_h0_, n);
  const Tensor<Scalar> none;
  input_proj_.backward(x_t, dz, none, nn::GradMode::assign, n);
  context_mlp_.backward(c, dz, none, nn::GradMode::assign, n);
  time_mlp_.backward(*temb_in_, dz, none, nn::GradMode::assign, n);
}

template <class Scalar>
double DiffusionNet<Scalar>::forward_flops() const {
  const double H = config_.hidden;
  return 2.0 * H * (config_.time_dim + config_.net_context() + config_.n_fine + config_.depth * H + config_.n_fine);
}

template void sinusoidal_embedding<float>(const View1<float>&, const View2<float>&, int);
template void sinusoidal_embedding<double>(const View1<double>&, const View2<double>&, int);
template void sinusoidal_embedding<float>(const View1<float>&, const View2<float>&, int, const View2<float>&);
template void sinusoidal_embedding<double>(const View1<double>&, const View2<double>&, int, const View2<double>&);
template class DiffusionNet<float>;
template class DiffusionNet<double>;

}  // namespace hpct
