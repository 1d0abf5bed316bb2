// The data keys of a cape training deck, for the cape tools (see cape_data.hpp).
#include "models/cape/cape_data.hpp"

#include <sstream>

#include "data/source_registry.hpp"

namespace hpct::cape {

deck::Schema data_schema() {
  deck::Schema s;
  s.add_string("data_file", "", "the test file");
  s.add_string("validation_file", "", "unused");
  declare_data_source_keys(s);
  s.add_int("seed", 42, 0, (1ll << 62), "the training deck's seed");
  s.add_choice("data_cache", "auto", {"auto", "memory", "stream"}, "decoded images kept in memory");
  s.add_int("data_cache_mb", 2048, 0, 1ll << 40, "at most this many MiB");
  s.add_bool("prefetch_epoch", true, "unused");
  s.add_int("epochs", 1, 0, 1ll << 40, "unused");
  return s;
}

std::string data_lines(const std::string& text, const deck::Schema& s, bool resolved) {
  std::string out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (resolved) {  // Deck::resolved(): "key value   # origin" (Note [predicting image files])
      const std::size_t origin = line.rfind("   # ");
      if (origin == std::string::npos || line.compare(origin + 5, std::string::npos, "default") == 0) line.clear();
      else line.erase(origin);
    }
    std::istringstream words(line);
    std::string key, value;
    words >> key >> value;
    // A stored key set empty has no value, which a deck line needs; the data keys a training sets
    // empty (image_dir, validation_file) are empty by default.
    out += s.find(key) != nullptr && (!resolved || !value.empty()) ? line + "\n" : "\n";
  }
  return out;
}

}  // namespace hpct::cape
