// The transformer family's registry entry: deck keys, building from a `tokens` field, and its stored
// configuration (see models/registry.hpp and transformer_model.hpp).
#include "core/error.hpp"
#include "models/registry.hpp"
#include "models/transformer/transformer_model.hpp"

namespace hpct::lm {

namespace {

void declare(deck::Schema& s) {
  s.section("model (transformer: a decoder-only language model, docs/transformer.md)");
  s.add_int("transformer_vocab", 256, 2, 1 << 24, "transformer: token ids are in [0, vocab)");
  s.add_int("transformer_dim", 64, 4, 8192, "transformer: embedding width");
  s.add_int("transformer_heads", 4, 1, 256, "transformer: attention heads (transformer_dim must be a multiple)");
  s.add_int("transformer_layers", 2, 1, 128, "transformer: causal blocks");
  s.add_real("transformer_dropout", 0.1, 0.0, 0.9, "transformer: dropout in every feed-forward");
}

void declare_config(deck::Schema& s) {
  s.add_int("transformer_seq_len", 2, 2, 1 << 20, "tokens per row of the training data");
}

TransformerConfig config_from(const deck::Deck& d) {
  TransformerConfig c;
  c.vocab = static_cast<int>(d.get_int("transformer_vocab"));
  c.dim = static_cast<int>(d.get_int("transformer_dim"));
  c.heads = static_cast<int>(d.get_int("transformer_heads"));
  c.layers = static_cast<int>(d.get_int("transformer_layers"));
  c.dropout = d.get_real("transformer_dropout");
  return c;
}

std::unique_ptr<Model> build(const ModelBuildContext& ctx) {
  const FieldSpec& tokens = ctx.field("tokens");
  if (tokens.ragged || tokens.dtype != DType::i64 || tokens.row_shape.rank != 1)
    ctx.deck.fail("data_file",
                  "transformer reads an int64 field 'tokens' [N, L]; the data has " + tokens.describe());
  if (ctx.precision != nn::Precision::fp32)
    ctx.deck.fail("precision", "model transformer trains in fp32 only (bf16/fp16: not yet)");
  TransformerConfig c = config_from(ctx.deck);
  c.seq_len = static_cast<int>(tokens.row_shape.dim[0]);
  c.seed = static_cast<std::uint64_t>(ctx.deck.get_int("seed"));
  return std::make_unique<TransformerModel>(c, ctx.capacity);
}

std::unique_ptr<Model> from_config(const deck::Deck& config, int capacity) {
  TransformerConfig c = config_from(config);
  c.seq_len = static_cast<int>(config.get_int("transformer_seq_len"));
  return std::make_unique<TransformerModel>(c, capacity);
}

}  // namespace

ModelFamily transformer_family() {
  ModelFamily f;
  f.name = "transformer";
  f.summary = "a decoder-only language model over int64 token sequences (CausalAttention)";
  f.declare_keys = declare;
  f.build = build;
  f.declare_config_keys = declare_config;
  f.from_config = from_config;
  return f;
}

}  // namespace hpct::lm
