// Declaring deck keys (type, default, range, doc) and printing them for --help-deck (see schema.hpp).
#include "deck/schema.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/error.hpp"

namespace hpct::deck {

const char* type_name(KeyType t) {
  switch (t) {
    case KeyType::Int: return "int";
    case KeyType::Real: return "real";
    case KeyType::Bool: return "bool";
    case KeyType::String: return "string";
    case KeyType::Choice: return "choice";
    case KeyType::IntList: return "int list";
  }
  return "?";
}

static std::string fmt_number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

std::string range_text(const KeySpec& k) {
  const bool whole = k.type == KeyType::Int || k.type == KeyType::IntList;
  auto bound = [&](double v) {
    if (std::isinf(v)) return std::string(v < 0 ? "-inf" : "inf");
    return whole ? std::to_string(static_cast<long long>(v)) : fmt_number(v);
  };
  return "[" + bound(k.min) + ", " + bound(k.max) + "]";
}

void Schema::add(KeySpec spec) {
  if (index_.count(spec.name)) throw Error("schema declares key '" + spec.name + "' twice");
  spec.section = section_;
  index_[spec.name] = keys_.size();
  keys_.push_back(std::move(spec));
}

void Schema::add_int(const std::string& name, long long def, long long min, long long max, const std::string& doc) {
  KeySpec k;
  k.name = name, k.type = KeyType::Int, k.default_value = std::to_string(def);
  k.min = static_cast<double>(min), k.max = static_cast<double>(max), k.doc = doc;
  add(std::move(k));
}

void Schema::add_real(const std::string& name, double def, double min, double max, const std::string& doc) {
  KeySpec k;
  k.name = name, k.type = KeyType::Real, k.default_value = fmt_number(def);
  k.min = min, k.max = max, k.doc = doc;
  add(std::move(k));
}

void Schema::add_bool(const std::string& name, bool def, const std::string& doc) {
  KeySpec k;
  k.name = name, k.type = KeyType::Bool, k.default_value = def ? "true" : "false", k.doc = doc;
  add(std::move(k));
}

void Schema::add_string(const std::string& name, const std::string& def, const std::string& doc) {
  KeySpec k;
  k.name = name, k.type = KeyType::String, k.default_value = def, k.doc = doc;
  add(std::move(k));
}

void Schema::add_required_string(const std::string& name, const std::string& doc) {
  KeySpec k;
  k.name = name, k.type = KeyType::String, k.required = true, k.doc = doc;
  add(std::move(k));
}

void Schema::add_choice(const std::string& name, const std::string& def, const std::vector<std::string>& choices,
                        const std::string& doc) {
  KeySpec k;
  k.name = name, k.type = KeyType::Choice, k.default_value = def, k.choices = choices, k.doc = doc;
  add(std::move(k));
}

void Schema::add_int_list(const std::string& name, const std::string& def, long long min, long long max,
                          const std::string& doc) {
  KeySpec k;
  k.name = name, k.type = KeyType::IntList, k.default_value = def;
  k.min = static_cast<double>(min), k.max = static_cast<double>(max), k.doc = doc;
  add(std::move(k));
}

const KeySpec* Schema::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &keys_[it->second];
}

static std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string Schema::suggest(const std::string& name) const {
  std::string best;
  std::size_t best_d = name.size() / 2 + 2;  // farther than this is not a typo
  for (const auto& k : keys_) {
    // A key that contains the word typed (batch -> batch_size) is a good guess too.
    const bool contains = name.size() >= 3 && k.name.find(name) != std::string::npos;
    // The distance is at least the difference in length: skip the quadratic edit distance when
    // that alone is too far (a 200,000-character key then costs nothing).
    const std::size_t length_gap = name.size() > k.name.size() ? name.size() - k.name.size()
                                                               : k.name.size() - name.size();
    if (!contains && length_gap >= best_d) continue;
    std::size_t d = edit_distance(name, k.name);
    if (contains) d = std::min<std::size_t>(d, 2);
    if (d < best_d) best_d = d, best = k.name;
  }
  return best;
}

std::string Schema::help() const {
  std::ostringstream out;
  out << "Input deck: one `key value` per line; `#` starts a comment. Override any key with\n"
         "--set key=value. Keys by section (type, default, allowed values):\n";
  std::string section;
  for (const auto& k : keys_) {
    if (k.section != section) {
      section = k.section;
      out << "\n[" << section << "]\n";
    }
    out << "  " << k.name << " (" << type_name(k.type);
    if (k.required) out << ", required";
    else out << ", default " << (k.default_value.empty() ? "\"\"" : k.default_value);
    if (k.type == KeyType::Choice) {
      out << ", one of";
      for (const auto& c : k.choices) out << " " << c;
    } else if (k.type == KeyType::Int || k.type == KeyType::Real || k.type == KeyType::IntList) {
      const bool lo = k.min > -std::numeric_limits<double>::infinity();
      const bool hi = k.max < std::numeric_limits<double>::infinity();
      if (lo || hi) out << ", range " << range_text(k);
    }
    out << ")\n      " << k.doc << "\n";
  }
  return out.str();
}

}  // namespace hpct::deck
