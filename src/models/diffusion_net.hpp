// The conditional denoiser eps_hat = f(x_t, c, t) of the diffusion downscaler, forward and backward:
//   t_emb = SiLU(time_mlp(sinusoidal(t)))      sinusoidal(t) = [sin(t w_0..w_{E/2-1}), cos(t w_0..)]
//   c_emb = SiLU(context_mlp(c))                w_i = exp(-ln(10000) i / (E/2))
//   h     = SiLU(input_proj(x_t) + c_emb + t_emb)
//   h     = SiLU(hidden_k(h)), k = 0..depth-1
//   eps_hat = output(h)
// Layer names match a PyTorch module with those attribute names (nn.Linear each), so the HDF5
// weights load with load_state_dict. Templated on Scalar: float for training, double for tests.
#pragma once

#include <string>
#include <vector>

#include "nn/dense.hpp"
#include "nn/parameters.hpp"

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

  std::string to_string() const;
  // Parses to_string()'s "key=value ..." form; unknown keys are an error.
  static DiffusionConfig parse(const std::string& text);
  std::uint64_t parameter_count() const;
};

// Writes the sinusoidal embedding of the timesteps t [n] into emb [n, E].
template <class Scalar>
void sinusoidal_embedding(const View1<Scalar>& t, const View2<Scalar>& emb, int n);

template <class Scalar>
class DiffusionNet {
 public:
  using Matrix = View2<Scalar>;
  using Vector = View1<Scalar>;

  DiffusionNet(const DiffusionConfig& config, int capacity, std::size_t extra_grad_slots = 0);

  // Rows [0, n): x_t [*, n_fine], c [*, n_context], t [*] (timestep index as a Scalar) -> eps_hat.
  const Matrix& forward(const Matrix& x_t, const Matrix& c, const Vector& t, int n);
  // Fill rows [0, n) with dL/d(eps_hat), then call backward with the inputs of the last forward.
  const Matrix& output_grad() const { return d_out_; }
  // Accumulates (+=) the parameter gradients into the store.
  void backward(const Matrix& x_t, const Matrix& c, int n);

  nn::ParameterStore<Scalar>& store() { return store_; }
  const nn::ParameterStore<Scalar>& store() const { return store_; }
  const DiffusionConfig& config() const { return config_; }
  int capacity() const { return capacity_; }

 private:
  nn::Dense<Scalar>& time_mlp() { return layers_[0]; }
  nn::Dense<Scalar>& context_mlp() { return layers_[1]; }
  nn::Dense<Scalar>& input_proj() { return layers_[2]; }
  nn::Dense<Scalar>& hidden(int k) { return layers_[static_cast<std::size_t>(3 + k)]; }
  nn::Dense<Scalar>& output() { return layers_.back(); }

  DiffusionConfig config_;
  int capacity_;
  nn::ParameterStore<Scalar> store_;
  std::vector<nn::Dense<Scalar>> layers_;  // time_mlp, context_mlp, input_proj, hidden0.., output
  Matrix temb_in_;   // sinusoidal(t) [cap, E]
  Matrix z0_, h0_;   // sigmoid of the embedding sum, and its SiLU [cap, H]
  Matrix d_t_;       // dL/d(t_emb) [cap, H]
  std::vector<Matrix> d_h_;  // d_h_[k]: dL/d(input of hidden k); d_h_[depth]: dL/d(input of output)
  Matrix d_out_;     // dL/d(eps_hat) [cap, n_fine]
};

}  // namespace hpct
