// JSON text through nlohmann-json in the layout our line-oriented files have always had: one object
// per line, `{"key": value, "key": value}` with ", " and ": " (the metrics files, the trace). Keys,
// strings (escaping) and values are nlohmann's; only the separators are ours, because tests and
// users grep those files (`grep '"type": "summary"'`) and nlohmann's compact form has no spaces.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "core/log.hpp"

namespace hpct::json_text {

using Json = nlohmann::ordered_json;  // keys in insertion order: records read as they were built

// `{"k": v, ...}` on one line (nested objects likewise); arrays and scalars as nlohmann dumps them.
inline std::string line(const Json& v) {
  if (!v.is_object()) return v.dump();
  std::string o = "{";
  bool first = true;
  for (const auto& kv : v.items()) {
    o += (first ? "" : ", ") + Json(kv.key()).dump() + ": " + line(kv.value());
    first = false;
  }
  return o + "}";
}

// A number as printf's %.<digits>g would show it (the double nearest that decimal, which nlohmann
// prints in its shortest form: the same digits): whole values as integers ("100", not "100.0");
// non-finite values, which JSON cannot hold, as null.
inline Json number(double v, int digits = 17) {
  if (!std::isfinite(v)) return nullptr;
  const double r = std::strtod(strf("%.*g", digits, v).c_str(), nullptr);
  if (r == std::floor(r) && std::fabs(r) < 9007199254740992.0) return static_cast<std::int64_t>(r);
  return r;
}

// A number rounded to `decimals` places (%.<decimals>f), shortest form.
inline Json fixed(double v, int decimals) {
  if (!std::isfinite(v)) return nullptr;
  return std::strtod(strf("%.*f", decimals, v).c_str(), nullptr);
}

}  // namespace hpct::json_text
