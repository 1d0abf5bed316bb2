// Parquet rows through Apache Arrow (see parquet_rows.hpp). Compiled as C++20 with Arrow's headers
// when CMake found Arrow (HPCTRAIN_HAVE_PARQUET), else as the C++17 stub at the end.
#include "parquet/parquet_rows.hpp"

#if HPCTRAIN_HAVE_PARQUET

#include <arrow/api.h>
#include <arrow/io/file.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/schema.h>
#include <parquet/exception.h>

#include <charconv>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "io/table_rows.hpp"

namespace hpct::parquet {

namespace {

// An Arrow status or exception as the file's error: Arrow's message (its "IOError: " kind kept
// short) after the file name, never Arrow's status dump alone.
[[noreturn]] void refuse(const std::string& path, const std::string& what, const std::string& arrow) {
  std::string why;  // Arrow's message on one line ("Couldn't deserialize thrift: ...\nDeserializing ...\n")
  for (char c : arrow) why += c == '\n' ? std::string("; ") : std::string(1, c);
  while (!why.empty() && (why.back() == ' ' || why.back() == ';')) why.pop_back();
  throw Error(path + ": " + what + (why.empty() ? "" : " (Arrow: " + why + ")"), ExitCode::bad_input);
}

bool integer(arrow::Type::type t) {
  switch (t) {
    case arrow::Type::INT8:
    case arrow::Type::INT16:
    case arrow::Type::INT32:
    case arrow::Type::INT64:
    case arrow::Type::UINT8:
    case arrow::Type::UINT16:
    case arrow::Type::UINT32:
    case arrow::Type::UINT64: return true;
    default: return false;
  }
}

bool textual(arrow::Type::type t) {
  return t == arrow::Type::STRING || t == arrow::Type::LARGE_STRING || t == arrow::Type::STRING_VIEW;
}

// Numbers: a column of nulls only (pandas' all-None column) is every cell empty.
bool numeric(const arrow::DataType& t) {
  if (t.id() == arrow::Type::DICTIONARY) return numeric(*static_cast<const arrow::DictionaryType&>(t).value_type());
  return integer(t.id()) || t.id() == arrow::Type::FLOAT || t.id() == arrow::Type::DOUBLE ||
         t.id() == arrow::Type::NA;
}

bool readable(const arrow::DataType& t) {
  if (t.id() == arrow::Type::DICTIONARY)
    return readable(*static_cast<const arrow::DictionaryType&>(t).value_type());
  return numeric(t) || textual(t.id()) || t.id() == arrow::Type::BOOL;
}

template <class T>
void put_number(std::string& out, T v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.assign(buf, r.ptr);
}

// Element i of `a` as text; a null is the empty cell. Note [Parquet numbers as text]: a double is
// written by std::to_chars, its shortest form that reads back (strtod) as the same double, so a
// number has the value the file holds, as pandas' CSV of it would give; a float is widened first
// (its exact value, not the shortest float text). NaN is "nan" (Note [unobserved positions]).
void cell(const arrow::Array& a, int64_t i, std::string& out) {
  if (a.IsNull(i)) {
    out.clear();
    return;
  }
  switch (a.type_id()) {
    case arrow::Type::DOUBLE: return put_number(out, static_cast<const arrow::DoubleArray&>(a).Value(i));
    case arrow::Type::FLOAT:
      return put_number(out, static_cast<double>(static_cast<const arrow::FloatArray&>(a).Value(i)));
    case arrow::Type::INT8: return put_number(out, static_cast<const arrow::Int8Array&>(a).Value(i));
    case arrow::Type::INT16: return put_number(out, static_cast<const arrow::Int16Array&>(a).Value(i));
    case arrow::Type::INT32: return put_number(out, static_cast<const arrow::Int32Array&>(a).Value(i));
    case arrow::Type::INT64: return put_number(out, static_cast<const arrow::Int64Array&>(a).Value(i));
    case arrow::Type::UINT8: return put_number(out, static_cast<const arrow::UInt8Array&>(a).Value(i));
    case arrow::Type::UINT16: return put_number(out, static_cast<const arrow::UInt16Array&>(a).Value(i));
    case arrow::Type::UINT32: return put_number(out, static_cast<const arrow::UInt32Array&>(a).Value(i));
    case arrow::Type::UINT64: return put_number(out, static_cast<const arrow::UInt64Array&>(a).Value(i));
    case arrow::Type::BOOL: out = static_cast<const arrow::BooleanArray&>(a).Value(i) ? "true" : "false"; return;
    case arrow::Type::STRING: out = static_cast<const arrow::StringArray&>(a).GetView(i); return;
    case arrow::Type::LARGE_STRING: out = static_cast<const arrow::LargeStringArray&>(a).GetView(i); return;
    case arrow::Type::STRING_VIEW: out = static_cast<const arrow::StringViewArray&>(a).GetView(i); return;
    case arrow::Type::DICTIONARY: {  // pandas' category columns
      const auto& d = static_cast<const arrow::DictionaryArray&>(a);
      return cell(*d.dictionary(), d.GetValueIndex(i), out);
    }
    default: out.clear();  // not reached: read_columns refuses other types
  }
}

class ParquetRows : public io::TableRows {
 public:
  explicit ParquetRows(const std::string& path) : TableRows(path) {
    try {
      auto file = arrow::io::ReadableFile::Open(path);
      if (!file.ok()) refuse(path, "cannot open for reading", file.status().message());
      // The builder's Status forms: Arrow 26 and spack's Arrow (22 today) both have them.
      ::parquet::arrow::FileReaderBuilder builder;
      arrow::Status st = builder.Open(*file);
      if (st.ok()) st = builder.memory_pool(arrow::default_memory_pool())->Build(&reader_);
      if (!st.ok()) refuse(path, "not a readable Parquet file", st.message());
      st = reader_->GetSchema(&schema_);
      if (!st.ok()) refuse(path, "not a readable Parquet file", st.message());
    } catch (const ::parquet::ParquetException& e) {
      refuse(path, "not a readable Parquet file", e.what());
    }
    use_.resize(static_cast<std::size_t>(schema_->num_fields()), 0);
  }

  bool next(std::vector<std::string>& fields) override {
    if (!header_done_) {
      header_done_ = true;
      fields.clear();
      for (const auto& f : schema_->fields()) fields.push_back(f->name());
      return true;
    }
    if (columns_.empty()) read_columns({});  // no selection: every readable column
    while (table_ == nullptr || in_group_ == table_->num_rows()) {
      if (group_ == reader_->num_row_groups()) return false;
      load_group();
    }
    fields.resize(use_.size());
    for (std::size_t i = 0; i < use_.size(); ++i)
      if (!use_[i]) fields[i].clear();  // a column not read: an empty cell
    for (std::size_t k = 0; k < columns_.size(); ++k) {
      Cursor& c = cursor_[k];
      while (c.at == c.chunks->chunk(c.chunk)->length()) ++c.chunk, c.at = 0;
      cell(*c.chunks->chunk(c.chunk), c.at++, fields[static_cast<std::size_t>(columns_[k])]);
    }
    ++in_group_, ++row_;
    return true;
  }

  void read_columns(const std::vector<io::ColumnUse>& columns) override {
    const auto& manifest = reader_->manifest();
    columns_.clear(), leaves_.clear();
    std::vector<io::ColumnUse> all = columns;
    if (all.empty())
      for (int i = 0; i < schema_->num_fields(); ++i)
        if (readable(*schema_->field(i)->type())) all.push_back({i, io::CellKind::text});
    for (const io::ColumnUse& u : all) {
      const auto& field = schema_->field(u.column);
      const arrow::DataType& t = *field->type();
      const auto& sf = manifest.schema_fields[static_cast<std::size_t>(u.column)];
      if (!sf.is_leaf() || !readable(t))
        fail(0, field->name(),
             "has Parquet/Arrow type " + t.ToString() + ", which is not read (numbers, strings, booleans)");
      if (u.kind == io::CellKind::number && !numeric(t))
        fail(0, field->name(),
             "holds " + t.ToString() + " values where numbers are expected (write it as float64 or int64)");
      if (use_[static_cast<std::size_t>(u.column)]) continue;
      use_[static_cast<std::size_t>(u.column)] = 1;
      columns_.push_back(u.column), leaves_.push_back(sf.column_index);
    }
  }

  int place() const override { return static_cast<int>(row_); }
  const char* place_name() const override { return "row"; }

 private:
  struct Cursor {
    const arrow::ChunkedArray* chunks = nullptr;
    int chunk = 0;
    int64_t at = 0;
  };

  // The next row group's columns; Note [Parquet by row group]: a file is read a row group at a time
  // (pandas writes a scenario's 5-10k rows as one), so memory holds one group, not the file.
  void load_group() {
    try {
      const std::string what = "row group " + std::to_string(group_ + 1) + " (from row " +
                               std::to_string(row_ + 1) + ") cannot be read";
#if ARROW_VERSION_MAJOR >= 24  // the Status form is deprecated from 24 on
      auto t = reader_->ReadRowGroup(group_, leaves_);
      if (!t.ok()) refuse(path(), what, t.status().message());
      table_ = std::move(*t);
#else
      const arrow::Status st = reader_->ReadRowGroup(group_, leaves_, &table_);
      if (!st.ok()) refuse(path(), what, st.message());
#endif
    } catch (const ::parquet::ParquetException& e) {
      refuse(path(), "row group " + std::to_string(group_ + 1) + " cannot be read", e.what());
    }
    ++group_, in_group_ = 0;
    cursor_.assign(columns_.size(), {});
    for (std::size_t k = 0; k < columns_.size(); ++k) cursor_[k].chunks = table_->column(static_cast<int>(k)).get();
  }

  std::unique_ptr<::parquet::arrow::FileReader> reader_;
  std::shared_ptr<arrow::Schema> schema_;
  std::vector<char> use_;     // per field: read
  std::vector<int> columns_;  // the fields read, in the order of leaves_ and the table's columns
  std::vector<int> leaves_;   // their Parquet leaf columns
  std::shared_ptr<arrow::Table> table_;
  std::vector<Cursor> cursor_;
  int group_ = 0;
  int64_t in_group_ = 0, row_ = 0;
  bool header_done_ = false;
};

std::unique_ptr<io::TableRows> open(const std::string& path) { return std::make_unique<ParquetRows>(path); }

}  // namespace

bool enable_parquet_rows() {
  io::set_parquet_opener(&open);
  return true;
}

}  // namespace hpct::parquet

#else  // a build without Arrow: Parquet files stay an error (io::open_table_rows)

namespace hpct::parquet {

bool enable_parquet_rows() { return false; }

}  // namespace hpct::parquet

#endif
