// The declared keys of the input deck: type, default, allowed range or choices, and a one-line doc
// for each. Modules declare their own keys; `train --help-deck` prints the whole schema.
#pragma once

#include <limits>
#include <map>
#include <string>
#include <vector>

namespace hpct::deck {

enum class KeyType { Int, Real, Bool, String, Choice, IntList };

struct KeySpec {
  std::string name;
  KeyType type = KeyType::String;
  std::string default_value;  // empty + required == must be given
  bool required = false;
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  std::vector<std::string> choices;
  std::string doc;
  std::string section;
};

class Schema {
 public:
  // `section` groups keys in --help-deck; it is set for the keys declared after it.
  void section(const std::string& name) { section_ = name; }
  void add_int(const std::string& name, long long def, long long min, long long max, const std::string& doc);
  void add_real(const std::string& name, double def, double min, double max, const std::string& doc);
  void add_bool(const std::string& name, bool def, const std::string& doc);
  void add_string(const std::string& name, const std::string& def, const std::string& doc);
  void add_required_string(const std::string& name, const std::string& doc);
  void add_choice(const std::string& name, const std::string& def, const std::vector<std::string>& choices,
                  const std::string& doc);
  // Comma- or space-separated list of integers, each within [min, max].
  void add_int_list(const std::string& name, const std::string& def, long long min, long long max,
                    const std::string& doc);

  const KeySpec* find(const std::string& name) const;
  const std::vector<KeySpec>& keys() const { return keys_; }
  // Closest declared key by edit distance, or empty when nothing is close.
  std::string suggest(const std::string& name) const;
  std::string help() const;

 private:
  void add(KeySpec spec);
  std::vector<KeySpec> keys_;
  std::map<std::string, std::size_t> index_;
  std::string section_ = "general";
};

const char* type_name(KeyType t);
// "[min, max]" of a numeric key as --help-deck and the out-of-range error show it: an int key's
// bounds as whole numbers (16777216, not 1.67772e+07), "-inf"/"inf" where a side is open.
std::string range_text(const KeySpec& k);

}  // namespace hpct::deck
