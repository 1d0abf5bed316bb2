// CategoryEmbeddings: a table row's numbers followed by C category codes -> the numbers followed by
// each code's learned row, one nn::Embedding per code column (torch.cat([x_num, emb_0(code_0), ...,
// emb_{C-1}(code_{C-1})], 1)). Input [n, numbers + C] (the codes held as Scalar values, exact below
// 2^24, each below its table's rows: the data path writes them, Note [category embeddings] in
// gbdt/table_encoding.cpp); output [n, numbers + C x dim]. Tables "<name><c>/weight" [rows_c, dim].
// The codes have no gradient: dx, when given, gets dy's numbers part and zeros (or nothing added) for
// the codes. Backward runs the embeddings in reverse registration order, so each reports its range
// ready as Note [registration order] expects. Obeys Note [the gradient rule] (nn/layer.hpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "nn/layer.hpp"
#include "nn/layers/embedding.hpp"
#include "nn/precision.hpp"

namespace hpct::nn {

template <class Scalar>
class CategoryEmbeddings : public Layer<Scalar> {
 public:
  using T = Tensor<Scalar>;
  using Store = ParameterStore<Scalar>;
  CategoryEmbeddings(Store& store, Workspace<Scalar>& ws, const std::string& name, int numbers,
                     const std::vector<int>& rows, int dim, int capacity, Precision precision = Precision::fp32);
  void bind(const Store& store) override;
  void forward(const T& x, int n) override;
  void backward(const T& x, const T& dy, const T& dx, GradMode mode, int n) override;
  const T& output() const override { return *y_; }
  int numbers() const { return numbers_; }
  int out_cols() const { return numbers_ + static_cast<int>(tables_.size()) * dim_; }

 private:
  // Column c's codes, rows [0, n): a contiguous [n] index tensor.
  T codes(std::size_t c, int n) const;

  int numbers_, dim_, capacity_;
  std::vector<std::unique_ptr<Embedding<Scalar>>> tables_;
  T* codes_ = nullptr;  // [C, capacity]: the codes column by column
  T* dy_ = nullptr;     // [capacity, dim]: one table's slice of dy
  T* y_ = nullptr;
};

}  // namespace hpct::nn
