// PyTorch parity of the SMART family's layers (issue 19; float32): the edge softmax, the gated edge
// attention (with and without relative positions, self and bipartite), the Fourier relative-position
// layers and causal attention, through the harness of layer_parity_case.hpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "nn/layer_parity_case.hpp"
#include "nn/layers/causal_attention.hpp"
#include "nn/layers/edge_attention.hpp"
#include "nn/layers/edge_softmax.hpp"
#include "nn/layers/fourier_embedding.hpp"

namespace hpct::parity {
namespace {

const std::vector<int> kAttnSrc = {0, 1, 1, 3, 2, 0, 3, 1, 2, 4, 4};
const std::vector<int> kAttnDst = {0, 0, 0, 1, 1, 3, 3, 3, 3, 4, 0};  // destination 2: no edge

void edge_extras(Case& c, Arena& a, int heads, int head_dim) {
  c.extra["src"] = a.values({static_cast<std::int64_t>(kAttnSrc.size())},
                            std::vector<float>(kAttnSrc.begin(), kAttnSrc.end()));
  c.extra["dst"] = a.values({static_cast<std::int64_t>(kAttnDst.size())},
                            std::vector<float>(kAttnDst.begin(), kAttnDst.end()));
  c.numbers["heads"] = heads, c.numbers["head_dim"] = head_dim;
}

TEST(LayerParityDump, EdgeSoftmax) {
  Arena a;
  nn::Workspace<float> ws;
  const int H = 2, D = 4, W = H * D, E = static_cast<int>(kAttnSrc.size());
  nn::EdgeSoftmax<float> core(ws, "core", H, D, E, 6, 5);
  ws.allocate();
  core.set_edges(kAttnSrc, kAttnDst, 6, 5);
  Case c;
  c.name = c.kind = "edge_softmax";
  c.inputs = {a.normal({5, W}, 20), a.normal({6, W}, 21), a.normal({6, W}, 22), a.normal({E, W}, 23),
              a.normal({E, W}, 24)};
  edge_extras(c, a, H, D);
  c.numbers["sources"] = 6;
  c.forward = [&]() {
    core.forward(c.inputs[0], c.inputs[1], c.inputs[2], c.inputs[3], c.inputs[4]);
    return core.output().first_rows(5);
  };
  c.backward = [&](const FT& dy, const std::vector<FT>& dx) {
    core.backward(c.inputs[0], c.inputs[1], c.inputs[2], c.inputs[3], c.inputs[4], dy, dx[0], GradMode::assign,
                  dx[1], dx[2]);
    Kokkos::deep_copy(dx[3].matrix(), core.dk_edge().rows(E));
    Kokkos::deep_copy(dx[4].matrix(), core.dv_edge().rows(E));
  };
  dump(c, a);
}

TEST(LayerParityDump, EdgeAttention) {
  for (const bool bipartite : {true, false}) {
    Arena a;
    Net net;
    nn::EdgeAttention<float>::Config cfg;
    cfg.hidden = 12, cfg.heads = 3, cfg.head_dim = 4, cfg.has_r = bipartite;
    cfg.max_edges = static_cast<std::int64_t>(kAttnSrc.size()), cfg.max_src = 6, cfg.max_dst = 6;
    nn::EdgeAttention<float> attn(net.store, net.ws, "layer", cfg);
    net.allocate();
    attn.bind(net.store);
    const int n_src = bipartite ? 6 : 5, E = static_cast<int>(kAttnSrc.size());
    attn.set_edges(kAttnSrc, kAttnDst, n_src, 5);
    Case c;
    c.name = bipartite ? "edge_attention" : "edge_attention_self";
    c.kind = "edge_attention";
    c.store = &net.store;
    c.inputs = {a.normal({n_src, 12}, 30)};
    if (bipartite) c.inputs.push_back(a.normal({5, 12}, 31)), c.inputs.push_back(a.normal({E, 12}, 32));
    edge_extras(c, a, cfg.heads, cfg.head_dim);
    c.numbers["hidden"] = 12;
    c.forward = [&]() {
      if (bipartite) attn.forward(c.inputs[0], c.inputs[1], c.inputs[2]);
      else attn.forward(c.inputs[0], c.inputs[0], FT());
      return attn.output().first_rows(5);
    };
    c.backward = [&](const FT& dy, const std::vector<FT>& dx) {
      if (bipartite)
        attn.backward(c.inputs[0], c.inputs[1], c.inputs[2], dy, dx[0], GradMode::assign, dx[1], GradMode::assign,
                      dx[2], GradMode::assign);
      else
        attn.backward(c.inputs[0], c.inputs[0], FT(), dy, dx[0], GradMode::accumulate, dx[0], GradMode::assign,
                      FT(), GradMode::assign);
    };
    dump(c, a);
  }
}

TEST(LayerParityDump, FourierEmbedding) {
  Arena a;
  Net net;
  nn::FourierEmbedding<float> emb(net.store, net.ws, "layer", 3, 16, 8, 10);
  net.allocate(&emb);
  // Distances of tens of metres and angles: the angles 2 pi x w reach hundreds of radians.
  Case c = one_input("fourier_embedding", "fourier_embedding", emb, a.normal({10, 3}, 40, 20.0), 9, &net.store);
  c.numbers["freqs"] = 8, c.numbers["hidden"] = 16;
  dump(c, a);
}

TEST(LayerParityDump, CausalAttention) {
  Arena a;
  Net net;
  nn::CausalAttention<float> attn(net.store, net.ws, "layer", 16, 4, 7, 3);
  net.allocate(&attn);
  Case c = one_input("causal_attention", "causal_attention", attn, a.normal({3, 7, 16}, 50), 3, &net.store);
  c.numbers["heads"] = 4;
  dump(c, a);
}

}  // namespace
}  // namespace hpct::parity
