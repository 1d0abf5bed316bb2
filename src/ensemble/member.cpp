// Ensemble members as scorers (see member.hpp).
#include "ensemble/member.hpp"

#include <cstring>
#include <fstream>

#include "core/error.hpp"
#include "core/log.hpp"
#include "gbdt/model_io.hpp"
#include "io/hdf5.hpp"
#include "models/registry.hpp"

namespace hpct::ensemble {

namespace {

constexpr int kChunk = 2048;  // rows per network batch, as apps/predict's default

// The output a network member's score comes from: regression reads `outputs` [n, 1]; binary reads
// `probabilities`, [n, 1] (bce: P(y = 1)) or [n, 2] (cross_entropy over two classes: column 1);
// multiclass reads every column of `probabilities` [n, K] (cross_entropy, K >= 2).
struct NetworkOutput {
  std::string name;
  int column = 0;  // -1: all columns
  int width = 1;
};

NetworkOutput network_output(const Model& m, Task task, const std::string& path) {
  const std::vector<NamedShape> outs = m.predict_outputs(PredictOptions{});
  const std::string want = task == Task::regression ? "outputs" : "probabilities";
  for (const NamedShape& s : outs) {
    if (s.name != want) continue;
    const std::int64_t w = s.row_size();
    if (task == Task::regression && w == 1) return {want, 0, 1};
    if (task == Task::binary && (w == 1 || w == 2)) return {want, static_cast<int>(w - 1), 1};
    if (task == Task::multiclass && w >= 2) return {want, -1, static_cast<int>(w)};
    throw Error(path + ": the " + m.family() + " model's '" + want + "' has " + std::to_string(w) +
                    " values per row; a " + task_name(task) + " ensemble member needs " +
                    (task == Task::binary       ? "1 (bce) or 2 (two classes)"
                     : task == Task::multiclass ? "2 or more (one per class)"
                                                : "1"),
                ExitCode::bad_input);
  }
  throw Error(path + ": the " + m.family() + " model has no '" + want + "' output; a " + task_name(task) +
                  " ensemble member needs it" +
                  (task == Task::binary       ? " (train it with loss bce or cross_entropy)"
                   : task == Task::multiclass ? " (train it with loss cross_entropy)"
                                              : ""),
              ExitCode::bad_input);
}

}  // namespace

const char* task_name(Task t) {
  return t == Task::binary ? "binary" : t == Task::multiclass ? "multiclass" : "regression";
}

Task task_from_name(const std::string& name, const std::string& origin) {
  if (name == "regression" || name == "squared_error") return Task::regression;
  if (name == "binary") return Task::binary;
  if (name == "multiclass") return Task::multiclass;
  throw Error(origin + ": ensembles combine regression, binary or multiclass members, not '" + name + "'",
              ExitCode::bad_input);
}

bool is_hdf5_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char signature[8] = {};
  return f.read(signature, sizeof signature) && std::memcmp(signature, "\x89HDF\r\n\x1a\n", 8) == 0;
}

Member gbdt_member(gbdt::Model model, const std::string& path, Task task) {
  const bool fits = task == Task::binary       ? model.objective == gbdt::Objective::binary
                    : task == Task::multiclass ? model.objective == gbdt::Objective::multiclass
                                               : gbdt::predicts_amount(model.objective);  // e^margin too
  if (!fits || model.objective == gbdt::Objective::lambdarank)  // ranking scores are no amount
    throw Error(path + ": a GBDT model with objective " + gbdt::objective_name(model.objective) +
                    " cannot be a member of a " + task_name(task) + " ensemble",
                ExitCode::bad_input);
  Member m;
  m.path = path;
  m.kind = "gbdt";
  m.num_features = model.num_features;
  m.num_class = task == Task::multiclass ? model.num_class : 1;
  m.classes = model.classes;
  m.trees = std::move(model);
  return m;
}

Member network_member(std::shared_ptr<Model> model, const std::string& path, Task task) {
  const std::vector<NamedShape> in = model->predict_inputs();
  if (in.size() != 1)
    throw Error(path + ": the " + model->family() + " model reads " + std::to_string(in.size()) +
                    " fields; ensemble members read one row of features",
                ExitCode::bad_input);
  const NetworkOutput out = network_output(*model, task, path);  // checks it now, not at the first row
  Member m;
  m.num_class = out.width;
  m.path = path;
  m.kind = model->family();
  m.num_features = static_cast<int>(in.front().row_size());
  std::vector<FieldSpec> rule{FieldSpec{}};
  rule.front().name = in.front().name;
  model->constrain_fields(rule);
  m.reads_nan = rule.front().nan_allowed;
  m.network = std::move(model);
  return m;
}

namespace {

// What a network trained on a table keeps in its `table` attribute (gbdt/table_encoding.hpp): the
// class names and, with categorical features, how its inputs encode their codes.
void read_network_table(const std::string& path, Member& m) {
  std::string text;
  {
    const h5::File f = h5::File::open_read(path);
    if (!h5::has_attr(f, "/", "table")) return;
    text = h5::read_attr_string(f, "/", "table");
  }
  TableEncoding e = TableEncoding::from_json(text, path + ": attribute 'table'");
  m.classes = e.classes;
  if (!e.categories.any()) return;
  if (e.width() != m.num_features)
    throw Error(strf("%s: attribute 'table' gives %lld inputs a row, the model reads %d", path.c_str(), e.width(),
                     m.num_features),
                ExitCode::bad_input);
  m.num_features = static_cast<int>(e.cols);
  m.inputs = std::make_shared<const TableEncoding>(std::move(e));
}

}  // namespace

Member load_member(const std::string& path, Task task) {
  if (is_hdf5_file(path)) {
    Member m = network_member(std::shared_ptr<Model>(load_model(path, kChunk)), path, task);
    read_network_table(path, m);
    return m;
  }
  return gbdt_member(gbdt::read_model(path), path, task);
}

std::vector<double> member_scores(const Member& m, Task task, const std::vector<float>& x, long long n,
                                  long long cols, long long first_row) {
  if (cols != m.num_features)
    throw Error(strf("%s: the member reads %d features; the data has %lld", m.path.c_str(), m.num_features, cols),
                ExitCode::bad_input);
  if (!m.network) {
    std::vector<double> s = gbdt::predict_margins(m.trees, x, n);
    gbdt::transform(m.trees.objective, m.trees.num_class, s);
    return s;
  }
  const NetworkOutput want = network_output(*m.network, task, m.path);
  PredictOptions po;
  po.chunk = kChunk;
  po.outputs = {want.name};
  std::vector<float> encoded;  // the codes as the network's inputs (Note [category embeddings])
  if (m.inputs) {
    encoded.resize(static_cast<std::size_t>(n * m.inputs->width()));
    encode_coded_rows(*m.inputs, x.data(), static_cast<std::size_t>(n), encoded.data());
  }
  const std::vector<HostOutput> out = predict_rows(*m.network, m.inputs ? encoded.data() : x.data(),
                                                   static_cast<std::uint64_t>(n),
                                                   static_cast<std::uint64_t>(m.inputs ? m.inputs->width() : cols),
                                                   static_cast<std::uint64_t>(first_row), po);
  const HostOutput& o = out.front();
  std::vector<double> s(static_cast<std::size_t>(n) * static_cast<std::size_t>(want.width));
  for (long long i = 0; i < n; ++i)
    for (int k = 0; k < want.width; ++k)
      s[static_cast<std::size_t>(i * want.width + k)] =
          o.values[static_cast<std::size_t>(i * o.row_size + (want.column < 0 ? k : want.column))];
  return s;
}

std::uint64_t fnv1a64(const char* data, std::size_t n, std::uint64_t h) {
  for (std::size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(data[i]);
    h *= 1099511628211ull;
  }
  return h;
}

std::string file_checksum(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(path + ": cannot open", ExitCode::bad_input);
  std::uint64_t h = kFnvOffset;
  char buf[1 << 16];
  while (f) {
    f.read(buf, sizeof buf);
    h = fnv1a64(buf, static_cast<std::size_t>(f.gcount()), h);
  }
  return strf("%016llx", static_cast<unsigned long long>(h));
}

}  // namespace hpct::ensemble
