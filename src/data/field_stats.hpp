// Normalisation statistics of a data set's fields, at the granularity a model asks for: one mean
// and standard deviation per column (each value of a row), or per channel (the first dimension of
// the row shape: the C of [C, H, W], the variable of [V, points]).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace hpct {

enum class StatsGranularity : std::uint8_t { column, channel };

// What a model asks statistics of (Model::data_stats_request).
struct StatsRequest {
  std::string field;
  StatsGranularity granularity = StatsGranularity::column;
};

struct FieldStats {
  std::string field;
  StatsGranularity granularity = StatsGranularity::column;
  std::vector<double> mean, std;  // population standard deviation
};

struct DataStats {
  std::uint64_t rows = 0;
  std::vector<FieldStats> fields;  // in the order requested
  // The column statistics of the supervised pair "inputs" / "targets" (the diffusion model and the
  // in-situ library normalise with these), copied from `fields` when they were requested.
  std::vector<double> x_mean, x_std, y_mean, y_std;

  const FieldStats& of(const std::string& field) const {
    for (const FieldStats& f : fields)
      if (f.field == field) return f;
    throw Error("internal: no statistics of field '" + field + "'");
  }
  FieldStats& of(const std::string& field) {
    return const_cast<FieldStats&>(static_cast<const DataStats&>(*this).of(field));
  }
};

}  // namespace hpct
