// The conditional denoiser eps_hat = f(x_t, c, t) of the diffusion downscaler, forward and backward:
//   t_emb = SiLU(time_mlp(sinusoidal(t)))      sinusoidal(t) = [sin(t w_0..w_{E/2-1}), cos(t w_0..)]
//   c_emb = SiLU(context_mlp(c))                w_i = exp(-ln(10000) i / (E/2))
//   h     = SiLU(input_proj(x_t) + c_emb + t_emb)
//   h     = SiLU(hidden_k(h)), k = 0..depth-1
//   eps_hat = output(h)
// Layer names match a PyTorch module with those attribute names (nn.Linear each), so the HDF5
// weights load with load_state_dict. Templated on Scalar: float for training, double for tests.
// Built from nn layers (Linear with fused SiLU, Add, Sequential), wired by hand as in llm.c.
#pragma once

#include <string>
#include <vector>

#include "nn/layers/add.hpp"
#include "nn/layers/linear.hpp"
#include "nn/sequential.hpp"

namespace hpct {

struct DiffusionConfig {
  int n_context = 7, n_fine = 256;
  int time_dim = 32;  // E, even
  int hidden = 256;   // H
  int depth = 2;      // hidden H -> H layers after the embedding sum
  int steps = 50;     // T (not a network size; kept here so one string describes the model)
  std::string schedule = "cosine";
  // What the network's output is trained to predict: "eps" (the noise; the default and the seed's
  // choice) or "v" = sqrt(abar) eps - sqrt(1 - abar) x_0 (Salimans & Ho 2022). Same network either way.
  std::string target = "eps";
  // The network generates the departure from a least-squares linear map of the context, fitted before
  // training (Note [linear skip] in diffusion_linear_skip.hpp). Not part of the network.
  bool linear_skip = false;
  // `diffusion_statics_linear_only` (Note [statics to the linear skip only] in diffusion_linear_skip.hpp):
  // the last static_columns context columns (diffgen --statics blocks) reach only the linear skip; the
  // network's context is the first net_context() columns. 0: the network sees the whole context.
  int static_columns = 0;
  // Trained on diffgen --anomaly data (Note [anomaly targets] in grid_patches.hpp): set from the
  // training file, not a deck key; predict adds context column 0 back. Not part of the network.
  bool anomaly = false;

  // The stored configuration (Note [stored configuration] in models/registry.hpp) and back, through
  // the family's config schema (diffusion_family.cpp); unknown keys and bad values are errors.
  std::string to_string() const;
  static DiffusionConfig parse(const std::string& text);
  std::uint64_t parameter_count() const;
  int net_context() const { return n_context - static_columns; }  // the network's context width
};

// Writes the sinusoidal embedding of the timesteps t [n] into emb [n, E].
template <class Scalar>
void sinusoidal_embedding(const View1<Scalar>& t, const View2<Scalar>& emb, int n);
// The same, with rows of whole timesteps 0 <= t < table.extent(0) copied from table, the embedding
// of 0, 1, ... (Note [timestep embedding table]).
template <class Scalar>
void sinusoidal_embedding(const View1<Scalar>& t, const View2<Scalar>& emb, int n, const View2<Scalar>& table);

template <class Scalar>
class DiffusionNet {
 public:
  using Matrix = typename Tensor<Scalar>::Matrix;
  using Vector = View1<Scalar>;

  DiffusionNet(const DiffusionConfig& config, int capacity, nn::Precision precision = nn::Precision::fp32);

  // Rows [0, n): x_t [*, n_fine], c [*, net_context()], t [*] (timestep index as a Scalar) -> eps_hat.
  Matrix forward(const Tensor<Scalar>& x_t, const Tensor<Scalar>& c, const Vector& t, int n);
  // dL/d(eps_hat): fill rows [0, n), then call backward with the inputs of the last forward.
  Matrix output_grad() const { return d_out_->matrix(); }
  const Tensor<Scalar>& output_grad_tensor() const { return *d_out_; }
  // Accumulates (+=) the parameter gradients into the store (Note [the gradient rule]).
  void backward(const Tensor<Scalar>& x_t, const Tensor<Scalar>& c, int n);

  nn::ParameterStore<Scalar>& store() { return store_; }
  const nn::ParameterStore<Scalar>& store() const { return store_; }
  const DiffusionConfig& config() const { return config_; }
  int capacity() const { return capacity_; }
  // Multiply-adds x 2 of one sample's forward pass (the GEMMs).
  double forward_flops() const;

 private:
  DiffusionConfig config_;
  int capacity_;
  nn::ParameterStore<Scalar> store_;
  nn::Workspace<Scalar> ws_;
  // Registered in this order (Note [registration order]): time_mlp, context_mlp, input_proj, trunk.
  nn::Linear<Scalar> time_mlp_, context_mlp_, input_proj_;
  nn::Add<Scalar> embedding_sum_;      // SiLU(input_proj(x_t) + context_mlp(c) + time_mlp(t))
  nn::Sequential<Scalar> trunk_;       // hidden0.. (SiLU), output
  Tensor<Scalar>* temb_in_ = nullptr;  // sinusoidal(t) [cap, E]
  View2<Scalar> temb_table_;           // sinusoidal(0..T-1) [T, E] (Note [timestep embedding table])
  Tensor<Scalar>* d_h0_ = nullptr;     // dL/d(embedding sum output) [cap, H]
  Tensor<Scalar>* d_out_ = nullptr;    // dL/d(eps_hat) [cap, n_fine]
};

}  // namespace hpct
