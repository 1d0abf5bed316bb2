// The ensemble file through nlohmann-json (see ensemble_file.hpp).
#include "ensemble/ensemble_file.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.hpp"
#include "core/log.hpp"

namespace hpct::ensemble {

namespace {

using json = nlohmann::ordered_json;  // keeps the documented key order
constexpr const char* kFormat = "hpctrain-ensemble";
constexpr int kVersion = 1;

[[noreturn]] void bad(const std::string& source, const std::string& key, const std::string& what) {
  throw Error(source + ": key '" + key + "': " + what, ExitCode::bad_input);
}

// The value at `key` of object `o`, of the JSON type `want` names; errors name the key.
const json& field(const json& o, const std::string& key, const std::string& path, const std::string& source,
                  json::value_t want) {
  if (!o.is_object() || !o.contains(key)) bad(source, path, "missing");
  const json& v = o.at(key);
  const bool number = want == json::value_t::number_float;
  if (number ? !v.is_number() : v.type() != want)
    bad(source, path, "has the wrong type (" + std::string(v.type_name()) + ")");
  return v;
}

std::vector<double> numbers(const json& o, const std::string& key, const std::string& path,
                            const std::string& source, std::size_t count) {
  const json& a = field(o, key, path, source, json::value_t::array);
  if (a.size() != count) bad(source, path, strf("has %zu values; the ensemble has %zu members", a.size(), count));
  std::vector<double> v;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!a[i].is_number()) bad(source, strf("%s[%zu]", path.c_str(), i), "is not a number");
    v.push_back(a[i].get<double>());
  }
  return v;
}

}  // namespace

std::string to_json(const EnsembleSpec& e) {
  json doc;
  doc["format"] = kFormat;
  doc["version"] = kVersion;
  doc["task"] = task_name(e.task);
  doc["num_features"] = e.num_features;
  if (e.task == Task::multiclass) doc["num_class"] = e.num_class;
  if (!e.classes.empty()) doc["classes"] = e.classes;       // class k's name (Note [ensemble classes])
  if (e.libsvm_absent_zero) doc["libsvm_absent"] = "zero";  // others keep their bytes: missing
  doc["combine"] = e.combiner.method;
  json members = json::array();
  for (const MemberRecord& m : e.members)
    members.push_back(json{{"path", m.path}, {"kind", m.kind}, {"fnv1a64", m.checksum}});
  doc["members"] = members;
  if (e.combiner.method == "average") {
    doc["weights"] = e.combiner.weights;
  } else if (e.task == Task::multiclass) {
    // coef: one row per class of members x classes values (Combiner's multiclass layout).
    json meta, coef = json::array();
    const std::size_t width = e.members.size() * static_cast<std::size_t>(e.num_class);
    for (std::size_t k = 0; k < e.combiner.intercepts.size(); ++k)
      coef.push_back(std::vector<double>(e.combiner.coef.begin() + static_cast<std::ptrdiff_t>(k * width),
                                         e.combiner.coef.begin() + static_cast<std::ptrdiff_t>((k + 1) * width)));
    meta["model"] = "multinomial";
    meta["features"] = "log_probability";
    meta["l2"] = e.combiner.l2;
    meta["folds"] = e.folds;
    meta["intercept"] = e.combiner.intercepts;
    meta["coef"] = coef;
    doc["meta"] = meta;
  } else {
    json meta;
    meta["model"] = e.task == Task::binary ? "logistic" : "ridge";
    meta["features"] = e.task == Task::binary ? "logit" : "score";  // what each coefficient multiplies
    meta["l2"] = e.combiner.l2;
    meta["folds"] = e.folds;
    meta["intercept"] = e.combiner.intercept;
    meta["coef"] = e.combiner.coef;
    doc["meta"] = meta;
  }
  return doc.dump(2) + "\n";
}

EnsembleSpec from_json(const std::string& text, const std::string& source) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    throw Error(source + ": not JSON (" + e.what() + ")", ExitCode::bad_input);
  }
  using vt = json::value_t;
  if (field(doc, "format", "format", source, vt::string).get<std::string>() != kFormat)
    bad(source, "format", std::string("is not \"") + kFormat + "\"");
  const json& ver = field(doc, "version", "version", source, vt::number_float);
  if (ver.get<double>() != kVersion)
    bad(source, "version", strf("is %s; this build reads %d", ver.dump().c_str(), kVersion));
  EnsembleSpec e;
  e.task = task_from_name(field(doc, "task", "task", source, vt::string).get<std::string>(),
                          source + ": key 'task'");
  e.num_features = static_cast<int>(
      field(doc, "num_features", "num_features", source, vt::number_float).get<double>());
  if (e.task == Task::multiclass) {
    const double k = field(doc, "num_class", "num_class", source, vt::number_float).get<double>();
    if (!(k >= 2 && k <= 1e6) || k != std::floor(k)) bad(source, "num_class", "must be an integer >= 2");
    e.num_class = static_cast<int>(k);
  }
  e.combiner.num_class = e.num_class;
  if (doc.contains("classes")) {  // text labels: one name per class (binary: class 0, class 1)
    const json& c = field(doc, "classes", "classes", source, vt::array);
    const std::size_t want = e.task == Task::binary ? 2 : static_cast<std::size_t>(e.num_class);
    if (e.task == Task::regression) bad(source, "classes", "a regression ensemble has no classes");
    if (c.size() != want)
      bad(source, "classes", strf("has %zu names; the ensemble has %zu classes", c.size(), want));
    for (std::size_t i = 0; i < c.size(); ++i) {
      if (!c[i].is_string()) bad(source, strf("classes[%zu]", i), "is not a string");
      e.classes.push_back(c[i].get<std::string>());
    }
  }
  if (doc.contains("libsvm_absent")) {  // absent: missing
    const std::string a = field(doc, "libsvm_absent", "libsvm_absent", source, vt::string).get<std::string>();
    if (a != "zero" && a != "missing") bad(source, "libsvm_absent", "must be \"zero\" or \"missing\"");
    e.libsvm_absent_zero = a == "zero";
  }
  const json& members = field(doc, "members", "members", source, vt::array);
  if (members.empty()) bad(source, "members", "is empty");
  for (std::size_t i = 0; i < members.size(); ++i) {
    const std::string at = strf("members[%zu]", i);
    MemberRecord m;
    m.path = field(members[i], "path", at + ".path", source, vt::string).get<std::string>();
    m.kind = field(members[i], "kind", at + ".kind", source, vt::string).get<std::string>();
    m.checksum = field(members[i], "fnv1a64", at + ".fnv1a64", source, vt::string).get<std::string>();
    e.members.push_back(m);
  }
  const std::string method = field(doc, "combine", "combine", source, vt::string).get<std::string>();
  e.combiner.method = method;
  if (method == "average") {
    e.combiner.weights = numbers(doc, "weights", "weights", source, members.size());
  } else if (method == "stacking" && e.task == Task::multiclass) {
    const json& meta = field(doc, "meta", "meta", source, vt::object);
    if (field(meta, "model", "meta.model", source, vt::string).get<std::string>() != "multinomial")
      bad(source, "meta.model", "a multiclass ensemble's meta-model is multinomial");
    const auto K = static_cast<std::size_t>(e.num_class);
    e.combiner.intercepts = numbers(meta, "intercept", "meta.intercept", source, K);
    const json& coef = field(meta, "coef", "meta.coef", source, vt::array);
    if (coef.size() != K)
      bad(source, "meta.coef", strf("has %zu rows; the ensemble has %zu classes", coef.size(), K));
    for (std::size_t k = 0; k < K; ++k) {
      const std::string at = strf("meta.coef[%zu]", k);
      if (!coef[k].is_array() || coef[k].size() != members.size() * K)
        bad(source, at, strf("must hold members x classes = %zu numbers", members.size() * K));
      for (std::size_t i = 0; i < coef[k].size(); ++i) {
        if (!coef[k][i].is_number()) bad(source, strf("%s[%zu]", at.c_str(), i), "is not a number");
        e.combiner.coef.push_back(coef[k][i].get<double>());
      }
    }
    e.combiner.l2 = field(meta, "l2", "meta.l2", source, vt::number_float).get<double>();
    e.folds = static_cast<int>(field(meta, "folds", "meta.folds", source, vt::number_float).get<double>());
  } else if (method == "stacking") {
    const json& meta = field(doc, "meta", "meta", source, vt::object);
    const std::string want = e.task == Task::binary ? "logistic" : "ridge";
    if (field(meta, "model", "meta.model", source, vt::string).get<std::string>() != want)
      bad(source, "meta.model", "a " + std::string(task_name(e.task)) + " ensemble's meta-model is " + want);
    e.combiner.intercept = field(meta, "intercept", "meta.intercept", source, vt::number_float).get<double>();
    e.combiner.coef = numbers(meta, "coef", "meta.coef", source, members.size());
    e.combiner.l2 = field(meta, "l2", "meta.l2", source, vt::number_float).get<double>();
    e.folds = static_cast<int>(field(meta, "folds", "meta.folds", source, vt::number_float).get<double>());
  } else {
    bad(source, "combine", "is '" + method + "'; expected average or stacking");
  }
  return e;
}

bool is_ensemble_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char head[256] = {};
  f.read(head, sizeof head);
  return std::string(head, static_cast<std::size_t>(f.gcount())).find(std::string("\"") + kFormat + "\"") !=
         std::string::npos;
}

std::string relative_member_path(const std::string& member, const std::string& ensemble_path) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::absolute(fs::path(ensemble_path)).parent_path();
  return fs::absolute(fs::path(member)).lexically_normal().lexically_relative(dir.lexically_normal()).string();
}

Ensemble read_ensemble(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open ensemble file", ExitCode::bad_input);
  std::ostringstream ss;
  ss << in.rdbuf();
  Ensemble e;
  e.spec = from_json(ss.str(), path);
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  for (std::size_t i = 0; i < e.spec.members.size(); ++i) {
    const MemberRecord& r = e.spec.members[i];
    const std::filesystem::path p(r.path);
    const std::string file = p.is_absolute() ? r.path : (dir / p).lexically_normal().string();
    const std::string sum = file_checksum(file);
    if (sum != r.checksum)
      throw Error(strf("%s: key 'members[%zu].fnv1a64': %s has checksum %s, not the recorded %s (the member "
                       "changed "
                       "after the ensemble was fitted; fit it again)",
                       path.c_str(), i, file.c_str(), sum.c_str(), r.checksum.c_str()),
                  ExitCode::bad_input);
    e.members.push_back(load_member(file, e.spec.task));
    if (e.members.back().num_class != e.spec.num_class)
      throw Error(strf("%s: members[%zu] (%s) predicts %d classes; the ensemble %d", path.c_str(), i, file.c_str(),
                       e.members.back().num_class, e.spec.num_class),
                  ExitCode::bad_input);
    if (e.members.back().num_features != e.spec.num_features)
      throw Error(strf("%s: members[%zu] (%s) reads %d features; the ensemble %d", path.c_str(), i, file.c_str(),
                       e.members.back().num_features, e.spec.num_features),
                  ExitCode::bad_input);
  }
  return e;
}

std::vector<double> ensemble_scores(const Ensemble& e, const std::vector<float>& x, long long n, long long cols,
                                    long long first_row) {
  ScoreTable s;
  for (const Member& m : e.members) s.push_back(member_scores(m, e.spec.task, x, n, cols, first_row));
  return combine(e.spec.combiner, e.spec.task, s);
}

}  // namespace hpct::ensemble
