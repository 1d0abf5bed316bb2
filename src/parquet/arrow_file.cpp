// The Parquet module (libhpctrain_parquet.so): parquet_file.hpp's File through Apache Arrow's C++
// Parquet reader, a row group at a time. The only code that includes Arrow (C++20); it links no
// hpctrain library, so programs load it with dlopen (Note [Parquet module] in io/parquet_module.cpp).
#include <arrow/api.h>
#include <arrow/io/file.h>
#include <arrow/util/decimal.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/schema.h>
#include <parquet/exception.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "parquet/parquet_file.hpp"

namespace hpct::parquet {

namespace {

// An Arrow status or exception as the file's error: Arrow's message on one line after the file name.
[[noreturn]] void refuse(const std::string& path, const std::string& what, const std::string& arrow) {
  std::string why;  // "Couldn't deserialize thrift: ...\nDeserializing ...\n"
  for (char c : arrow) why += c == '\n' ? std::string("; ") : std::string(1, c);
  while (!why.empty() && (why.back() == ' ' || why.back() == ';')) why.pop_back();
  throw std::runtime_error(path + ": " + what + (why.empty() ? "" : " (Arrow: " + why + ")"));
}

bool textual(arrow::Type::type t) {
  return t == arrow::Type::STRING || t == arrow::Type::LARGE_STRING || t == arrow::Type::STRING_VIEW;
}

bool numeric(arrow::Type::type t) {
  switch (t) {
    case arrow::Type::INT8:
    case arrow::Type::INT16:
    case arrow::Type::INT32:
    case arrow::Type::INT64:
    case arrow::Type::UINT8:
    case arrow::Type::UINT16:
    case arrow::Type::UINT32:
    case arrow::Type::UINT64:
    case arrow::Type::FLOAT:
    case arrow::Type::DOUBLE:
    case arrow::Type::DECIMAL128:
    case arrow::Type::NA: return true;  // a column of nulls only (pandas' all-None column)
    default: return false;
  }
}

ColumnKind kind_of(const arrow::DataType& t) {
  if (t.id() == arrow::Type::DICTIONARY) {  // pandas' category: its values' kind
    const ColumnKind k = kind_of(*static_cast<const arrow::DictionaryType&>(t).value_type());
    return k == ColumnKind::boolean ? ColumnKind::unsupported : k;
  }
  if (numeric(t.id())) return ColumnKind::number;
  if (textual(t.id())) return ColumnKind::text;
  if (t.id() == arrow::Type::BOOL) return ColumnKind::boolean;
  return ColumnKind::unsupported;
}

// Element i of a numeric or boolean array as a double (exact for every type but int64/uint64
// beyond 2^53 and decimals, which Arrow rounds once).
double number(const arrow::Array& a, int64_t i) {
  switch (a.type_id()) {
    case arrow::Type::DOUBLE: return static_cast<const arrow::DoubleArray&>(a).Value(i);
    case arrow::Type::FLOAT: return static_cast<const arrow::FloatArray&>(a).Value(i);
    case arrow::Type::INT8: return static_cast<const arrow::Int8Array&>(a).Value(i);
    case arrow::Type::INT16: return static_cast<const arrow::Int16Array&>(a).Value(i);
    case arrow::Type::INT32: return static_cast<const arrow::Int32Array&>(a).Value(i);
    case arrow::Type::INT64: return static_cast<double>(static_cast<const arrow::Int64Array&>(a).Value(i));
    case arrow::Type::UINT8: return static_cast<const arrow::UInt8Array&>(a).Value(i);
    case arrow::Type::UINT16: return static_cast<const arrow::UInt16Array&>(a).Value(i);
    case arrow::Type::UINT32: return static_cast<const arrow::UInt32Array&>(a).Value(i);
    case arrow::Type::UINT64: return static_cast<double>(static_cast<const arrow::UInt64Array&>(a).Value(i));
    case arrow::Type::BOOL: return static_cast<const arrow::BooleanArray&>(a).Value(i) ? 1.0 : 0.0;
    case arrow::Type::DECIMAL128: {
      const auto& d = static_cast<const arrow::Decimal128Array&>(a);
      const int32_t scale = static_cast<const arrow::Decimal128Type&>(*a.type()).scale();
      return arrow::Decimal128(d.GetValue(i)).ToDouble(scale);
    }
    default: return 0;  // NA: every cell null
  }
}

// Note [Parquet floats]: a float32 column's values are taken as they are; an integer column's are
// rounded to float once (as strtof rounds its decimal text in a CSV); a double column's are rounded
// to float once, the nearest float to the double, which for a decimal written by pandas (0.1 as
// the double nearest 0.1) is almost always strtof's nearest float to the decimal itself, but not
// always (a double rounding). int64 goes to float directly, not through double, for the same reason.
float to_float(const arrow::Array& a, int64_t i) {
  switch (a.type_id()) {
    case arrow::Type::FLOAT: return static_cast<const arrow::FloatArray&>(a).Value(i);
    case arrow::Type::INT64: return static_cast<float>(static_cast<const arrow::Int64Array&>(a).Value(i));
    case arrow::Type::UINT64: return static_cast<float>(static_cast<const arrow::UInt64Array&>(a).Value(i));
    default: return static_cast<float>(number(a, i));
  }
}

std::string_view text(const arrow::Array& a, int64_t i) {
  switch (a.type_id()) {
    case arrow::Type::STRING: return static_cast<const arrow::StringArray&>(a).GetView(i);
    case arrow::Type::LARGE_STRING: return static_cast<const arrow::LargeStringArray&>(a).GetView(i);
    default: return static_cast<const arrow::StringViewArray&>(a).GetView(i);
  }
}

// The distinct strings of a column as one dictionary over the group's chunks.
struct Dict {
  ColumnData* out;
  std::unordered_map<std::string, int32_t> index;
  int32_t code(std::string_view s) {
    const auto [it, fresh] = index.emplace(std::string(s), static_cast<int32_t>(out->dict.size()));
    if (fresh) out->dict.push_back(it->first);
    return it->second;
  }
};

void append(const arrow::Array& a, bool doubles, ColumnData& out, Dict& dict) {
  const int64_t n = a.length();
  const bool dictionary = a.type_id() == arrow::Type::DICTIONARY;
  const auto* d = dictionary ? &static_cast<const arrow::DictionaryArray&>(a) : nullptr;
  const arrow::Array& values = dictionary ? *d->dictionary() : a;
  const bool is_text = textual(values.type_id());
  std::vector<int32_t> dict_code;  // a dictionary chunk's strings coded once
  if (dictionary && is_text) {
    dict_code.resize(static_cast<std::size_t>(values.length()));
    for (int64_t j = 0; j < values.length(); ++j)
      dict_code[static_cast<std::size_t>(j)] = values.IsNull(j) ? -1 : dict.code(text(values, j));
  }
  for (int64_t i = 0; i < n; ++i) {
    const bool null = a.IsNull(i) || (dictionary && values.IsNull(d->GetValueIndex(i)));
    const int64_t at = dictionary && !null ? d->GetValueIndex(i) : i;
    if (is_text) {
      out.code.push_back(null ? -1 : dictionary ? dict_code[static_cast<std::size_t>(at)] : dict.code(text(a, i)));
      continue;
    }
    out.null.push_back(null ? 1 : 0);
    if (doubles) out.d.push_back(null ? 0.0 : number(values, at));
    else out.f.push_back(null ? 0.0F : to_float(values, at));
  }
}

class ArrowFile : public File {
 public:
  explicit ArrowFile(const std::string& path) : path_(path) {
    try {
      auto file = arrow::io::ReadableFile::Open(path);
      if (!file.ok()) refuse(path, "cannot open for reading", file.status().message());
      ::parquet::arrow::FileReaderBuilder builder;
      arrow::Status st = builder.Open(*file);
      if (st.ok()) st = builder.memory_pool(arrow::default_memory_pool())->Build(&reader_);
      if (!st.ok()) refuse(path, "not a readable Parquet file", st.message());
      st = reader_->GetSchema(&schema_);
      if (!st.ok()) refuse(path, "not a readable Parquet file", st.message());
    } catch (const ::parquet::ParquetException& e) {
      refuse(path, "not a readable Parquet file", e.what());
    }
    const auto& manifest = reader_->manifest();
    for (int i = 0; i < schema_->num_fields(); ++i) {
      const auto& field = schema_->field(i);
      const auto& sf = manifest.schema_fields[static_cast<std::size_t>(i)];
      ColumnInfo c{field->name(), sf.is_leaf() ? kind_of(*field->type()) : ColumnKind::unsupported,
                   field->type()->ToString()};
      columns_.push_back(c);
      leaf_.push_back(sf.is_leaf() ? sf.column_index : -1);
    }
    const auto meta = reader_->parquet_reader()->metadata();
    for (int g = 0; g < meta->num_row_groups(); ++g) {
      group_rows_.push_back(meta->RowGroup(g)->num_rows());
      rows_ += group_rows_.back();
    }
  }

  const std::vector<ColumnInfo>& columns() const override { return columns_; }
  std::int64_t rows() const override { return rows_; }
  const std::vector<std::int64_t>& group_rows() const override { return group_rows_; }

  void read_group(int group, const std::vector<int>& columns, bool doubles, std::vector<ColumnData>& out) override {
    std::vector<int> leaves;
    for (const int c : columns) {
      if (columns_.at(static_cast<std::size_t>(c)).kind == ColumnKind::unsupported)
        throw std::runtime_error(path_ + ": column '" + columns_[static_cast<std::size_t>(c)].name + "' has type " +
                                 columns_[static_cast<std::size_t>(c)].type + ", which is not read");
      leaves.push_back(leaf_[static_cast<std::size_t>(c)]);
    }
    std::shared_ptr<arrow::Table> table;
    const std::string what = "row group " + std::to_string(group + 1) + " cannot be read";
    try {
#if ARROW_VERSION_MAJOR >= 24  // the Status form is deprecated from 24 on
      auto t = reader_->ReadRowGroup(group, leaves);
      if (!t.ok()) refuse(path_, what, t.status().message());
      table = std::move(*t);
#else
      const arrow::Status st = reader_->ReadRowGroup(group, leaves, &table);
      if (!st.ok()) refuse(path_, what, st.message());
#endif
    } catch (const ::parquet::ParquetException& e) {
      refuse(path_, what, e.what());
    }
    out.assign(columns.size(), {});
    for (std::size_t k = 0; k < columns.size(); ++k) {
      const auto n = static_cast<std::size_t>(table->num_rows());
      if (columns_[static_cast<std::size_t>(columns[k])].kind == ColumnKind::text) out[k].code.reserve(n);
      else (doubles ? out[k].d.reserve(n) : out[k].f.reserve(n)), out[k].null.reserve(n);
      Dict dict{&out[k], {}};
      for (const auto& chunk : table->column(static_cast<int>(k))->chunks()) append(*chunk, doubles, out[k], dict);
    }
  }

 private:
  std::string path_;
  std::unique_ptr<::parquet::arrow::FileReader> reader_;
  std::shared_ptr<arrow::Schema> schema_;
  std::vector<ColumnInfo> columns_;
  std::vector<int> leaf_;  // per column: its Parquet leaf column (-1: nested)
  std::vector<std::int64_t> group_rows_;
  std::int64_t rows_ = 0;
};

}  // namespace

}  // namespace hpct::parquet

// The module's entry point (parquet_file.hpp's HPCTRAIN_PARQUET_ENTRY).
extern "C" __attribute__((visibility("default"))) hpct::parquet::File* hpctrain_parquet_open_v1(
    const std::string& path) {
  return new hpct::parquet::ArrowFile(path);
}
