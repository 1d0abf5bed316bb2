// The gnn network's construction, forward and backward (see gnn_net.hpp).
#include "models/gnn/gnn_net.hpp"

#include <string>
#include <utility>

#include "core/error.hpp"

namespace hpct {

// Note [static embeddings once per batch]: the mesh positions and the three edge sets' features are
// the graph's, the same for every sample, so their embedding MLPs run on one sample's rows and the
// result is copied to every sample of the batch (copy_to_samples). In backward the n samples'
// gradients with respect to those copies are summed first (sample order, sum_samples) and
// the MLP's backward runs once on the sum: the MLP is the same function at the same input for every
// sample, so sum_b J^T g_b = J^T sum_b g_b and the parameter gradients are those of n separate
// copies (up to the order of the sums). It saves 7/8 of the embeddings' work at batch 8 (about a
// tenth of a step's FLOPs at the seed's settings, where the edge embeddings are 12% of them).
// train_flops_per_sample still counts the architecture's FLOPs (each sample's embeddings).

// Note [recomputed processor layers]: with gnn_recompute every interaction net (the encoder, the
// processor's layers, the decoder) is a recomputed unit of the workspace (Note [recomputed units],
// nn/workspace.hpp): their activations and gradient temporaries share one block, and only their
// outputs (the mesh and edge latents the next net reads) keep places of their own. Backward re-runs
// each processor layer's and the encoder's forward on its stored inputs right before its backward;
// the decoder, the last of them in forward, still holds its own. Memory for those activations falls
// from every net's to one net's (at the icosahedral mesh's edge counts the bulk of the network's), at
// the cost of one more forward of the encoder and the processor per step. The gradients are the same
// bits (test_gnn_recompute).

namespace gnn_kernels {

// The first `rows` rows of t, filled with `copies` copies of the host rows `values` ([rows, cols]).
template <class Scalar>
void fill_copies(const Tensor<Scalar>& t, const std::vector<float>& values, std::int64_t copies) {
  const auto h = Kokkos::create_mirror_view(t.flat());
  const std::size_t per = values.size();
  for (std::int64_t c = 0; c < copies; ++c)
    for (std::size_t i = 0; i < per; ++i) h(static_cast<std::size_t>(c) * per + i) = static_cast<Scalar>(values[i]);
  Kokkos::deep_copy(t.flat(), h);
}

// out = a + b over rows [0, rows) (the grid MLP's residual).
template <class Matrix>
void add_rows(const char* label, const Matrix& out, const Matrix& a, const Matrix& b, bool accumulate, int rows) {
  nn::for_each_cell(
      label, rows, static_cast<int>(out.extent(1)), KOKKOS_LAMBDA(const int i, const int j) {
        const auto v = a(i, j) + b(i, j);
        out(i, j) = accumulate ? out(i, j) + v : v;
      });
}

}  // namespace gnn_kernels

template <class Scalar>
GnnNet<Scalar>::GnnNet(const GnnConfig& c, int capacity, nn::Precision p)
    : GnnNet(c, build_mesh_graph(c.ny, c.nx), capacity, p) {}

template <class Scalar>
GnnNet<Scalar>::GnnNet(const GnnConfig& c, MeshGraph graph, int capacity, nn::Precision p)
    : c_(c),
      capacity_(capacity),
      graph_(std::move(graph)),
      g2m_(graph_.g2m, "gnn/g2m"),
      m2m_(graph_.m2m, "gnn/m2m"),
      m2g_(graph_.m2g, "gnn/m2g"),
      N_(graph_.grid_nodes()),
      M_(graph_.mesh_nodes()),
      grid_embed_(store_, ws_, "grid_embed", c.d_in, c.latent, c.latent, capacity * N_, true, p),
      // One sample's rows: Note [static embeddings once per batch].
      mesh_embed_(store_, ws_, "mesh_embed", graph_.mesh_feature_width, c.latent, c.latent, M_, true, p),
      g2m_embed_(store_, ws_, "g2m_embed", 3, c.latent, c.latent, g2m_.edges, true, p),
      m2m_embed_(store_, ws_, "m2m_embed", 3, c.latent, c.latent, m2m_.edges, true, p),
      m2g_embed_(store_, ws_, "m2g_embed", 3, c.latent, c.latent, m2g_.edges, true, p),
      // Note [static edge input]: the encoder's and decoder's edges and the first processor layer's.
      encoder_(interaction_net("encoder", g2m_, true, false, p)),
      grid_mlp_(store_, ws_, "grid_mlp", c.latent, c.latent, c.latent, capacity * N_, true, p) {
  if (c.layers < 1) throw Error("gnn: gnn_layers must be >= 1", ExitCode::bad_input);
  // In forward order (Note [registration order]): processor, decoder, read-out.
  for (int l = 0; l < c.layers; ++l)
    processor_.push_back(interaction_net("processor" + std::to_string(l), m2m_, l == 0, true, p));
  decoder_ = interaction_net("decoder", m2g_, true, false, p);
  readout_ = std::make_unique<GnnMlp<Scalar>>(store_, ws_, "readout", c.latent, c.latent, c.d_out, capacity * N_,
                                              false, p);
  const std::int64_t L = c.latent;
  mesh_x_ = &ws_.request("gnn/mesh_x", M_, graph_.mesh_feature_width);
  g2m_x_ = &ws_.request("gnn/g2m_x", g2m_.edges, 3);
  m2m_x_ = &ws_.request("gnn/m2m_x", m2m_.edges, 3);
  m2g_x_ = &ws_.request("gnn/m2g_x", m2g_.edges, 3);
  mesh_h_ = &ws_.request("gnn/mesh_h", capacity * M_, L);
  m2m_h_ = &ws_.request("gnn/m2m_h", capacity * m2m_.edges, L);
  grid_h1_ = &ws_.request("gnn/grid_h1", capacity * N_, L);
  d_out_ = &ws_.request("gnn/d_out", capacity * N_, c.d_out);
  d_x_ = &ws_.request("gnn/d_x", capacity * N_, c.d_in);
  d_go_ = &ws_.request("gnn/d_go", capacity * N_, L);
  d_gh1_ = &ws_.request("gnn/d_gh1", capacity * N_, L);
  d_gh_ = &ws_.request("gnn/d_gh", capacity * N_, L);
  d_mh_ = &ws_.request("gnn/d_mh", capacity * M_, L);
  for (int k = 0; k < 2; ++k) {
    d_mesh_[k] = &ws_.request("gnn/d_mesh" + std::to_string(k), capacity * M_, L);
    d_edge_[k] = &ws_.request("gnn/d_edge" + std::to_string(k), capacity * m2m_.edges, L);
  }
  d_g2m_ = &ws_.request("gnn/d_g2m", capacity * g2m_.edges, L);
  d_m2g_ = &ws_.request("gnn/d_m2g", capacity * m2g_.edges, L);
  store_.allocate();
  ws_.allocate();
  for (GnnMlp<Scalar>* m :
       {&grid_embed_, &mesh_embed_, &g2m_embed_, &m2m_embed_, &m2g_embed_, &grid_mlp_, readout_.get()})
    m->bind(store_);
  encoder_->bind(store_);
  for (auto& layer : processor_) layer->bind(store_);
  decoder_->bind(store_);
  gnn_kernels::fill_copies(*mesh_x_, graph_.mesh_features, 1);
  gnn_kernels::fill_copies(*g2m_x_, graph_.g2m.features, 1);
  gnn_kernels::fill_copies(*m2m_x_, graph_.m2m.features, 1);
  gnn_kernels::fill_copies(*m2g_x_, graph_.m2g.features, 1);
}

template <class Scalar>
std::unique_ptr<InteractionNet<Scalar>> GnnNet<Scalar>::interaction_net(const std::string& name,
                                                                        const DeviceEdges& g, bool static_edges,
                                                                        bool edge_output, nn::Precision p) {
  const auto make = [&] {
    return std::make_unique<InteractionNet<Scalar>>(store_, ws_, name, g, c_.latent, capacity_, p, static_edges,
                                                    edge_output);
  };
  if (!c_.recompute) return make();
  std::unique_ptr<InteractionNet<Scalar>> net;
  {
    const typename nn::Workspace<Scalar>::RecomputeScope scope(ws_, name);
    net = make();
  }
  ws_.keep(net->receiver_output());  // the next unit's input
  if (net->has_edge_output()) ws_.keep(net->edge_output());
  return net;
}

template <class Scalar>
void GnnNet<Scalar>::set_sphere_positions(const std::vector<double>& lat, const std::vector<double>& lon) {
  set_sphere_edge_features(graph_, lat, lon);
  gnn_kernels::fill_copies(*g2m_x_, graph_.g2m.features, 1);
  gnn_kernels::fill_copies(*m2m_x_, graph_.m2m.features, 1);
  gnn_kernels::fill_copies(*m2g_x_, graph_.m2g.features, 1);
}

template <class Scalar>
const Tensor<Scalar>& GnnNet<Scalar>::forward(const T& x, int n) {
  const int rN = n * static_cast<int>(N_);
  const T& gh = grid_embed_.forward(x, rN);
  // Note [static embeddings once per batch]: the graph's own inputs are the same for every sample.
  const auto embed_static = [n](GnnMlp<Scalar>& mlp, const T& in, std::int64_t rows, const T& out) -> const T& {
    copy_to_samples(mlp.forward(in, static_cast<int>(rows)).matrix(), rows, out.matrix(), n);
    return out;
  };
  const T& mh = embed_static(mesh_embed_, *mesh_x_, M_, *mesh_h_);
  // Only the first processor layer's edge residual reads every sample's copy; the encoder and the
  // decoder read one (Note [static edge input]).
  const T& eg = g2m_embed_.forward(*g2m_x_, static_cast<int>(g2m_.edges));
  const T& em = embed_static(m2m_embed_, *m2m_x_, m2m_.edges, *m2m_h_);
  const T& ed = m2g_embed_.forward(*m2g_x_, static_cast<int>(m2g_.edges));
  encoder_->forward(eg, gh, mh, n);
  gnn_kernels::add_rows("gnn_grid_res", grid_h1_->matrix(), gh.matrix(), grid_mlp_.forward(gh, rN).matrix(), false,
                        rN);
  const T* mesh = &encoder_->receiver_output();
  const T* edge = &em;
  for (auto& layer : processor_) {
    layer->forward(*edge, *mesh, *mesh, n);
    mesh = &layer->receiver_output();
    edge = &layer->edge_output();
  }
  decoder_->forward(ed, *mesh, *grid_h1_, n);
  return readout_->forward(decoder_->receiver_output(), rN);
}

template <class Scalar>
void GnnNet<Scalar>::backward(const T& x, int n, bool input_grad) {
  using nn::GradMode;
  const int rN = n * static_cast<int>(N_);
  const T none;
  const auto layers = static_cast<int>(processor_.size());
  const T& mesh_last = processor_.back()->receiver_output();
  readout_->backward(decoder_->receiver_output(), *d_out_, *d_go_, GradMode::assign, rN);
  int cur = 0;  // d_mesh_[cur]: dL/d(mesh into the layer being undone's output)
  decoder_->backward(m2g_embed_.output(), mesh_last, *grid_h1_, *d_go_, none, *d_m2g_, GradMode::assign,
                     *d_mesh_[cur], GradMode::assign, *d_gh1_, GradMode::assign, n);
  for (int l = layers - 1; l >= 0; --l) {
    const T& edge_in = l == 0 ? *m2m_h_ : processor_[static_cast<std::size_t>(l - 1)]->edge_output();
    const T& mesh_in = l == 0 ? encoder_->receiver_output()
                              : processor_[static_cast<std::size_t>(l - 1)]->receiver_output();
    const int nxt = 1 - cur;
    if (c_.recompute) processor_[static_cast<std::size_t>(l)]->forward(edge_in, mesh_in, mesh_in, n);
    // The last layer's edge output is unused; earlier ones feed the next layer (d_edge_[cur]).
    processor_[static_cast<std::size_t>(l)]->backward(edge_in, mesh_in, mesh_in, *d_mesh_[cur],
                                                      l == layers - 1 ? none : *d_edge_[cur], *d_edge_[nxt],
                                                      GradMode::assign, *d_mesh_[nxt], GradMode::accumulate,
                                                      *d_mesh_[nxt], GradMode::assign, n);
    cur = nxt;
  }
  // d_edge_[cur] now holds dL/d(m2m embedding), d_mesh_[cur] dL/d(encoder output).
  const T& gh = grid_embed_.output();
  grid_mlp_.backward(gh, *d_gh1_, *d_gh_, GradMode::assign, rN);
  gnn_kernels::add_rows("gnn_grid_res_bw", d_gh_->matrix(), d_gh_->matrix(), d_gh1_->matrix(), false, rN);
  if (c_.recompute) encoder_->forward(g2m_embed_.output(), gh, *mesh_h_, n);
  encoder_->backward(g2m_embed_.output(), gh, *mesh_h_, *d_mesh_[cur], none, *d_g2m_, GradMode::assign, *d_gh_,
                     GradMode::accumulate, *d_mh_, GradMode::assign, n);
  // The static embeddings' gradients, summed over the samples (the edge sets' by the interaction
  // nets: Note [static edge input]), then one backward each.
  sum_samples(d_mh_->matrix(), M_, n, d_mh_->matrix(), false);
  m2g_embed_.backward(*m2g_x_, *d_m2g_, none, GradMode::assign, static_cast<int>(m2g_.edges));
  m2m_embed_.backward(*m2m_x_, *d_edge_[cur], none, GradMode::assign, static_cast<int>(m2m_.edges));
  g2m_embed_.backward(*g2m_x_, *d_g2m_, none, GradMode::assign, static_cast<int>(g2m_.edges));
  mesh_embed_.backward(*mesh_x_, *d_mh_, none, GradMode::assign, static_cast<int>(M_));
  grid_embed_.backward(x, *d_gh_, input_grad ? *d_x_ : none, GradMode::assign, rN);
}

template <class Scalar>
double GnnNet<Scalar>::forward_flops_per_sample() const {
  double f = static_cast<double>(N_) *
             (grid_embed_.flops_per_row() + grid_mlp_.flops_per_row() + readout_->flops_per_row());
  f += static_cast<double>(M_) * mesh_embed_.flops_per_row();
  f += static_cast<double>(g2m_.edges + m2m_.edges + m2g_.edges) * g2m_embed_.flops_per_row();
  f += encoder_->flops_per_sample() + decoder_->flops_per_sample();
  for (const auto& layer : processor_) f += layer->flops_per_sample();
  return f;
}

template class GnnNet<float>;
template class GnnNet<double>;

}  // namespace hpct
