// The token_bag test family: ragged token rows -> mean embedding -> Linear (see token_bag_model.hpp).
#include "token_bag/token_bag_model.hpp"

#include "core/error.hpp"
#include "models/registry.hpp"

namespace hpct::test {

// ids(e) = tokens[e] as float (the Embedding's index tensor; exact below 2^24).
void token_ids_to_float(const Tensor<float>& ids, const std::int64_t* tokens, std::int64_t count) {
  float* out = ids.data();
  Kokkos::parallel_for(
      "bag_ids", range(0, count), KOKKOS_LAMBDA(const std::int64_t e) { out[e] = static_cast<float>(tokens[e]); });
}

// pooled(i, :) = mean of embedded(e, :) over row i's elements (a fixed order: deterministic).
void mean_pool(const Tensor<float>& pooled, const Tensor<float>& embedded, const Batch::Offsets& offsets, int n) {
  const auto p = pooled.rows(n);
  const auto x = embedded.matrix();
  const int dim = static_cast<int>(p.extent(1));
  Kokkos::parallel_for(
      "bag_pool", range(0, n), KOKKOS_LAMBDA(const int i) {
        const std::uint64_t a = offsets(i), b = offsets(i + 1);
        const float inv = b > a ? 1.0f / static_cast<float>(b - a) : 0.0f;
        for (int d = 0; d < dim; ++d) {
          float s = 0;
          for (std::uint64_t e = a; e < b; ++e) s += x(e, d);
          p(i, d) = s * inv;
        }
      });
}

// dembedded(e, :) = dpooled(row of e, :) / (elements of that row).
void mean_pool_backward(const Tensor<float>& dembedded, const Tensor<float>& dpooled, const Batch::Offsets& offsets,
                        int n) {
  const auto dp = dpooled.rows(n);
  float* dx = dembedded.data();
  const int dim = static_cast<int>(dp.extent(1));
  Kokkos::parallel_for(
      "bag_pool_bwd", range(0, n), KOKKOS_LAMBDA(const int i) {
        const std::uint64_t a = offsets(i), b = offsets(i + 1);
        const float inv = b > a ? 1.0f / static_cast<float>(b - a) : 0.0f;
        for (std::uint64_t e = a; e < b; ++e)
          for (int d = 0; d < dim; ++d)
            dx[e * static_cast<std::uint64_t>(dim) + static_cast<std::uint64_t>(d)] = dp(i, d) * inv;
      });
}

TokenBagModel::TokenBagModel(const TokenBagConfig& c, int capacity)
    : config_(c),
      embed_(store_, ws_, "embed", c.vocab, c.dim, Shape{static_cast<std::int64_t>(capacity) * c.max_tokens}),
      head_(store_, ws_, "head", c.dim, 1, capacity) {
  const std::int64_t tokens = static_cast<std::int64_t>(capacity) * c.max_tokens;
  ids_ = &ws_.request("bag_ids", Shape{tokens});
  pooled_ = &ws_.request("bag_pooled", capacity, c.dim);
  dpooled_ = &ws_.request("bag_dpooled", capacity, c.dim);
  dembedded_ = &ws_.request("bag_dembedded", tokens, c.dim);
  dy_ = &ws_.request("bag_dy", capacity, 1);
  store_.allocate();
  ws_.allocate();
  embed_.bind(store_);
  head_.bind(store_);
}

std::string TokenBagModel::config_string() const {
  // Note [stored configuration] in models/registry.hpp: the keys of the family's config schema.
  return "token_bag_vocab=" + std::to_string(config_.vocab) + " token_bag_dim=" + std::to_string(config_.dim) +
         " token_bag_max_tokens=" + std::to_string(config_.max_tokens);
}

void TokenBagModel::constrain_fields(std::vector<FieldSpec>& fields) const {
  for (FieldSpec& f : fields)
    if (f.name == "tokens") f.min_value = 0, f.max_value = config_.vocab - 1;
}

const Tensor<float>& TokenBagModel::forward(const Batch& b) {
  const Tensor<std::int64_t> tokens = b.get_as<std::int64_t>("tokens");
  const std::int64_t count = tokens.rows();
  if (count > ids_->rows())
    throw Error("token_bag: " + std::to_string(count) + " tokens in a batch, more than planned",
                ExitCode::bad_input);
  token_ids_to_float(*ids_, tokens.data(), count);
  embed_.forward(*ids_, static_cast<int>(count));
  mean_pool(*pooled_, embed_.output(), b.offsets("tokens"), b.n);
  head_.forward(*pooled_, b.n);
  return head_.output();
}

double TokenBagModel::accumulate_gradients(const Batch& b, double normaliser) {
  if (b.n == 0) return 0.0;
  const Tensor<float>& y = forward(b);
  const double sum = loss_.forward_backward(y, b.targets(), *dy_, nn::GradMode::assign, b.n, normaliser);
  head_.backward(*pooled_, *dy_, *dpooled_, nn::GradMode::assign, b.n);
  const auto count = static_cast<int>(b.field("tokens").shape.rows());
  mean_pool_backward(*dembedded_, *dpooled_, b.offsets("tokens"), b.n);
  embed_.backward(*ids_, *dembedded_, Tensor<float>(), nn::GradMode::assign, count);
  return sum;
}

double TokenBagModel::loss_sum(const Batch& b) {
  if (b.n == 0) return 0.0;
  return loss_.forward(forward(b), b.targets(), b.n);
}

namespace {

void declare(deck::Schema& s) {
  s.section("model (token_bag, a test family)");
  s.add_int("token_bag_vocab", 64, 1, 1 << 24, "token_bag: token ids are in [0, vocab)");
  s.add_int("token_bag_dim", 8, 1, 1 << 16, "token_bag: embedding width");
}

std::unique_ptr<Model> build(const ModelBuildContext& ctx) {
  const FieldSpec& tokens = ctx.field("tokens");
  if (!tokens.ragged || tokens.dtype != DType::i64)
    ctx.deck.fail("data_file", "token_bag reads a ragged int64 field 'tokens'; the data has " + tokens.describe());
  TokenBagConfig c;
  c.vocab = static_cast<int>(ctx.deck.get_int("token_bag_vocab"));
  c.dim = static_cast<int>(ctx.deck.get_int("token_bag_dim"));
  c.max_tokens = static_cast<int>(std::max<std::uint64_t>(tokens.max_row_elements, 1));
  return std::make_unique<TokenBagModel>(c, ctx.capacity);
}

void declare_config(deck::Schema& s) {
  s.add_int("token_bag_max_tokens", 1, 1, 1 << 24, "the most tokens one row of the training data held");
}

std::unique_ptr<Model> from_config(const deck::Deck& config, int capacity) {
  TokenBagConfig c;
  c.vocab = static_cast<int>(config.get_int("token_bag_vocab"));
  c.dim = static_cast<int>(config.get_int("token_bag_dim"));
  c.max_tokens = static_cast<int>(config.get_int("token_bag_max_tokens"));
  return std::make_unique<TokenBagModel>(c, capacity);
}

}  // namespace

ModelFamily token_bag_family() {
  ModelFamily f;
  f.name = "token_bag";
  f.summary = "a test family: ragged int64 tokens -> mean embedding -> Linear (test/models/token_bag)";
  f.declare_keys = declare;
  f.build = build;
  f.declare_config_keys = declare_config;
  f.from_config = from_config;
  return f;
}

}  // namespace hpct::test
