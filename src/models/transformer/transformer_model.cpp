// `model transformer`: embeddings, causal blocks, head and loss (see transformer_model.hpp).
#include "models/transformer/transformer_model.hpp"

#include "core/error.hpp"
#include "core/real_text.hpp"
#include "nn/elementwise.hpp"

namespace hpct::lm {

namespace transformer_detail {
// Row r of a batch is position r % S of its sequence. A free function with external linkage: CUDA's
// extended lambdas may live neither in a constructor nor in an anonymous namespace.
template <class Flat>
void fill_position_ids(const Flat& pos, std::int64_t rows, int S) {
  Kokkos::parallel_for(
      "lm_pos_ids", range(0, rows), KOKKOS_LAMBDA(const std::int64_t r) { pos(r) = static_cast<float>(r % S); });
}
}  // namespace transformer_detail

TransformerModel::TransformerModel(const TransformerConfig& c, int capacity)
    : config_(c), positions_(c.seq_len - 1), capacity_(capacity) {
  if (positions_ < 1) throw Error("transformer: sequences need at least 2 tokens", ExitCode::bad_input);
  if (c.heads <= 0 || c.dim % c.heads != 0)
    throw Error("transformer: transformer_dim must be a multiple of transformer_heads", ExitCode::bad_input);
  const int D = c.dim, S = positions_;
  const std::int64_t rows = static_cast<std::int64_t>(capacity) * S;
  const int cap_rows = static_cast<int>(rows);
  // Registration in forward order (Note [registration order], nn/parameters.hpp).
  tok_ = std::make_unique<nn::Embedding<float>>(store_, ws_, "tok_emb", c.vocab, D, Shape{rows});
  pos_ = std::make_unique<nn::Embedding<float>>(store_, ws_, "pos_emb", S, D, Shape{rows});
  for (int l = 0; l < c.layers; ++l) {
    const std::string p = "block." + std::to_string(l);
    Block b;
    b.ln1 = std::make_unique<nn::LayerNorm<float>>(store_, ws_, p + "/ln1", Shape{rows, D});
    b.attn = std::make_unique<nn::CausalAttention<float>>(store_, ws_, p + "/attn", D, c.heads, S, capacity);
    b.ln2 = std::make_unique<nn::LayerNorm<float>>(store_, ws_, p + "/ln2", Shape{rows, D});
    b.ff1 = std::make_unique<nn::Linear<float>>(store_, ws_, p + "/ff1", D, 4 * D, cap_rows, nn::Activation::relu);
    // Rows are positions of a sequence: S rows per sample (Note [dropout keys]).
    b.drop = std::make_unique<nn::Dropout<float>>(ws_, p + "/drop", Shape{rows, 4 * D}, c.dropout,
                                                  rng::hash(c.seed, 0x6c6dull, static_cast<std::uint64_t>(l)), S);
    b.ff2 = std::make_unique<nn::Linear<float>>(store_, ws_, p + "/ff2", 4 * D, D, cap_rows);
    b.h = &ws_.request(p + "/h", rows, D);
    b.y = &ws_.request(p + "/y", rows, D);
    blocks_.push_back(std::move(b));
  }
  ln_f_ = std::make_unique<nn::LayerNorm<float>>(store_, ws_, "ln_f", Shape{rows, D});
  head_ = std::make_unique<nn::Linear<float>>(store_, ws_, "head", D, c.vocab, cap_rows);
  ids_ = &ws_.request("lm/ids", Shape{rows});
  pos_ids_ = &ws_.request("lm/pos_ids", Shape{rows});
  targets_ = &ws_.request("lm/targets", rows, 1);
  x0_ = &ws_.request("lm/x0", rows, D);
  dlogits_ = &ws_.request("lm/dlogits", rows, c.vocab);
  da_ = &ws_.request("lm/da", rows, D);
  db_ = &ws_.request("lm/db", rows, D);
  dc_ = &ws_.request("lm/dc", rows, D);
  dwide_ = &ws_.request("lm/dwide", rows, 4 * D);
  dwide2_ = &ws_.request("lm/dwide2", rows, 4 * D);
  store_.allocate();
  ws_.allocate();
  tok_->bind(store_), pos_->bind(store_), ln_f_->bind(store_), head_->bind(store_);
  for (Block& b : blocks_)
    b.ln1->bind(store_), b.attn->bind(store_), b.ln2->bind(store_), b.ff1->bind(store_), b.ff2->bind(store_);
  transformer_detail::fill_position_ids(pos_ids_->flat(), rows, S);
}

std::string TransformerModel::config_string() const {
  const TransformerConfig& c = config_;
  return "transformer_vocab=" + std::to_string(c.vocab) + " transformer_dim=" + std::to_string(c.dim) +
         " transformer_heads=" + std::to_string(c.heads) + " transformer_layers=" + std::to_string(c.layers) +
         " transformer_dropout=" + real_text(c.dropout) + " transformer_seq_len=" + std::to_string(c.seq_len);
}

void TransformerModel::constrain_fields(std::vector<FieldSpec>& fields) const {
  for (FieldSpec& f : fields)
    if (f.name == "tokens") f.min_value = 0, f.max_value = config_.vocab - 1;
}

void TransformerModel::add(const Tensor<float>& a, const Tensor<float>& b, const Tensor<float>& y, int rows,
                           bool accumulate) {
  // Flat: the attention's output is shaped [N, L, D], the rest [N L, D]; both are the same rows.
  const float *ap = a.data(), *bp = b.data();
  float* yp = y.data();
  const int cols = static_cast<int>(y.shape().dim[static_cast<std::size_t>(y.shape().rank - 1)]);
  nn::for_each_cell(
      "lm_add", rows, cols, KOKKOS_LAMBDA(const int i, const int j) {
        const std::int64_t k = static_cast<std::int64_t>(i) * cols + j;
        yp[k] = accumulate ? yp[k] + ap[k] : ap[k] + bp[k];
      });
}

void TransformerModel::prepare(const Batch& b) {
  const Tensor<std::int64_t> tokens = b.get_as<std::int64_t>("tokens");
  if (tokens.cols() != config_.seq_len)
    throw Error("transformer: rows of " + std::to_string(tokens.cols()) + " tokens, the model was built for " +
                    std::to_string(config_.seq_len),
                ExitCode::bad_input);
  const int S = positions_, L = config_.seq_len;
  const std::int64_t* t = tokens.data();
  float *ids = ids_->data(), *targets = targets_->data();
  Kokkos::parallel_for(
      "lm_ids", range(0, static_cast<std::int64_t>(b.n) * S), KOKKOS_LAMBDA(const std::int64_t r) {
        const std::int64_t row = r / S, p = r % S;
        ids[r] = static_cast<float>(t[row * L + p]);
        targets[r] = static_cast<float>(t[row * L + p + 1]);
      });
}

const Tensor<float>& TransformerModel::forward(const Batch& b, bool training) {
  n_ = b.n;
  const int rows = n_ * positions_;
  prepare(b);
  tok_->forward(*ids_, rows);
  pos_->forward(*pos_ids_, rows);
  add(tok_->output(), pos_->output(), *x0_, rows, false);
  const Tensor<float>* x = x0_;
  for (Block& bl : blocks_) {
    bl.ln1->forward(*x, rows);
    bl.attn->forward(bl.ln1->output(), n_);
    add(*x, bl.attn->output(), *bl.h, rows, false);
    bl.ln2->forward(*bl.h, rows);
    bl.ff1->forward(bl.ln2->output(), rows);
    bl.drop->set_batch(b.epoch, b.ids);
    bl.drop->set_training(training);
    bl.drop->forward(bl.ff1->output(), rows);
    bl.ff2->forward(bl.drop->output(), rows);
    add(*bl.h, bl.ff2->output(), *bl.y, rows, false);
    x = bl.y;
  }
  ln_f_->forward(*x, rows);
  head_->forward(ln_f_->output(), rows);
  return head_->output();
}

double TransformerModel::loss_sum(const Batch& b) {
  if (b.n == 0) return 0.0;
  const Tensor<float>& logits = forward(b, false);
  return loss_.forward(logits, *targets_, b.n * positions_) / positions_;
}

double TransformerModel::accumulate_gradients(const Batch& b, double normaliser) {
  if (b.n == 0) return 0.0;
  const int rows = b.n * positions_;
  const nn::GradMode assign = nn::GradMode::assign;
  const Tensor<float>& logits = forward(b, true);
  // A sequence's loss is the mean over its positions: the sum over rows / positions.
  const double sum = loss_.forward_backward(logits, *targets_, *dlogits_, assign, rows, normaliser * positions_) /
                     positions_;
  const Tensor<float>& top = blocks_.empty() ? *x0_ : *blocks_.back().y;
  head_->backward(ln_f_->output(), *dlogits_, *da_, assign, rows);
  ln_f_->backward(top, *da_, *db_, assign, rows);  // db = dL/dx of the last block's output
  Tensor<float>*g = db_, *spare = da_;
  for (std::size_t l = blocks_.size(); l-- > 0;) {
    Block& bl = blocks_[l];
    const Tensor<float>& x = l == 0 ? *x0_ : *blocks_[l - 1].y;
    // y = h + ff(h): dh = g + d ff.
    bl.ff2->backward(bl.drop->output(), *g, *dwide_, assign, rows);
    bl.drop->backward(bl.ff1->output(), *dwide_, *dwide2_, assign, rows);
    bl.ff1->backward(bl.ln2->output(), *dwide2_, *dc_, assign, rows);
    bl.ln2->backward(*bl.h, *dc_, *spare, assign, rows);
    add(*g, *g, *spare, rows, true);  // spare = dh
    // h = x + attn(ln1(x)): dx = dh + ln1'(attn'(dh)).
    bl.attn->backward(bl.ln1->output(), *spare, *dc_, assign, n_);
    bl.ln1->backward(x, *dc_, *g, assign, rows);
    add(*spare, *spare, *g, rows, true);  // g = dx
  }
  pos_->backward(*pos_ids_, *g, Tensor<float>(), assign, rows);
  tok_->backward(*ids_, *g, Tensor<float>(), assign, rows);
  return sum;
}

}  // namespace hpct::lm
