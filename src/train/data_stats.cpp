// Two-pass, rank-reduced statistics of the training data's fields (for models that normalise).
#include "train/data_stats.hpp"

#include <algorithm>
#include <cmath>

#include "core/heartbeat.hpp"

namespace hpct {

// Note [missing values in the statistics]
// A table's missing number is NaN in its column (the mlp reads it as the column's mean, Note [mlp
// standardisation] in models/mlp/mlp_scaling.cpp), so a group's mean and std are over its values
// that are not NaN, as numpy's nanmean / nanstd: the NaN are counted beside the sums (whole numbers
// in doubles, exact in any order) and the divisor is the values less that count. Without NaN the
// divisor is rows x group as before, the same bits; a group of NaN alone reads mean 0, std 0.
DataStats compute_data_stats(const Dataset& data, const Comm& comm, std::vector<StatsRequest> requests,
                             bool fixed_blocks) {
  if (requests.empty()) requests = {{"inputs", StatsGranularity::column}, {"targets", StatsGranularity::column}};
  const std::vector<FieldSpec> specs = data.fields();
  const std::string name = data.description();
  // Per request: the field index, the values per row, and the values per group (column or channel).
  struct Plan {
    std::size_t field;
    std::uint64_t width, group, first;  // first: where its groups start in acc
    std::uint64_t groups() const { return width / group; }
  };
  std::vector<Plan> plan;
  std::uint64_t total = 0;
  for (const StatsRequest& r : requests) {
    const auto it = std::find_if(specs.begin(), specs.end(), [&](const FieldSpec& s) { return s.name == r.field; });
    if (it == specs.end())
      throw Error(data.description() + ": no field '" + r.field + "' to normalise", ExitCode::bad_input);
    if (it->dtype != DType::f32 || it->ragged)
      throw Error(data.description() + ": field '" + r.field +
                      "' is not a float field of fixed shape; it cannot be normalised",
                  ExitCode::bad_input);
    const std::uint64_t w = it->width();
    const std::uint64_t per = r.granularity == StatsGranularity::channel && it->row_shape.rank > 0
                                  ? w / static_cast<std::uint64_t>(it->row_shape.dim[0])
                                  : 1;
    plan.push_back({static_cast<std::size_t>(it - specs.begin()), w, per, total});
    total += w / per;
  }
  const auto r = static_cast<std::uint64_t>(comm.rank()), p = static_cast<std::uint64_t>(comm.size());
  const std::uint64_t first = data.rows() * r / p, count = data.rows() * (r + 1) / p - first;
  // Note [stats chunk]: the rows are read `chunk` at a time into one buffer: 4096, or fewer where a
  // row is large (a global grid's sample holds megabytes: 4096 of N96's would take 12 GB) so that the
  // buffer stays within 256 MiB, and it holds no more rows than the data has. The chunk is a function
  // of the fields alone, so the blocks of fixed_blocks are the same at every rank count; without
  // fixed_blocks the rows are added one by one in order and the chunk changes no sum.
  std::uint64_t row_bytes = 1;
  for (const FieldSpec& s : specs)
    if (!s.ragged) row_bytes += 4 * s.words();
  const std::uint64_t chunk = std::clamp<std::uint64_t>((std::uint64_t{256} << 20) / row_bytes, 1, 4096);
  const std::uint64_t buffer_rows = std::max<std::uint64_t>(1, std::min(chunk, data.rows()));
  // Every field is read, so ragged fields need room for the most elements a chunk can hold.
  std::vector<std::uint64_t> elements(specs.size(), 0);
  for (std::size_t f = 0; f < specs.size(); ++f)
    if (specs[f].ragged) elements[f] = most_elements(data, static_cast<int>(f), buffer_rows);
  const HostFields buf(specs, buffer_rows, elements);
  // acc = per group: sum x (pass 0) or sum (x - mean)^2 (pass 1), then the NaN count (Note [missing
  // values in the statistics]).
  std::vector<double> acc(2 * total), mean(total, 0.0), missing(total, 0.0);
  const std::uint64_t blocks = (data.rows() + chunk - 1) / chunk;
  std::vector<double> per_block(fixed_blocks ? blocks * 2 * total : 0);
  for (int pass = 0; pass < 2; ++pass) {
    std::fill(acc.begin(), acc.end(), 0.0);
    std::fill(per_block.begin(), per_block.end(), 0.0);
    // Adds rows [row, row + n) to a.
    const auto add_rows = [&](std::uint64_t row, std::uint64_t n, double* a) {
      Heartbeat::beat_current("data statistics", name);  // a pass over 10 GB is long: Note [beats from the open]
      data.read_block(row, n, buf.buffers());
      for (const Plan& q : plan) {
        const auto* x = reinterpret_cast<const float*>(buf.words(q.field));
        for (std::uint64_t i = 0; i < n; ++i)
          for (std::uint64_t j = 0; j < q.width; ++j) {
            const std::uint64_t g = q.first + j / q.group;
            const float raw = x[i * q.width + j];
            if (std::isnan(raw)) {
              a[total + g] += 1;
              continue;
            }
            const double v = raw - mean[g];
            a[g] += pass == 0 ? v : v * v;
          }
      }
    };
    comm.run_agreed([&] {
      if (fixed_blocks) {
        for (std::uint64_t b = r; b < blocks; b += p)
          add_rows(b * chunk, std::min(chunk, data.rows() - b * chunk), per_block.data() + b * 2 * total);
      } else {
        for (std::uint64_t b = 0; b < count; b += chunk)
          add_rows(first + b, std::min(chunk, count - b), acc.data());
      }
    });
    if (fixed_blocks) {  // every block's sums come from one rank: the all-reduce adds zeros only
      comm.allreduce_sum(per_block.data(), per_block.size());
      for (std::uint64_t b = 0; b < blocks; ++b)
        for (std::uint64_t g = 0; g < 2 * total; ++g) acc[g] += per_block[b * 2 * total + g];
    } else {
      comm.allreduce_sum(acc.data(), acc.size());
    }
    for (const Plan& q : plan)
      for (std::uint64_t g = q.first; g < q.first + q.groups(); ++g) {
        if (pass == 0) missing[g] = acc[total + g];
        const double values = static_cast<double>(data.rows() * q.group) - missing[g];
        const double m = acc[g] / std::max(values, 1.0);
        if (pass == 0) mean[g] = m;
        else acc[g] = std::sqrt(m);
      }
  }
  DataStats s;
  s.rows = data.rows();
  for (std::size_t k = 0; k < plan.size(); ++k) {
    const Plan& q = plan[k];
    FieldStats f{requests[k].field, requests[k].granularity, {}, {}};
    f.mean.assign(mean.begin() + static_cast<long>(q.first),
                  mean.begin() + static_cast<long>(q.first + q.groups()));
    f.std.assign(acc.begin() + static_cast<long>(q.first), acc.begin() + static_cast<long>(q.first + q.groups()));
    if (f.field == "inputs" && f.granularity == StatsGranularity::column) s.x_mean = f.mean, s.x_std = f.std;
    if (f.field == "targets" && f.granularity == StatsGranularity::column) s.y_mean = f.mean, s.y_std = f.std;
    s.fields.push_back(std::move(f));
  }
  return s;
}

}  // namespace hpct
