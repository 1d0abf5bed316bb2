// The blocked layout's switch for a whole network (see blocked_layout.hpp).
#include "nn/blocked_layout.hpp"

#include <cstdlib>
#include <type_traits>

namespace hpct::nn {

constexpr int kBlock = 16;  // nChw16c

template <class Scalar>
void BlockedLayout<Scalar>::init(const std::vector<Conv2d<Scalar>*>& convs,
                                 const std::vector<BatchNorm2d<Scalar>*>& norms, MaxPool2d<Scalar>* max_pool,
                                 GlobalAvgPool2d<Scalar>* avg_pool) {
  convs_ = convs, norms_ = norms, max_pool_ = max_pool, avg_pool_ = avg_pool;
  const char* off = std::getenv("HPCTRAIN_NO_BLOCKED");
  bool ok = std::is_same<Scalar, float>::value && !convs.empty() && !(off && off[0] == '1');
  for (std::size_t i = 0; i < convs.size(); ++i) {
    const ConvGeometry& g = convs[i]->geometry();
    const bool nchw_out = i + 1 == convs.size() && !avg_pool;
    ok = ok && (i == 0 || g.c_in % kBlock == 0) && (nchw_out || g.c_out % kBlock == 0);
  }
  for (const auto* bn : norms) ok = ok && bn->can_block();
  possible_ = ok;
}

template <class Scalar>
void BlockedLayout<Scalar>::sync() {
  bool all = possible_;
  for (const auto* conv : convs_) all = all && conv->algorithm() == ConvAlgorithm::onednn;
  if (all == blocked_) return;
  blocked_ = all;
  const int b = all ? kBlock : 0;
  for (std::size_t i = 0; i < convs_.size(); ++i)
    convs_[i]->set_layout(i == 0 ? 0 : b, i + 1 == convs_.size() && !avg_pool_ ? 0 : b);
  for (auto* bn : norms_) bn->set_blocked(all);
  if (max_pool_) max_pool_->set_blocked(all);
  if (avg_pool_) avg_pool_->set_blocked(all);
}

template class BlockedLayout<float>;
template class BlockedLayout<double>;

}  // namespace hpct::nn
