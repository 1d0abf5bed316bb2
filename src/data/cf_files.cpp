// Several NetCDF files or Zarr stores read as one data set (cf_files.hpp).
#include "data/cf_files.hpp"

#include <glob.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>

#include "core/error.hpp"
#include "data/grid_time.hpp"

namespace hpct {

namespace {

std::string trimmed(const std::string& s) {
  std::size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

std::string time_text(double seconds) {
  const double days = std::floor(seconds / 86400);
  const CivilDate d = civil_from_days(static_cast<long long>(days));
  const auto s = static_cast<long long>(seconds - days * 86400);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%04lld-%02d-%02d %02lld:%02lld", d.year, d.month, d.day, s / 3600, s / 60 % 60);
  return buf;
}

// Note [several files]: each variable is read from the files that hold it (ERA5's t2m from the
// single-level files, z from the pressure-level ones), its times concatenated in time order across
// them (one file per month); times are compared as seconds since 1970, so files may write them in
// different units. Every variable over time must then cover the same times, no time may be in two
// files of a variable, time must be a variable's first dimension, and the other coordinates (y, x,
// levels) must be the same in every file. Packing and missing values can differ per file (the CDS
// packs each file by its own range), so they are undone here, per file, as CfGridDataset does for
// one file (Note [packed and missing values]): the combined variable holds floats, NaN missing.
class CombinedArrays : public CfArraysReadAs<CombinedArrays> {
 public:
  CombinedArrays(std::vector<std::string> paths, std::vector<std::unique_ptr<CfArrays>> files)
      : paths_(std::move(paths)), files_(std::move(files)) {}

  bool has(const std::string& var) const override { return var == kTime || !parts(var).empty(); }
  std::vector<std::string> dimensions(const std::string& var) const override {
    if (var == kTime) return {kTime};
    const Variable& v = variable(var);
    std::vector<std::string> dims = files_[v.parts[0].file]->dimensions(var);
    if (v.timed) dims[0] = kTime;
    return dims;
  }
  std::vector<std::size_t> shape(const std::string& var) const override {
    if (var == kTime) return {axis_.size()};
    const Variable& v = variable(var);
    std::vector<std::size_t> s = files_[v.parts[0].file]->shape(var);
    if (v.timed) s[0] = v.times.size();
    return s;
  }
  std::string text(const std::string& var, const char* attribute) const override {
    const std::string a = attribute;
    if (var == kTime) return a == "units" ? "seconds since 1970-01-01 00:00:00" : a == "axis" ? "T" : "";
    return files_[variable(var).parts[0].file]->text(var, attribute);
  }
  bool number(const std::string& var, const char* attribute, double& value) const override {
    const std::string a = attribute;
    if (var == kTime || a == "scale_factor" || a == "add_offset") return false;  // unpacked here
    return files_[variable(var).parts[0].file]->number(var, attribute, value);
  }
  std::vector<double> missing_values(const std::string&) const override { return {}; }  // NaN here
  bool numeric_data(const std::string& var) const override {
    if (var == kTime) return true;
    for (const Part& p : variable(var).parts)
      if (!files_[p.file]->numeric_data(var)) return false;
    return true;
  }

 private:
  friend class CfArraysReadAs<CombinedArrays>;
  static constexpr const char* kTime = "time";

  struct Part {
    std::size_t file = 0, first = 0, count = 0;  // times [first, first + count) of the variable
    double scale = 1, offset = 0;
    std::vector<double> missing;
  };
  struct Variable {
    bool timed = false;
    std::vector<Part> parts;
    std::vector<double> times;  // seconds since 1970
  };

  std::vector<std::size_t> parts(const std::string& var) const {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < files_.size(); ++i)
      if (files_[i]->has(var)) out.push_back(i);
    return out;
  }
  [[noreturn]] void refuse(const std::string& var, const std::string& why) const {
    std::string list;
    for (const std::string& p : paths_) list += (list.empty() ? "" : ", ") + p;
    throw Error(list + ": variable '" + var + "' " + why, ExitCode::bad_input);
  }

  // The times of file i's time dimension `dim`, in seconds since 1970.
  std::vector<double> file_times(std::size_t i, const std::string& dim, const std::string& var) const {
    const CfArrays& f = *files_[i];
    if (!f.has(dim) || f.shape(dim).size() != 1)
      refuse(var, "in " + paths_[i] + ": no coordinate '" + dim + "' to order the files by");
    const TimeUnits u = parse_time_units(f.text(dim, "units"), paths_[i] + ": coordinate '" + dim + "'");
    std::vector<double> t(f.shape(dim)[0]);
    f.read(dim, {0}, {t.size()}, t.data());
    for (double& x : t) x = u.epoch_seconds + x * u.seconds_per_unit;
    return t;
  }

  const Variable& variable(const std::string& var) const {
    const auto hit = vars_.find(var);
    if (hit != vars_.end()) return hit->second;
    const std::vector<std::size_t> holders = parts(var);
    if (holders.empty()) refuse(var, "is missing");
    Variable v;
    const CfArrays& first = *files_[holders[0]];
    const std::vector<std::string> dims = first.dimensions(var);
    for (std::size_t d = 0; d < dims.size(); ++d)
      if (is_time_dimension(first, dims[d])) {
        if (d != 0)
          refuse(var, "has time as dimension " + std::to_string(d) + "; over several files it must be the first");
        v.timed = true;
      }
    std::vector<std::pair<std::vector<double>, Part>> found;  // each file's times
    for (const std::size_t i : holders) {
      const CfArrays& f = *files_[i];
      Part p;
      p.file = i;
      f.number(var, "scale_factor", p.scale);
      f.number(var, "add_offset", p.offset);
      p.missing = f.missing_values(var);
      check_same_grid(var, holders[0], i);
      if (!v.timed) {
        v.parts.push_back(p);
        break;  // a variable without time: the first file's
      }
      std::vector<double> t = file_times(i, f.dimensions(var)[0], var);
      p.count = t.size();
      found.emplace_back(std::move(t), p);
    }
    if (v.timed) {
      // In time order: by each file's first time (a file without times last).
      std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
        return !a.first.empty() && (b.first.empty() || a.first[0] < b.first[0]);
      });
      for (auto& [t, p] : found) {
        p.first = v.times.size();
        v.times.insert(v.times.end(), t.begin(), t.end());
        v.parts.push_back(p);
      }
      for (std::size_t k = 1; k < v.times.size(); ++k)
        if (v.times[k] <= v.times[k - 1])
          refuse(var, "has the time " + time_text(v.times[k]) + " twice or out of order across its files");
      check_same_times(var, v);
    }
    return vars_[var] = std::move(v);
  }

  // Every variable over time covers the first one's times (a static one stored over one time aside).
  void check_same_times(const std::string& var, const Variable& v) const {
    if (axis_.empty()) {
      axis_ = v.times, axis_var_ = var;
      return;
    }
    if (v.times == axis_ || v.times.size() == 1) return;
    std::size_t k = 0;
    while (k < v.times.size() && k < axis_.size() && v.times[k] == axis_[k]) ++k;
    const std::string at = k < v.times.size() ? time_text(v.times[k]) : "its end";
    refuse(var, "covers other times than '" + axis_var_ + "' (" + std::to_string(v.times.size()) +
                    " times against " + std::to_string(axis_.size()) + "; first difference at " + at + ")");
  }

  // The variable's dimensions other than time, and their coordinates, agree between files a and b.
  void check_same_grid(const std::string& var, std::size_t a, std::size_t b) const {
    const CfArrays &fa = *files_[a], &fb = *files_[b];
    const std::vector<std::string> da = fa.dimensions(var), db = fb.dimensions(var);
    std::vector<std::size_t> sa = fa.shape(var), sb = fb.shape(var);
    const bool timed = !da.empty() && is_time_dimension(fa, da[0]);
    if (timed && !sb.empty()) sa[0] = sb[0];  // the time lengths may differ
    if (da.size() != db.size() || sa != sb || !std::equal(da.begin() + timed, da.end(), db.begin() + timed))
      refuse(var, "has other dimensions in " + paths_[b] + " than in " + paths_[a]);
    for (std::size_t d = timed ? 1 : 0; d < da.size(); ++d) {
      if (!fa.has(da[d]) || fa.shape(da[d]).size() != 1) continue;
      std::vector<double> ca(sa[d]), cb(sa[d]);
      fa.read(da[d], {0}, {sa[d]}, ca.data());
      if (fb.has(db[d])) fb.read(db[d], {0}, {sa[d]}, cb.data());
      if (ca != cb) refuse(var, "has other '" + da[d] + "' coordinates in " + paths_[b] + " than in " + paths_[a]);
    }
  }

  template <typename T>
  void read_as(const std::string& var, const std::vector<std::size_t>& start, const std::vector<std::size_t>& count,
               T* out) const {
    if (var == kTime) {
      for (std::size_t k = 0; k < count[0]; ++k) out[k] = static_cast<T>(axis_[start[0] + k]);
      return;
    }
    const Variable& v = variable(var);
    std::size_t inner = 1;
    for (std::size_t d = 1; d < count.size(); ++d) inner *= count[d];
    for (const Part& p : v.parts) {
      // This file's share of [start[0], start[0] + count[0]) (all of it for a variable without time).
      const std::size_t lo = v.timed ? std::max(start[0], p.first) : start[0];
      const std::size_t hi = v.timed ? std::min(start[0] + count[0], p.first + p.count) : start[0] + count[0];
      if (lo >= hi) continue;
      std::vector<std::size_t> s = start, c = count;
      s[0] = v.timed ? lo - p.first : lo, c[0] = hi - lo;
      T* dst = out + (lo - start[0]) * inner;
      files_[p.file]->read(var, s, c, dst);
      if (p.missing.empty() && p.scale == 1 && p.offset == 0) continue;
      for (std::size_t k = 0; k < c[0] * inner; ++k) {
        const T x = dst[k];
        const bool gone = std::find_if(p.missing.begin(), p.missing.end(),
                                       [&](double m) { return static_cast<T>(m) == x; }) != p.missing.end();
        dst[k] = gone ? static_cast<T>(NAN) : static_cast<T>(x * p.scale + p.offset);
      }
    }
  }

  std::vector<std::string> paths_;
  std::vector<std::unique_ptr<CfArrays>> files_;
  mutable std::map<std::string, Variable> vars_;
  mutable std::vector<double> axis_;
  mutable std::string axis_var_;
};

}  // namespace

std::vector<std::string> data_file_list(const std::string& data_file) {
  std::vector<std::string> out;
  std::size_t from = 0;
  while (from <= data_file.size()) {
    const std::size_t comma = std::min(data_file.find(',', from), data_file.size());
    const std::string entry = trimmed(data_file.substr(from, comma - from));
    from = comma + 1;
    if (entry.empty()) continue;
    if (entry.find_first_of("*?[") == std::string::npos) {
      out.push_back(entry);
      continue;
    }
    glob_t g{};
    const int rc = glob(entry.c_str(), 0, nullptr, &g);  // sorted matches
    for (std::size_t k = 0; rc == 0 && k < g.gl_pathc; ++k) out.emplace_back(g.gl_pathv[k]);
    globfree(&g);
    if (rc != 0) throw Error(entry + ": no file matches this pattern", ExitCode::bad_input);
  }
  return out;
}

CfGridDataset::Opener cf_files_opener(
    const std::string& data_file, const std::function<std::unique_ptr<CfArrays>(const std::string&)>& open_one) {
  const std::vector<std::string> paths = data_file_list(data_file);
  if (paths.size() == 1) return [open_one, path = paths[0]] { return open_one(path); };
  return [open_one, paths]() -> std::unique_ptr<CfArrays> {
    std::vector<std::unique_ptr<CfArrays>> files;
    for (const std::string& p : paths) files.push_back(open_one(p));
    return std::make_unique<CombinedArrays>(paths, std::move(files));
  };
}

bool is_time_dimension(const CfArrays& f, const std::string& dim) {
  if (f.has(dim) && !f.text(dim, "axis").empty()) return f.text(dim, "axis") == "T";
  std::string n = dim;
  for (char& c : n) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return n == "time" || n == "t" || n == "valid_time";
}

}  // namespace hpct
