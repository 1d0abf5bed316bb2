// Parsing a deck and its --set overrides against a Schema, typed access, the resolved echo (see deck.hpp).
#include "deck/deck.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "core/error.hpp"
#include "core/log.hpp"
#include "core/real_text.hpp"

namespace hpct::deck {

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return {};
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

bool parse_integer(const std::string& s, long long& out) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  out = std::strtoll(s.c_str(), &end, 10);
  return errno == 0 && end && *end == '\0';
}

bool parse_real(const std::string& s, double& out) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return errno == 0 && end && *end == '\0' && std::isfinite(out);
}

bool parse_boolean(const std::string& s, bool& out) {
  if (s == "true" || s == "yes" || s == "on" || s == "1") return out = true, true;
  if (s == "false" || s == "no" || s == "off" || s == "0") return out = false, true;
  return false;
}

// Note [boolean choices]: a choice key with true and false among its values (a bool key that grew a
// third value, as check_images_at_open grew decode) takes every spelling a bool key takes (yes, on,
// 1, ...) and holds it as true or false, so a deck written while the key was a bool reads as it did.
bool has_boolean_choices(const KeySpec& k) {
  return k.type == KeyType::Choice && std::count(k.choices.begin(), k.choices.end(), "true") &&
         std::count(k.choices.begin(), k.choices.end(), "false");
}
std::string boolean_choice(const KeySpec& k, const std::string& value) {
  bool b = false;
  if (!has_boolean_choices(k) || !parse_boolean(value, b)) return value;
  return b ? "true" : "false";
}

// Keys and values as error messages quote them: short, printable (see clip_for_log).
std::string shown(const std::string& s) { return clip_for_log(s); }

// Note bad_bytes: a NUL ends the value for strtoll/strtod (`epochs 2<NUL>9999` read as 2) and ends
// the message for printf, and bytes that are not UTF-8 are a wrong encoding or a binary file given
// as the deck; neither is ever meant. `text` is one deck line or one --set argument; throws at the
// first such byte, naming it escaped and quoting the text.
void reject_bad_bytes(const std::string& text, const std::string& file, int line) {
  std::size_t pos = 0;
  while (pos < text.size() && text[pos] != '\0' && utf8_length_at(text, pos) > 0) pos += utf8_length_at(text, pos);
  if (pos == text.size()) return;
  const std::string quoted = trim(text);
  const std::string key = quoted.substr(0, quoted.find_first_of(" \t="));
  const std::string byte = strf("\\x%02x", static_cast<unsigned char>(text[pos]));
  const std::string what = text[pos] == '\0' ? " (NUL) is not allowed in a deck" : " is not valid UTF-8";
  input_error(file, line, shown(key), "byte " + byte + what + ": '" + shown(quoted) + "'");
}

// Checks one value against its spec; returns an error message or "".
std::string check_value(const KeySpec& k, const std::string& value) {
  const std::string v = shown(value);
  switch (k.type) {
    case KeyType::Int: {
      long long x;
      if (!parse_integer(value, x)) return "expected an integer, got '" + v + "'";
      if (x < k.min || x > k.max) return "value " + v + " is out of range " + range_text(k);
      return {};
    }
    case KeyType::Real: {
      double x;
      if (!parse_real(value, x)) return "expected a real number, got '" + v + "'";
      if (x < k.min || x > k.max) return "value " + v + " is out of range " + range_text(k);
      return {};
    }
    case KeyType::Bool: {
      bool b;
      if (!parse_boolean(value, b)) return "expected true or false, got '" + v + "'";
      return {};
    }
    case KeyType::String:
      // Optional strings (default "") may be emptied with --set key= to switch a feature off.
      if (value.empty() && (k.required || !k.default_value.empty())) return "expected a value";
      return {};
    case KeyType::Choice: {
      for (const auto& c : k.choices)
        if (c == boolean_choice(k, value)) return {};
      std::string all;
      for (const auto& c : k.choices) all += (all.empty() ? "" : ", ") + c;
      return "'" + v + "' is not one of: " + all;
    }
    case KeyType::IntList: {
      const auto items = split_list(value);
      if (items.empty()) return "expected a list of integers";
      for (const auto& item : items) {
        long long x;
        if (!parse_integer(item, x)) return "expected a list of integers, got '" + shown(item) + "'";
        if (x < k.min || x > k.max) return "value " + shown(item) + " is out of range " + range_text(k);
      }
      return {};
    }
  }
  return {};
}

// Splits on spaces and tabs only (a setting's list value keeps its commas).
std::vector<std::string> split_list_on_spaces(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string token; in >> token;) out.push_back(token);
  return out;
}

}  // namespace

std::vector<std::string> split_list(const std::string& value) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : value) {
    if (c == ',' || c == ' ' || c == '\t') {
      if (!cur.empty()) out.push_back(cur), cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

Deck Deck::parse(const std::string& text, const std::string& filename, const Schema& schema,
                 const std::vector<std::string>& overrides) {
  Deck d;
  d.schema_ = schema;
  d.filename_ = filename;

  auto set = [&](const std::string& key, const std::string& value, const std::string& file, int line,
                 bool allow_replace) {
    const KeySpec* spec = schema.find(key);
    if (!spec) {
      const std::string guess = schema.suggest(key);
      input_error(file, line, shown(key),
                  "unknown key" + (guess.empty() ? std::string() : " (did you mean " + guess + "?)"));
    }
    auto it = d.entries_.find(key);
    if (it != d.entries_.end() && !allow_replace)
      input_error(file, line, key,
                  "duplicate key (first set at " + where(it->second.file, it->second.line, "") + ")");
    const std::string err = check_value(*spec, value);
    if (!err.empty()) input_error(file, line, key, err);
    d.entries_[key] = Entry{boolean_choice(*spec, value), file, line};
  };

  std::istringstream in(text);
  std::string raw;
  int line_no = 0;
  while (std::getline(in, raw)) {
    ++line_no;
    reject_bad_bytes(raw, filename, line_no);
    const auto hash = raw.find('#');
    const std::string line = trim(hash == std::string::npos ? raw : raw.substr(0, hash));
    if (line.empty()) continue;
    const auto sep = line.find_first_of(" \t=");
    const std::string key = line.substr(0, sep);
    std::string value = sep == std::string::npos ? std::string() : trim(line.substr(sep + 1));
    if (!value.empty() && value[0] == '=') value = trim(value.substr(1));  // `key = value` too
    if (value.empty()) input_error(filename, line_no, shown(key), "missing value");
    set(key, value, filename, line_no, false);
  }

  int arg_no = 0;
  for (const auto& o : overrides) {
    ++arg_no;
    reject_bad_bytes(o, "--set", arg_no);
    const auto eq = o.find('=');
    if (eq == std::string::npos || eq == 0) input_error("--set", arg_no, shown(o), "expected key=value");
    set(trim(o.substr(0, eq)), trim(o.substr(eq + 1)), "--set", arg_no, true);
  }

  for (const auto& k : schema.keys()) {
    if (d.entries_.count(k.name)) continue;
    if (k.required) input_error(filename, 0, k.name, "required key is missing");
    d.entries_[k.name] = Entry{k.default_value, "default", 0};
  }
  return d;
}

Deck Deck::parse_settings(const std::string& line, const std::string& origin, const Schema& schema) {
  // One setting per deck line, so the deck's checks and messages apply as they are.
  std::string text;
  for (const std::string& setting : split_list_on_spaces(line)) text += setting + "\n";
  return parse(text, origin, schema);
}

const Entry& Deck::entry(const std::string& key) const {
  auto it = entries_.find(key);
  if (it == entries_.end()) throw Error("internal: deck key '" + key + "' is not declared");
  return it->second;
}

bool Deck::is_set(const std::string& key) const { return entry(key).file != "default"; }

void Deck::fail(const std::string& key, const std::string& message) const {
  const Entry& e = entry(key);
  if (e.file == "default") input_error(filename_, 0, key, message + " (default value " + shown(e.value) + ")");
  input_error(e.file, e.line, key, message);
}

long long Deck::get_int(const std::string& key) const {
  long long x = 0;
  parse_integer(entry(key).value, x);
  return x;
}

double Deck::get_real(const std::string& key) const {
  double x = 0;
  parse_real(entry(key).value, x);
  return x;
}

bool Deck::get_bool(const std::string& key) const {
  bool b = false;
  parse_boolean(entry(key).value, b);
  return b;
}

const std::string& Deck::get_string(const std::string& key) const { return entry(key).value; }

std::vector<long long> Deck::get_int_list(const std::string& key) const {
  std::vector<long long> out;
  for (const auto& item : split_list(entry(key).value)) {
    long long x = 0;
    parse_integer(item, x);
    out.push_back(x);
  }
  return out;
}

std::string Deck::settings() const {
  std::string out;
  for (const auto& k : schema_.keys()) {
    std::string value = entry(k.name).value;
    if (k.type == KeyType::IntList) {
      std::string joined;
      for (const auto& item : split_list(value)) joined += (joined.empty() ? "" : ",") + item;
      value = joined;
    }
    if (k.type == KeyType::Real) value = real_text(get_real(k.name));  // configurations written as %f or %.17g
    out += (out.empty() ? "" : " ") + k.name + "=" + value;
  }
  return out;
}

std::string Deck::resolved() const {
  std::ostringstream out;
  for (const auto& k : schema_.keys()) {
    const Entry& e = entry(k.name);
    out << k.name << " " << e.value;
    out << "   # " << (e.file == "default" ? "default" : where(e.file, e.line, "")) << "\n";
  }
  return out.str();
}

}  // namespace hpct::deck
