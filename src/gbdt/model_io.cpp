// The model file through nlohmann-json: written in the documented key order, read with checks that
// name the file and field.
#include "gbdt/model_io.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.hpp"
#include "core/log.hpp"

namespace hpct::gbdt {

namespace {

using OrderedJson = nlohmann::ordered_json;  // keeps the documented key order

// A float32 threshold as the double nearest its 9-digit decimal: the JSON shows those 9 digits, and
// the decimal reads back to the same float (the double is within 1e-9 relative of it, far from the
// midpoint between two floats).
double f9(float v) { return std::strtod(strf("%.9g", static_cast<double>(v)).c_str(), nullptr); }

template <class T>
OrderedJson array_of(const std::vector<T>& v) {
  OrderedJson a = OrderedJson::array();
  for (const T& x : v) a.push_back(x);
  return a;
}

// The layout: one line per top-level field and per node array, a tree as a block. nlohmann-json
// writes every key and value (shortest round-trip forms for doubles); only the line breaks are ours.
std::string layout(const OrderedJson& doc) {
  std::string o = "{";
  bool first = true;
  for (const auto& kv : doc.items()) {
    o += std::string(first ? "\n  " : ",\n  ") + OrderedJson(kv.key()).dump() + ": ";
    first = false;
    if (kv.key() != "trees") {
      o += kv.value().dump();
      continue;
    }
    o += "[";
    for (std::size_t t = 0; t < kv.value().size(); ++t) {
      o += t ? ",\n    {" : "\n    {";
      bool first_array = true;
      for (const auto& node_array : kv.value()[t].items()) {
        o += std::string(first_array ? "" : ",\n     ") + OrderedJson(node_array.key()).dump() + ": " +
             node_array.value().dump();
        first_array = false;
      }
      o += "}";
    }
    o += "\n  ]";
  }
  return o + "\n}\n";
}

const OrderedJson& field(const OrderedJson& o, const std::string& k, const std::string& src) {
  auto it = o.is_object() ? o.find(k) : o.end();
  if (it == o.end()) input_error(src, 0, k, "model file lacks the field '" + k + "'");
  return *it;
}

double number(const OrderedJson& o, const std::string& k, const std::string& src) {
  const OrderedJson& v = field(o, k, src);
  if (!v.is_number()) input_error(src, 0, k, "model file: '" + k + "' is not a number");
  return v.get<double>();
}

std::string text(const OrderedJson& o, const std::string& k, const std::string& src) {
  const OrderedJson& v = field(o, k, src);
  if (!v.is_string()) input_error(src, 0, k, "model file: '" + k + "' is not a string");
  return v.get<std::string>();
}

// null reads as NaN: nlohmann-json writes a non-finite double as null.
template <class T>
std::vector<T> nums(const OrderedJson& o, const std::string& k, const std::string& src) {
  const OrderedJson& a = field(o, k, src);
  if (!a.is_array()) input_error(src, 0, k, "model file: '" + k + "' is not an array");
  std::vector<T> out;
  out.reserve(a.size());
  for (const OrderedJson& x : a) {
    if constexpr (std::numeric_limits<T>::has_quiet_NaN) {
      if (x.is_null()) {
        out.push_back(std::numeric_limits<T>::quiet_NaN());
        continue;
      }
    }
    if (!x.is_number()) input_error(src, 0, k, "model file: '" + k + "' holds a value that is not a number");
    out.push_back(static_cast<T>(x.get<double>()));
  }
  return out;
}

}  // namespace

std::string to_json(const Model& m) {
  OrderedJson doc;
  doc["format"] = "hpctrain-gbdt";
  doc["version"] = 1;
  doc["objective"] = objective_name(m.objective);
  // Only the objectives that have a parameter write it: other models keep their bytes.
  if (m.objective == Objective::poisson) doc["poisson_max_delta_step"] = m.objective_params.poisson_max_delta_step;
  if (m.objective == Objective::tweedie) doc["tweedie_variance_power"] = m.objective_params.tweedie_variance_power;
  if (m.objective == Objective::lambdarank) {  // training's settings, for the exports; scoring reads none
    doc["lambdarank_sigma"] = m.objective_params.lambdarank_sigma;
    doc["lambdarank_truncation"] = m.objective_params.lambdarank_truncation;
    doc["lambdarank_norm"] = m.objective_params.lambdarank_norm;
  }
  if (m.objective == Objective::quantile) doc["quantile_alpha"] = m.objective_params.quantile_alpha;
  if (m.objective == Objective::pseudo_huber) doc["huber_slope"] = m.objective_params.huber_slope;
  // Set only by label_gain (any objective: the ndcg metrics of predict read it); default models keep their bytes.
  if (!m.objective_params.label_gain.empty()) doc["label_gain"] = m.objective_params.label_gain;
  doc["num_class"] = m.num_class;
  doc["num_features"] = m.num_features;
  if (!m.feature_names.empty()) doc["feature_names"] = m.feature_names;  // unnamed models keep their bytes
  if (m.categories.any()) {  // per feature: its categories by code, null for a numeric feature
    OrderedJson c = OrderedJson::array();
    for (int f = 0; f < m.num_features; ++f)
      c.push_back(m.categories.of(f) ? OrderedJson(m.categories.names[static_cast<std::size_t>(f)])
                                     : OrderedJson(nullptr));
    doc["categories"] = std::move(c);
  }
  if (!m.classes.empty()) doc["classes"] = m.classes;       // text labels: class k's name (Note [text labels])
  if (m.libsvm_absent_zero) doc["libsvm_absent"] = "zero";  // others keep their bytes: missing
  doc["num_outputs"] = m.num_outputs();
  doc["rounds"] = m.rounds();
  doc["split_rule"] =
      "go left when value <= threshold (float32 compare); NaN goes left when default_left; +-inf count as "
      "+-FLT_MAX" +
      std::string(m.categories.any() ? "; a node with categories (codes into the feature's categories) sends "
                                       "those left and every other category, missing or unseen, right"
                                     : "");
  doc["prediction"] =
      "margin[k] = base_margin[k] + sum of leaf values of trees with output k; binary: sigmoid, multiclass: "
      "softmax";
  doc["base_margin"] = array_of(m.base_margin);
  OrderedJson trees = OrderedJson::array();
  for (std::size_t t = 0; t < m.trees.size(); ++t) {
    const Tree& tr = m.trees[t];
    std::vector<double> thr;
    for (float v : tr.threshold) thr.push_back(f9(v));
    OrderedJson o;
    o["output"] = m.tree_output[t];
    o["feature"] = array_of(tr.feature);
    o["threshold"] = array_of(thr);
    o["default_left"] = array_of(std::vector<int>(tr.default_left.begin(), tr.default_left.end()));
    o["left"] = array_of(tr.left);
    o["right"] = array_of(tr.right);
    o["value"] = array_of(tr.value);
    o["gain"] = array_of(tr.gain);
    o["cover"] = array_of(tr.hess);
    o["count"] = array_of(tr.count);
    if (tr.has_categorical()) {
      OrderedJson c = OrderedJson::array();
      for (const auto& codes : tr.cats) c.push_back(codes);
      o["categories"] = std::move(c);
    }
    trees.push_back(std::move(o));
  }
  doc["trees"] = std::move(trees);
  return layout(doc);
}

Model from_json(const std::string& text_in, const std::string& src) {
  OrderedJson v;
  try {
    v = OrderedJson::parse(text_in);
  } catch (const OrderedJson::parse_error& e) {
    int line = 1;
    for (std::size_t k = 0; k + 1 < e.byte && k < text_in.size(); ++k) line += text_in[k] == '\n';
    std::string msg = e.what();  // "[json.exception.parse_error.101] parse error at line 2, ..."
    const std::size_t p = msg.find("] ");
    input_error(src, line, "", "model file: " + (p == std::string::npos ? msg : msg.substr(p + 2)));
  }
  if (!v.is_object() || !v.contains("format") || !v["format"].is_string() || v["format"] != "hpctrain-gbdt")
    input_error(src, 0, "format", "not an hpctrain-gbdt model file");
  Model m;
  m.objective = parse_objective(text(v, "objective", src));
  if (m.objective == Objective::poisson)
    m.objective_params.poisson_max_delta_step = number(v, "poisson_max_delta_step", src);
  if (m.objective == Objective::tweedie)
    m.objective_params.tweedie_variance_power = number(v, "tweedie_variance_power", src);
  if (m.objective == Objective::lambdarank) {
    m.objective_params.lambdarank_sigma = number(v, "lambdarank_sigma", src);
    m.objective_params.lambdarank_truncation = static_cast<int>(number(v, "lambdarank_truncation", src));
    if (!v.contains("lambdarank_norm") || !v.at("lambdarank_norm").is_boolean())
      input_error(src, 0, "lambdarank_norm", "model file: 'lambdarank_norm' is not true or false");
    m.objective_params.lambdarank_norm = v.at("lambdarank_norm").get<bool>();
  }
  if (m.objective == Objective::quantile) m.objective_params.quantile_alpha = number(v, "quantile_alpha", src);
  if (m.objective == Objective::pseudo_huber) m.objective_params.huber_slope = number(v, "huber_slope", src);
  if (v.contains("label_gain")) {
    const OrderedJson& gains = v["label_gain"];
    if (!gains.is_array() || gains.empty())
      input_error(src, 0, "label_gain", "model file: 'label_gain' is not a list of numbers");
    for (const OrderedJson& x : gains) {
      if (!x.is_number()) input_error(src, 0, "label_gain", "model file: 'label_gain' holds a non-number");
      m.objective_params.label_gain.push_back(x.get<double>());
    }
  }
  const auto bad = objective_param_error(m.objective, m.objective_params);
  if (!bad.first.empty()) input_error(src, 0, bad.first, "model file: " + bad.second);
  m.num_class = static_cast<int>(number(v, "num_class", src));
  m.num_features = static_cast<int>(number(v, "num_features", src));
  if (v.contains("feature_names")) {
    const OrderedJson& names = v["feature_names"];
    if (!names.is_array() || names.size() != static_cast<std::size_t>(m.num_features))
      input_error(src, 0, "feature_names", "model file: 'feature_names' must hold num_features strings");
    for (const OrderedJson& n : names) {
      if (!n.is_string()) input_error(src, 0, "feature_names", "model file: 'feature_names' must hold strings");
      m.feature_names.push_back(n.get<std::string>());
    }
  }
  if (v.contains("categories")) {
    const OrderedJson& c = v["categories"];
    if (!c.is_array() || c.size() != static_cast<std::size_t>(m.num_features))
      input_error(src, 0, "categories", "model file: 'categories' must hold num_features entries");
    m.categories.is.assign(c.size(), 0);
    m.categories.names.resize(c.size());
    for (std::size_t f = 0; f < c.size(); ++f) {
      if (c[f].is_null()) continue;
      if (!c[f].is_array())
        input_error(src, 0, "categories", "model file: 'categories' holds lists of strings or null");
      m.categories.is[f] = 1;
      for (const OrderedJson& n : c[f]) {
        if (!n.is_string()) input_error(src, 0, "categories", "model file: 'categories' holds lists of strings");
        m.categories.names[f].push_back(n.get<std::string>());
      }
    }
  }
  if (v.contains("libsvm_absent")) {  // absent: missing, as before the key
    const OrderedJson& a = v["libsvm_absent"];
    if (!a.is_string() || (a != "zero" && a != "missing"))
      input_error(src, 0, "libsvm_absent", "model file: 'libsvm_absent' must be \"zero\" or \"missing\"");
    m.libsvm_absent_zero = a == "zero";
  }
  if (v.contains("classes")) {  // older files and numeric labels have none
    const OrderedJson& c = v["classes"];
    const std::size_t most = m.objective == Objective::binary ? 2 : static_cast<std::size_t>(m.num_class);
    if (!c.is_array() || predicts_amount(m.objective) || c.size() > most)
      input_error(src, 0, "classes", "model file: 'classes' must hold at most num_class names of a classifier");
    for (const OrderedJson& n : c) {
      if (!n.is_string()) input_error(src, 0, "classes", "model file: 'classes' must hold strings");
      m.classes.push_back(n.get<std::string>());
    }
  }
  m.base_margin = nums<double>(v, "base_margin", src);
  if (static_cast<int>(m.base_margin.size()) != m.num_outputs())
    input_error(src, 0, "base_margin", "model file: base_margin has the wrong length");
  const OrderedJson& trees = field(v, "trees", src);
  if (!trees.is_array()) input_error(src, 0, "trees", "model file: 'trees' is not an array");
  for (const OrderedJson& t : trees) {
    Tree tr;
    tr.feature = nums<int>(t, "feature", src);
    tr.threshold = nums<float>(t, "threshold", src);
    const auto dl = nums<int>(t, "default_left", src);
    tr.default_left.assign(dl.begin(), dl.end());
    tr.left = nums<int>(t, "left", src);
    tr.right = nums<int>(t, "right", src);
    tr.value = nums<double>(t, "value", src);
    tr.gain = nums<double>(t, "gain", src);
    tr.hess = nums<double>(t, "cover", src);
    tr.count = nums<long long>(t, "count", src);
    const int nn = tr.num_nodes();
    tr.bin.assign(static_cast<std::size_t>(nn), -1);
    tr.depth.assign(static_cast<std::size_t>(nn), 0);
    tr.cats.assign(static_cast<std::size_t>(nn), {});
    if (t.contains("categories")) {
      const OrderedJson& c = t["categories"];
      if (!c.is_array() || c.size() != static_cast<std::size_t>(nn))
        input_error(src, 0, "categories", "model file: a tree's 'categories' must hold one list per node");
      for (std::size_t k = 0; k < c.size(); ++k) {
        if (!c[k].is_array()) input_error(src, 0, "categories", "model file: a tree's 'categories' holds lists");
        for (const OrderedJson& code : c[k]) {
          if (!code.is_number_integer() || code.get<long long>() < 0 || code.get<long long>() > 255)
            input_error(src, 0, "categories", "model file: a category code must be an integer in 0..255");
          tr.cats[k].push_back(code.get<int>());
        }
        const int f = k < tr.feature.size() ? tr.feature[k] : -1;
        if (!tr.cats[k].empty() && !m.categories.of(f))
          input_error(src, 0, "categories",
                      strf("model file: tree %zu node %zu splits on categories of a numeric feature",
                           m.trees.size(), k));
      }
    }
    for (const auto* a : {&tr.left, &tr.right})
      if (static_cast<int>(a->size()) != nn) input_error(src, 0, "trees", "model file: ragged tree arrays");
    if (tr.threshold.size() != tr.feature.size() || tr.value.size() != tr.feature.size() ||
        tr.default_left.size() != tr.feature.size())
      input_error(src, 0, "trees", "model file: ragged tree arrays");
    for (int k = 0; k < nn; ++k) {
      const auto u = static_cast<std::size_t>(k);
      const bool leaf = tr.left[u] < 0;
      if (!leaf && (tr.left[u] >= nn || tr.right[u] < 0 || tr.right[u] >= nn || tr.feature[u] < 0 ||
                    tr.feature[u] >= m.num_features || tr.left[u] <= k || tr.right[u] <= k))
        input_error(src, 0, "trees", strf("model file: tree %zu node %d is malformed", m.trees.size(), k));
    }
    const int out = static_cast<int>(number(t, "output", src));
    if (out < 0 || out >= m.num_outputs()) input_error(src, 0, "output", "model file: bad tree output");
    m.trees.push_back(std::move(tr));
    m.tree_output.push_back(out);
  }
  return m;
}

void write_file_atomic(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  // A failed output write exits 1 like the network trainer's (prepare_output_paths normally
  // catches an unwritable place before training).
  if (!f) throw Error(path + ": cannot write (" + std::string(std::strerror(errno)) + ")");
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fflush(f) == 0;
  if (std::fclose(f) != 0 || !ok) {
    std::remove(tmp.c_str());
    throw Error(path + ": write failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw Error(path + ": rename failed (" + std::string(std::strerror(errno)) + ")");
  }
}

Model read_model(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) input_error(path, 0, "", "cannot open model file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return from_json(ss.str(), path);
}

}  // namespace hpct::gbdt
