#include "train/metrics_sink.hpp"

#include <cmath>

#include "core/error.hpp"

namespace hpct {

MetricsSink::MetricsSink(const std::string& path, int rank, bool append) {
  if (path.empty() || rank != 0) return;
  file_ = std::fopen(path.c_str(), append ? "a" : "w");
  if (!file_) throw Error(path + ": cannot open metrics file for writing");  // a failed write: exit 1
}

MetricsSink::~MetricsSink() {
  if (file_) std::fclose(file_);
}

void MetricsSink::write(const std::string& type, const std::vector<Field>& fields) {
  if (!file_) return;
  std::fprintf(file_, "{\"type\": \"%s\"", type.c_str());
  for (const auto& [k, v] : fields) {
    if (std::isfinite(v)) std::fprintf(file_, ", \"%s\": %.9g", k.c_str(), v);
    else std::fprintf(file_, ", \"%s\": null", k.c_str());
  }
  std::fputs("}\n", file_);
  std::fflush(file_);
}

}  // namespace hpct
