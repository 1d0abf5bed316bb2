// The readers every table shares (see table_dataset.hpp): Dataset's over read_table_rows.
#include "data/table_dataset.hpp"

#include <numeric>

#include "core/error.hpp"

namespace hpct {

void TableDataset::read_block_strings(std::uint64_t first, std::uint64_t count, float* x, float* y,
                                      io::TextStrings& strings, float* w) const {
  std::vector<std::uint64_t> rows(count);
  std::iota(rows.begin(), rows.end(), first);
  read_table_rows(rows.data(), rows.size(), x, labelled() ? y : nullptr, columns().libsvm ? nullptr : &strings, w);
}

std::string TableDataset::where_row(std::uint64_t row, const std::string& what) const {
  return where(columns().file, static_cast<int>(file_line(row)), what);
}

std::vector<FieldSpec> TableDataset::fields() const {
  std::vector<FieldSpec> f = supervised_fields(static_cast<std::uint64_t>(columns().cols), 1);
  if (!labelled()) f.pop_back();
  return f;
}

long long TableDataset::read_rows(const std::vector<std::uint64_t>& rows,
                                  const std::vector<FieldBuffer>& out) const {
  read_table_rows(rows.data(), rows.size(), static_cast<float*>(out.at(0).values),
                  labelled() ? static_cast<float*>(out.at(1).values) : nullptr, nullptr, nullptr);
  return kNoBadValue;
}

long long TableDataset::read_block(std::uint64_t first, std::uint64_t count,
                                   const std::vector<FieldBuffer>& out) const {
  std::vector<std::uint64_t> rows(count);
  std::iota(rows.begin(), rows.end(), first);
  return read_rows(rows, out);
}

std::vector<std::string> TableDataset::value_names(int field) const {
  if (field == 0) return columns().names;
  if (field == 1 && !columns().label_name.empty()) return {columns().label_name};
  return {};
}

}  // namespace hpct
