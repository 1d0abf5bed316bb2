// Helpers of test_data_sources.cpp and test_image_sources.cpp: an in-memory table of typed fields
// (fixed and ragged) that is both what a test writes with h5::write and what it expects to see, a
// Batch copied to the host, decks and data_cache modes, and `field_probe`, a model family that
// accepts any fields and records the batches it is given.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "comm/comm.hpp"
#include "data/batch.hpp"
#include "data/shard_options.hpp"
#include "data/source_registry.hpp"
#include "io/hdf5.hpp"
#include "models/registry.hpp"
#include "support/test_support.hpp"
#include "train/trainer.hpp"

namespace hpct::test {

// One field of a table: fixed (a row of `row_shape` values) or ragged (rows of elements of
// `row_shape` values, by `offsets`). Values are kept as double (exact for the values used here).
struct TableField {
  std::string name;
  DType dtype = DType::f32;
  std::vector<std::uint64_t> row_shape;
  bool ragged = false;
  std::vector<double> values;      // all rows' values (ragged: all elements', in row order)
  std::vector<long long> offsets;  // ragged: rows + 1, written as `name_offsets`

  std::uint64_t width() const {
    std::uint64_t w = 1;
    for (std::uint64_t d : row_shape) w *= d;
    return w;
  }
  std::uint64_t elements(std::uint64_t r) const { return ragged ? std::uint64_t(offsets[r + 1] - offsets[r]) : 1; }
  // Where row r's values start in `values`.
  std::uint64_t begin(std::uint64_t r) const { return (ragged ? std::uint64_t(offsets[r]) : r) * width(); }
  void write(const h5::File& f) const {
    std::vector<std::uint64_t> dims = {values.size() / width()};
    dims.insert(dims.end(), row_shape.begin(), row_shape.end());
    if (dtype == DType::f32) {
      const std::vector<float> v(values.begin(), values.end());
      h5::write(f, name, dims, v.data());
    } else if (dtype == DType::i32) {
      const std::vector<int> v(values.begin(), values.end());
      h5::write(f, name, dims, v.data());
    } else {
      const std::vector<long long> v(values.begin(), values.end());
      h5::write(f, name, dims, v.data());
    }
    if (ragged) h5::write(f, name + "_offsets", {offsets.size()}, offsets.data());
  }
};

struct Table {
  std::uint64_t rows = 0;
  std::vector<TableField> fields;
  TableField& operator[](const std::string& name) {
    for (TableField& f : fields)
      if (f.name == name) return f;
    throw Error("test table: no field " + name);
  }
  void write(const std::string& path) const {
    const h5::File f = h5::File::create(path);
    for (const TableField& t : fields) t.write(f);
  }
};

// Rank 0 writes the table as scratch file `name`.h5; every rank returns the path once it exists.
inline std::string written(const Comm& comm, const Table& t, const std::string& name) {
  const std::string path = scratch(name + ".h5");
  if (comm.rank() == 0) t.write(path);
  comm.barrier();
  return path;
}

// `path` opened as the deck lines (data_format and its keys) say.
inline std::shared_ptr<const Dataset> open_as(const std::string& deck_lines, const std::string& path) {
  return open_data_source(make_deck(deck_lines + "data_file " + path + "\n"), path, "data_file");
}

// Every row of a data set, read once (read_rows with no bad value).
struct Read {
  std::vector<FieldSpec> specs;
  HostFields host;
  const float* at(int f) const {
    return static_cast<const float*>(host.buffers()[static_cast<std::size_t>(f)].values);
  }
};

inline Read read(const Dataset& d, const std::vector<std::uint64_t>& rows) {
  Read r{d.fields(), HostFields(d.fields(), rows.size(), std::vector<std::uint64_t>(d.fields().size(), 0))};
  EXPECT_EQ(d.read_rows(rows, r.host.buffers()), kNoBadValue);
  return r;
}

// `b` holds the same rows as `a`, bit for bit (NaN where a has NaN); `what` names b in failures.
inline void expect_same_rows(const Dataset& a, const Dataset& b, const std::string& what) {
  ASSERT_EQ(b.rows(), a.rows()) << what;
  std::vector<std::uint64_t> rows;
  for (std::uint64_t r = 0; r < a.rows(); ++r) rows.push_back(r);
  const Read x = read(a, rows), y = read(b, rows);
  ASSERT_EQ(x.specs.size(), y.specs.size()) << what;
  for (std::size_t f = 0; f < x.specs.size(); ++f) {
    ASSERT_EQ(x.specs[f].row_shape, y.specs[f].row_shape) << what << " " << x.specs[f].name;
    for (std::size_t i = 0; i < rows.size() * x.specs[f].width(); ++i) {
      const float u = x.at(int(f))[i], v = y.at(int(f))[i];
      if (std::isnan(u)) EXPECT_TRUE(std::isnan(v)) << what << " " << x.specs[f].name << " " << i;
      else EXPECT_EQ(v, u) << what << " " << x.specs[f].name << " " << i;
    }
  }
}

// The epoch shard's options for a data_cache mode.
inline ShardOptions options(DataCache cache, bool prefetch, std::uint64_t cache_mb = 2048) {
  ShardOptions o;
  o.cache = cache, o.prefetch = prefetch, o.cache_mb = cache_mb;
  return o;
}

// The modes of test_data_path.cpp: stream without and with prefetch, memory, auto (held), auto
// over its budget (streamed).
inline const std::vector<std::string> kModes = {"data_cache stream\nprefetch_epoch false\n",
                                                "data_cache stream\nprefetch_epoch true\n", "data_cache memory\n",
                                                "data_cache auto\n", "data_cache auto\ndata_cache_mb 0\n"};

// The error `train` stops with on this deck (collective; "" when it trains to the end).
inline std::string train_error(const std::string& deck_text) {
  const Comm comm;
  const deck::Deck deck = make_deck(deck_text);
  return error_message([&] {
    NetworkTrainer t(deck, comm);
    t.run();
  });
}

// A batch as the host sees it: per field its dtype, shape, values (as double) and ragged offsets.
struct Seen {
  int n = 0;
  std::uint64_t epoch = 0;
  std::vector<std::uint64_t> ids;
  std::map<std::string, DType> dtypes;
  std::map<std::string, Shape> shapes;
  std::map<std::string, std::vector<double>> values;
  std::map<std::string, std::vector<std::uint64_t>> offsets;  // ragged fields only
};

template <class T>
std::vector<T> device_values(const T* p, std::size_t n) {
  std::vector<T> out(n);
  if (n == 0) return out;
  Kokkos::View<const T*, MemSpace, Kokkos::MemoryUnmanaged> d(p, n);
  Kokkos::View<T*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> h(out.data(), n);
  Kokkos::deep_copy(h, d);
  return out;
}

inline Seen seen(const Batch& b) {
  Seen s;
  s.n = b.n, s.epoch = b.epoch;
  if (b.n > 0) {
    const auto ids = to_host(b.ids);
    s.ids.assign(ids.data(), ids.data() + b.n);
  }
  for (int i = 0; i < b.field_count; ++i) {
    const Batch::Field& f = b.fields[static_cast<std::size_t>(i)];
    const auto n = static_cast<std::size_t>(f.shape.size());
    std::vector<double>& v = s.values[f.name];
    if (f.dtype == DType::f32) {
      const auto x = device_values(static_cast<const float*>(f.data), n);
      v.assign(x.begin(), x.end());
    } else if (f.dtype == DType::i32) {
      const auto x = device_values(static_cast<const std::int32_t*>(f.data), n);
      v.assign(x.begin(), x.end());
    } else {
      const auto x = device_values(static_cast<const std::int64_t*>(f.data), n);
      v.assign(x.begin(), x.end());
    }
    s.dtypes[f.name] = f.dtype;
    s.shapes[f.name] = f.shape;
    if (f.offsets) s.offsets[f.name] = device_values(f.offsets, static_cast<std::size_t>(b.n) + 1);
  }
  return s;
}

// What a batch of the table's rows `file_rows` (sample ids `ids`) must show.
inline Seen expected(const Table& t, const std::vector<std::uint64_t>& file_rows,
                     const std::vector<std::uint64_t>& ids) {
  Seen s;
  s.n = static_cast<int>(file_rows.size());
  s.ids = ids;
  for (const TableField& f : t.fields) {
    std::vector<double>& v = s.values[f.name];
    std::uint64_t units = 0;
    if (f.ragged) s.offsets[f.name] = {0};
    for (std::uint64_t r : file_rows) {
      const auto a = f.values.begin() + static_cast<std::ptrdiff_t>(f.begin(r));
      v.insert(v.end(), a, a + static_cast<std::ptrdiff_t>(f.elements(r) * f.width()));
      units += f.elements(r);
      if (f.ragged) s.offsets[f.name].push_back(units);
    }
    Shape shape;
    shape.rank = 1 + static_cast<int>(f.row_shape.size());
    shape.dim[0] = static_cast<std::int64_t>(units);
    for (std::size_t d = 0; d < f.row_shape.size(); ++d)
      shape.dim[d + 1] = static_cast<std::int64_t>(f.row_shape[d]);
    s.shapes[f.name] = shape;
    s.dtypes[f.name] = f.dtype;
  }
  return s;
}

// Every field, its values, shape, dtype and offsets, the ids and the row count agree.
inline void expect_same(const Seen& got, const Seen& want, const std::string& where) {
  ASSERT_EQ(got.n, want.n) << where;
  EXPECT_EQ(got.ids, want.ids) << where;
  ASSERT_EQ(got.values.size(), want.values.size()) << where;
  for (const auto& [name, values] : want.values) {
    ASSERT_EQ(got.values.count(name), 1u) << where << ": no field " << name;
    EXPECT_EQ(got.dtypes.at(name), want.dtypes.at(name)) << where << ": " << name;
    EXPECT_EQ(got.shapes.at(name), want.shapes.at(name))
        << where << ": " << name << " " << got.shapes.at(name).to_string() << " vs "
        << want.shapes.at(name).to_string();
    EXPECT_EQ(got.values.at(name), values) << where << ": " << name;
  }
  EXPECT_EQ(got.offsets, want.offsets) << where;
}

// `model field_probe`: one unused parameter; records every batch it trains on and evaluates, and
// narrows the fields' checks as the test sets in probe_checks() (Model::constrain_fields).
struct ProbeChecks {
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> ranges;  // field -> [min, max]
  std::map<std::string, std::string> index_into;                        // field -> ragged field
};
inline ProbeChecks& probe_checks() {
  static ProbeChecks c;
  return c;
}

class ProbeModel : public Model {
 public:
  ProbeModel() {
    store_.add("w", {1}, nn::Init::constant_zero(), false);
    store_.allocate();
  }
  std::string family() const override { return "field_probe"; }
  std::string config_string() const override { return ""; }
  nn::ParameterStore<float>& store() override { return store_; }
  double accumulate_gradients(const Batch& b, double) override {
    trained.push_back(seen(b));
    store_.report_ready(0, 0);
    return 0.0;
  }
  // Each row counts 1: the evaluator's mean loss is 1 exactly when every row was seen once.
  double loss_sum(const Batch& b) override {
    evaluated.push_back(seen(b));
    return b.n;
  }
  void constrain_fields(std::vector<FieldSpec>& fields) const override {
    for (FieldSpec& f : fields) {
      const auto r = probe_checks().ranges.find(f.name);
      if (r != probe_checks().ranges.end()) f.min_value = r->second.first, f.max_value = r->second.second;
      const auto i = probe_checks().index_into.find(f.name);
      if (i == probe_checks().index_into.end()) continue;
      for (std::size_t t = 0; t < fields.size(); ++t)
        if (fields[t].name == i->second) f.index_into = static_cast<int>(t);
    }
  }
  std::vector<Seen> trained, evaluated;

 private:
  nn::ParameterStore<float> store_;
};

inline ModelFamily probe_family() {
  ModelFamily f;
  f.name = "field_probe";
  f.summary = "a test family: records the batches it sees (test/data/test_data_sources.cpp)";
  f.declare_keys = [](deck::Schema& s) { s.section("model (field_probe, a test family)"); };
  f.build = [](const ModelBuildContext&) -> std::unique_ptr<Model> { return std::make_unique<ProbeModel>(); };
  f.from_config = [](const deck::Deck&, int) -> std::unique_ptr<Model> { return std::make_unique<ProbeModel>(); };
  return f;
}

// Registers probe_family; returns true, for a namespace-scope constant that registers it before
// main, so the deck schema (built on the first make_deck) lists it.
inline bool register_probe_family() {
  register_model_family(probe_family());
  return true;
}

}  // namespace hpct::test
