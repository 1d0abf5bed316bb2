// JSON writer and a small JSON reader for exactly the values the model file holds.
#include "gbdt/model_io.hpp"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "core/error.hpp"
#include "core/log.hpp"

namespace hpct::gbdt {

namespace {

template <class T, class F>
void write_array(std::ostringstream& o, const char* key, const std::vector<T>& v, F fmt) {
  o << "\"" << key << "\": [";
  for (std::size_t i = 0; i < v.size(); ++i) o << (i ? ", " : "") << fmt(v[i]);
  o << "]";
}

// Shortest forms that read back to the same float / double.
std::string f9(float v) { return strf("%.9g", static_cast<double>(v)); }
std::string d17(double v) { return strf("%.17g", v); }
std::string i(long long v) { return std::to_string(v); }

// --- reader: values are null, bool, number, string, array or object ---
struct Value {
  enum Kind { null, boolean, number, string, array, object } kind = null;
  double num = 0;
  std::string str;
  std::vector<Value> items;
  std::map<std::string, Value> fields;
};

class Parser {
 public:
  Parser(const std::string& t, const std::string& src) : t_(t), src_(src) {}
  Value parse() {
    Value v = value();
    ws();
    if (p_ != t_.size()) fail("trailing characters");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& msg) {
    int line = 1;
    for (std::size_t k = 0; k < p_ && k < t_.size(); ++k) line += t_[k] == '\n';
    input_error(src_, line, "", "model file: " + msg);
  }
  void ws() {
    while (p_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[p_]))) ++p_;
  }
  bool eat(char c) {
    ws();
    if (p_ < t_.size() && t_[p_] == c) {
      ++p_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(std::string("expected '") + c + "'");
  }
  std::string str() {
    expect('"');
    std::string s;
    while (p_ < t_.size() && t_[p_] != '"') {
      if (t_[p_] == '\\' && p_ + 1 < t_.size()) ++p_;
      s += t_[p_++];
    }
    if (p_ >= t_.size()) fail("unterminated string");
    ++p_;
    return s;
  }
  Value value() {
    ws();
    if (p_ >= t_.size()) fail("unexpected end");
    Value v;
    const char c = t_[p_];
    if (c == '{') {
      ++p_;
      v.kind = Value::object;
      if (eat('}')) return v;
      do {
        ws();
        const std::string k = str();
        expect(':');
        v.fields[k] = value();
      } while (eat(','));
      expect('}');
    } else if (c == '[') {
      ++p_;
      v.kind = Value::array;
      if (eat(']')) return v;
      do v.items.push_back(value());
      while (eat(','));
      expect(']');
    } else if (c == '"') {
      v.kind = Value::string;
      v.str = str();
    } else if (t_.compare(p_, 4, "true") == 0 || t_.compare(p_, 5, "false") == 0) {
      v.kind = Value::boolean;
      v.num = t_[p_] == 't' ? 1 : 0;
      p_ += t_[p_] == 't' ? 4 : 5;
    } else if (t_.compare(p_, 4, "null") == 0) {
      p_ += 4;
    } else {
      char* end = nullptr;
      v.kind = Value::number;
      v.num = std::strtod(t_.c_str() + p_, &end);
      if (end == t_.c_str() + p_) fail("expected a value");
      p_ = static_cast<std::size_t>(end - t_.c_str());
    }
    return v;
  }
  const std::string& t_;
  std::string src_;
  std::size_t p_ = 0;
};

const Value& field(const Value& o, const std::string& k, const std::string& src) {
  auto it = o.fields.find(k);
  if (o.kind != Value::object || it == o.fields.end())
    input_error(src, 0, k, "model file lacks the field '" + k + "'");
  return it->second;
}

template <class T>
std::vector<T> nums(const Value& o, const std::string& k, const std::string& src) {
  const Value& a = field(o, k, src);
  if (a.kind != Value::array) input_error(src, 0, k, "model file: '" + k + "' is not an array");
  std::vector<T> out;
  for (const Value& x : a.items) out.push_back(static_cast<T>(x.num));
  return out;
}

}  // namespace

std::string to_json(const Model& m) {
  std::ostringstream o;
  o << "{\n  \"format\": \"hpctrain-gbdt\",\n  \"version\": 1,\n";
  o << "  \"objective\": \"" << objective_name(m.objective) << "\",\n";
  o << "  \"num_class\": " << m.num_class << ",\n";
  o << "  \"num_features\": " << m.num_features << ",\n";
  o << "  \"num_outputs\": " << m.num_outputs() << ",\n";
  o << "  \"rounds\": " << m.rounds() << ",\n";
  o << "  \"split_rule\": \"go left when value <= threshold (float32 compare); NaN goes left when "
       "default_left; +-inf count as +-FLT_MAX\",\n";
  o << "  \"prediction\": \"margin[k] = base_margin[k] + sum of leaf values of trees with output k; "
       "binary: sigmoid, multiclass: softmax\",\n  ";
  write_array(o, "base_margin", m.base_margin, d17);
  o << ",\n  \"trees\": [";
  for (std::size_t t = 0; t < m.trees.size(); ++t) {
    const Tree& tr = m.trees[t];
    std::vector<int> dl(tr.default_left.begin(), tr.default_left.end());
    o << (t ? "," : "") << "\n    {\"output\": " << m.tree_output[t];
    // Each node array on its own line, in the documented order.
    auto node_array = [&](const char* key, const auto& values, auto fmt) {
      o << ",\n     ";
      write_array(o, key, values, fmt);
    };
    node_array("feature", tr.feature, i);
    node_array("threshold", tr.threshold, f9);
    node_array("default_left", dl, i);
    node_array("left", tr.left, i);
    node_array("right", tr.right, i);
    node_array("value", tr.value, d17);
    node_array("gain", tr.gain, d17);
    node_array("cover", tr.hess, d17);
    node_array("count", tr.count, i);
    o << "}";
  }
  o << "\n  ]\n}\n";
  return o.str();
}

Model from_json(const std::string& text, const std::string& src) {
  const Value v = Parser(text, src).parse();
  if (field(v, "format", src).str != "hpctrain-gbdt")
    input_error(src, 0, "format", "not an hpctrain-gbdt model file");
  Model m;
  m.objective = parse_objective(field(v, "objective", src).str);
  m.num_class = static_cast<int>(field(v, "num_class", src).num);
  m.num_features = static_cast<int>(field(v, "num_features", src).num);
  m.base_margin = nums<double>(v, "base_margin", src);
  if (static_cast<int>(m.base_margin.size()) != m.num_outputs())
    input_error(src, 0, "base_margin", "model file: base_margin has the wrong length");
  for (const Value& t : field(v, "trees", src).items) {
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
    const int out = static_cast<int>(field(t, "output", src).num);
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
