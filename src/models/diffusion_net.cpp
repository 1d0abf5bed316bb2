// Forward and backward of the diffusion denoiser (see diffusion_net.hpp) on the nn::Dense layers.
#include "models/diffusion_net.hpp"

#include <cmath>
#include <sstream>

#include "core/error.hpp"
#include "core/log.hpp"
#include "nn/elementwise.hpp"

namespace hpct {

std::string DiffusionConfig::to_string() const {
  return strf("n_context=%d n_fine=%d time_dim=%d hidden=%d depth=%d steps=%d schedule=%s target=%s", n_context,
              n_fine, time_dim, hidden, depth, steps, schedule.c_str(), target.c_str());
}

DiffusionConfig DiffusionConfig::parse(const std::string& text) {
  DiffusionConfig c;
  std::istringstream in(text);
  std::string tok;
  while (in >> tok) {
    const auto eq = tok.find('=');
    if (eq == std::string::npos) throw Error("diffusion config: '" + tok + "' is not key=value", ExitCode::bad_input);
    const std::string k = tok.substr(0, eq), v = tok.substr(eq + 1);
    if (k == "schedule" || k == "target") {
      (k == "schedule" ? c.schedule : c.target) = v;
      continue;
    }
    int* field = k == "n_context" ? &c.n_context : k == "n_fine" ? &c.n_fine : k == "time_dim" ? &c.time_dim
               : k == "hidden" ? &c.hidden : k == "depth" ? &c.depth : k == "steps" ? &c.steps : nullptr;
    if (!field) throw Error("diffusion config: unknown key '" + k + "'", ExitCode::bad_input);
    *field = std::atoi(v.c_str());
  }
  return c;
}

std::uint64_t DiffusionConfig::parameter_count() const {
  auto lin = [](std::uint64_t in, std::uint64_t out) { return in * out + out; };
  const std::uint64_t H = static_cast<std::uint64_t>(hidden);
  return lin(static_cast<std::uint64_t>(time_dim), H) + lin(static_cast<std::uint64_t>(n_context), H) +
         lin(static_cast<std::uint64_t>(n_fine), H) + static_cast<std::uint64_t>(depth) * lin(H, H) +
         lin(H, static_cast<std::uint64_t>(n_fine));
}

template <class Scalar>
void sinusoidal_embedding(const View1<Scalar>& t, const View2<Scalar>& emb, int n) {
  const int E = static_cast<int>(emb.extent(1)), half = E / 2;
  const double log_base = std::log(10000.0);
  Kokkos::parallel_for(
      "sinusoid_emb", Kokkos::RangePolicy<ExecSpace>(0, static_cast<long>(n) * half),
      KOKKOS_LAMBDA(const long idx) {
        const long r = idx / half;
        const int i = static_cast<int>(idx % half);
        const double w = kmath::exp(-log_base * static_cast<double>(i) / static_cast<double>(half));
        const double a = static_cast<double>(t(r)) * w;
        emb(r, i) = static_cast<Scalar>(kmath::sin(a));
        emb(r, i + half) = static_cast<Scalar>(kmath::cos(a));
      });
}

template <class Scalar>
DiffusionNet<Scalar>::DiffusionNet(const DiffusionConfig& config, int capacity, std::size_t extra_grad_slots)
    : config_(config), capacity_(capacity) {
  const DiffusionConfig& c = config;
  if (c.time_dim < 2 || c.time_dim % 2 != 0)
    throw Error("diffusion: time embedding size must be even and >= 2", ExitCode::bad_input);
  if (c.target != "eps" && c.target != "v")
    throw Error("diffusion: prediction target must be eps or v, not '" + c.target + "'", ExitCode::bad_input);
  if (c.hidden < 1 || c.depth < 0 || c.n_context < 1 || c.n_fine < 1)
    throw Error("diffusion: sizes must be positive", ExitCode::bad_input);
  using nn::Activation;
  layers_.reserve(static_cast<std::size_t>(4 + c.depth));
  layers_.emplace_back(store_, "time_mlp", c.time_dim, c.hidden, Activation::silu);
  layers_.emplace_back(store_, "context_mlp", c.n_context, c.hidden, Activation::silu);
  layers_.emplace_back(store_, "input_proj", c.n_fine, c.hidden, Activation::identity);
  for (int k = 0; k < c.depth; ++k)
    layers_.emplace_back(store_, "hidden" + std::to_string(k), c.hidden, c.hidden, Activation::silu);
  layers_.emplace_back(store_, "output", c.hidden, c.n_fine, Activation::identity);
  store_.allocate(extra_grad_slots);
  for (auto& layer : layers_) layer.bind(store_, capacity);
  temb_in_ = Matrix("diff_temb_in", capacity, c.time_dim);
  z0_ = Matrix("diff_z0", capacity, c.hidden);
  h0_ = Matrix("diff_h0", capacity, c.hidden);
  d_t_ = Matrix("diff_dt", capacity, c.hidden);
  for (int k = 0; k <= c.depth; ++k) d_h_.emplace_back("diff_dh", capacity, c.hidden);
  d_out_ = Matrix("diff_dout", capacity, c.n_fine);
}

template <class Scalar>
const typename DiffusionNet<Scalar>::Matrix& DiffusionNet<Scalar>::forward(const Matrix& x_t, const Matrix& c,
                                                                           const Vector& t, int n) {
  sinusoidal_embedding<Scalar>(t, temb_in_, n);
  time_mlp().forward(temb_in_, n);
  context_mlp().forward(c, n);
  input_proj().forward(x_t, n);
  {
    const auto te = time_mlp().output(), ce = context_mlp().output(), xp = input_proj().output();
    const auto sg = z0_, h = h0_;
    // z0_ caches sigmoid(z): the backward SiLU derivative is s + h (1 - s).
    nn::for_each_cell(
        "emb_sum", n, config_.hidden, KOKKOS_LAMBDA(const int i, const int j) {
          const Scalar zz = xp(i, j) + ce(i, j) + te(i, j);
          const Scalar s = nn::sigmoid(zz);
          sg(i, j) = s;
          h(i, j) = zz * s;
        });
  }
  const Matrix* in = &h0_;
  for (int k = 0; k < config_.depth; ++k) {
    hidden(k).forward(*in, n);
    in = &hidden(k).output();
  }
  output().forward(*in, n);
  return output().output();
}

template <class Scalar>
void DiffusionNet<Scalar>::backward(const Matrix& x_t, const Matrix& c, int n) {
  const int depth = config_.depth;
  const Matrix last_in = depth == 0 ? h0_ : hidden(depth - 1).output();
  output().backward(last_in, d_out_, d_h_[static_cast<std::size_t>(depth)], n);
  for (int k = depth; k-- > 0;) {
    const Matrix in = k == 0 ? h0_ : hidden(k - 1).output();
    hidden(k).backward(in, d_h_[static_cast<std::size_t>(k + 1)], d_h_[static_cast<std::size_t>(k)], n);
  }
  // Through the SiLU of the embedding sum: dz = dh0 * silu'(z); the sum hands dz to all three.
  {
    const auto dz = d_h_[0], dt = d_t_, sg = z0_, h = h0_;
    nn::for_each_cell(
        "emb_sum_grad", n, config_.hidden, KOKKOS_LAMBDA(const int i, const int j) {
          const Scalar s = sg(i, j);
          const Scalar g = dz(i, j) * (s + h(i, j) * (Scalar(1) - s));
          dz(i, j) = g;
          dt(i, j) = g;
        });
  }
  const Matrix none;
  input_proj().backward(x_t, d_h_[0], none, n);  // identity: leaves d_h_[0] unchanged
  context_mlp().backward(c, d_h_[0], none, n);   // overwrites d_h_[0] in place
  time_mlp().backward(temb_in_, d_t_, none, n);
}

template void sinusoidal_embedding<float>(const View1<float>&, const View2<float>&, int);
template void sinusoidal_embedding<double>(const View1<double>&, const View2<double>&, int);
template class DiffusionNet<float>;
template class DiffusionNet<double>;

}  // namespace hpct
