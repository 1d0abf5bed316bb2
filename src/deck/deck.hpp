// A parsed, validated input deck: `key value` lines plus --set overrides, checked against a Schema.
// Every error names file:line:key. Values are typed on access; the resolved deck (every key with
// its value and where it came from) is echoed in the log and stored with models and checkpoints.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "deck/schema.hpp"

namespace hpct::deck {

struct Entry {
  std::string value;
  std::string file;  // deck file name, "--set" for overrides, "default" for defaults
  int line = 0;      // line in the file, or the position of the --set argument
};

class Deck {
 public:
  // Parses `text` (the content of `filename`) and then `overrides` ("key=value" strings), checking
  // every value against the schema. Throws hpct::Error (bad_input) naming file:line:key.
  static Deck parse(const std::string& text, const std::string& filename, const Schema& schema,
                    const std::vector<std::string>& overrides = {});
  // Parses one line of space-separated `key=value` settings (the form of a model's configuration
  // stored with its weights), each checked as a deck line; errors name `origin` and the setting's
  // position in the line.
  static Deck parse_settings(const std::string& line, const std::string& origin, const Schema& schema);

  long long get_int(const std::string& key) const;
  double get_real(const std::string& key) const;
  bool get_bool(const std::string& key) const;
  const std::string& get_string(const std::string& key) const;
  std::vector<long long> get_int_list(const std::string& key) const;
  // True when the deck or the command line set the key (not just its default).
  bool is_set(const std::string& key) const;
  const Entry& entry(const std::string& key) const;

  // Throws a bad_input error at the key's place (for checks that involve several keys or the
  // outside world, e.g. "nodes 2 but the job has 1 node").
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;

  // "key value   # origin" for every key, in schema order.
  std::string resolved() const;
  // "key=value key=value ..." for every key in schema order (lists as "a,b,c", reals in their
  // shortest form: "0.100000" and "0.1" alike as 0.1): parse_settings' form.
  std::string settings() const;
  const std::string& filename() const { return filename_; }
  const Schema& schema() const { return schema_; }

 private:
  Schema schema_;  // a copy: a Deck must not dangle when the caller's schema was a temporary
  std::string filename_;
  std::map<std::string, Entry> entries_;
};

// Splits a list value on commas and/or whitespace.
std::vector<std::string> split_list(const std::string& value);

}  // namespace hpct::deck
