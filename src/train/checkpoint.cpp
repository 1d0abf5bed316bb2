// Writing, checking (checksum) and reading checkpoint files, and finding the candidates in a directory.
#include "train/checkpoint.hpp"

#include "hpctrain/version.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "core/log.hpp"
#include "io/atomic_file.hpp"
#include "io/hdf5.hpp"
#include "nn/parameter_generation.hpp"

namespace hpct {

namespace fs = std::filesystem;

namespace {

constexpr const char* kLatest = "latest";

std::uint64_t fnv1a(std::uint64_t h, const void* data, std::size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

std::string numeric_state(const CheckpointState& s) {
  return strf("%llu %llu %llu %.17g %llu %llu %.17g %llu %llu %llu", (unsigned long long)s.global_step,
              (unsigned long long)s.epoch, (unsigned long long)s.epoch_samples, s.epoch_loss_sum,
              (unsigned long long)s.epoch_steps, (unsigned long long)s.skipped_steps, s.best_val_loss,
              (unsigned long long)s.seed, (unsigned long long)s.ranks, (unsigned long long)s.global_batch);
}

std::string checksum(const CheckpointState& s, const std::vector<float>& p, const std::vector<float>& m,
                     const std::vector<float>& v) {
  std::uint64_t h = 1469598103934665603ull;
  h = fnv1a(h, p.data(), p.size() * sizeof(float));
  h = fnv1a(h, m.data(), m.size() * sizeof(float));
  h = fnv1a(h, v.data(), v.size() * sizeof(float));
  const std::string n = numeric_state(s);
  h = fnv1a(h, n.data(), n.size());
  h = fnv1a(h, s.deck.data(), s.deck.size());
  for (const auto& [name, values] : s.extra) {  // nothing when absent: older checksums still match
    h = fnv1a(h, name.data(), name.size());
    h = fnv1a(h, values.data(), values.size() * sizeof(double));
  }
  if (!s.ema.empty()) {  // likewise
    h = fnv1a(h, s.ema.data(), s.ema.size() * sizeof(float));
    h = fnv1a(h, &s.ema_updates, sizeof(s.ema_updates));
  }
  if (s.best_epoch != 0) h = fnv1a(h, &s.best_epoch, sizeof(s.best_epoch));  // likewise
  return strf("%016llx", (unsigned long long)h);
}

template <class V>
std::vector<float> host_vector(const V& v) {
  auto h = to_host(v);
  return std::vector<float>(h.data(), h.data() + h.extent(0));
}

std::uint64_t step_of(const std::string& filename) {
  // ckpt-<step>.h5
  if (filename.rfind("ckpt-", 0) != 0 || filename.size() < 9 || filename.substr(filename.size() - 3) != ".h5")
    return ~0ull;
  const std::string digits = filename.substr(5, filename.size() - 8);
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) return ~0ull;
  return std::stoull(digits);
}

void write_state(const h5::File& f, const CheckpointState& s) {
  auto i = [&](const char* k, std::uint64_t v) { h5::write_attr(f, "/", k, static_cast<long long>(v)); };
  i("global_step", s.global_step);
  i("epoch", s.epoch);
  i("epoch_samples", s.epoch_samples);
  i("epoch_steps", s.epoch_steps);
  i("skipped_steps", s.skipped_steps);
  i("seed", s.seed);
  i("ranks", s.ranks);
  i("global_batch", s.global_batch);
  h5::write_attr(f, "/", "epoch_loss_sum", s.epoch_loss_sum);
  h5::write_attr(f, "/", "best_val_loss", s.best_val_loss);
  if (s.best_epoch != 0) i("best_epoch", s.best_epoch);
  h5::write_attr(f, "/", "loss_scale", s.loss_scale);
  i("loss_scale_growth_tracker", s.loss_scale_growth_tracker);
  h5::write_attr(f, "/", "deck", s.deck);
  h5::write_attr(f, "/", "model", s.model_family);
  h5::write_attr(f, "/", "config", s.model_config);
  h5::write_attr(f, "/", "hpctrain_version", s.version);
  h5::write_attr(f, "/", "git_hash", s.git_hash);
  h5::write_attr(f, "/", "backend", s.backend);
  std::string names;
  for (const auto& [name, values] : s.extra) {
    h5::write(f, "extra/" + name, {values.size()}, values.data());
    names += (names.empty() ? "" : ",") + name;
  }
  if (!names.empty()) h5::write_attr(f, "/", "extra_names", names);
  if (!s.ema.empty()) {
    h5::write(f, "ema/params", {s.ema.size()}, s.ema.data());
    i("ema_updates", s.ema_updates);
  }
}

CheckpointState read_state(const h5::File& f) {
  CheckpointState s;
  auto i = [&](const char* k) { return static_cast<std::uint64_t>(h5::read_attr_int(f, "/", k)); };
  s.global_step = i("global_step");
  s.epoch = i("epoch");
  s.epoch_samples = i("epoch_samples");
  s.epoch_steps = i("epoch_steps");
  s.skipped_steps = i("skipped_steps");
  s.seed = i("seed");
  s.ranks = i("ranks");
  s.global_batch = i("global_batch");
  s.epoch_loss_sum = h5::read_attr_double(f, "/", "epoch_loss_sum");
  s.best_val_loss = h5::read_attr_double(f, "/", "best_val_loss");
  if (h5::has_attr(f, "/", "best_epoch")) s.best_epoch = i("best_epoch");  // absent before best_output
  if (h5::has_attr(f, "/", "loss_scale")) {  // absent in checkpoints written before precision modes
    s.loss_scale = h5::read_attr_double(f, "/", "loss_scale");
    s.loss_scale_growth_tracker = i("loss_scale_growth_tracker");
  }
  s.deck = h5::read_attr_string(f, "/", "deck");
  s.model_family = h5::read_attr_string(f, "/", "model");
  s.model_config = h5::read_attr_string(f, "/", "config");
  s.version = h5::read_attr_string(f, "/", "hpctrain_version");
  s.git_hash = h5::read_attr_string(f, "/", "git_hash");
  s.backend = h5::read_attr_string(f, "/", "backend");
  if (h5::has_attr(f, "/", "extra_names")) {
    const std::string names = h5::read_attr_string(f, "/", "extra_names");
    std::size_t begin = 0;
    while (begin < names.size()) {
      const std::size_t end = std::min(names.find(',', begin), names.size());
      const std::string name = names.substr(begin, end - begin);
      s.extra[name] = h5::read_all<double>(f, "extra/" + name);
      begin = end + 1;
    }
  }
  if (h5::exists(f, "ema/params")) {
    s.ema = h5::read_all<float>(f, "ema/params");
    s.ema_updates = i("ema_updates");
  }
  return s;
}

// Opens and fully verifies a checkpoint; returns its state and buffers.
CheckpointState load_verified(const std::string& path, std::vector<float>& p, std::vector<float>& m,
                              std::vector<float>& v) {
  try {
    const h5::File f = h5::File::open_read(path);
    CheckpointState s = read_state(f);
    // A state-only checkpoint (gbdt) has no flat buffers; its state is in `extra`.
    p = h5::exists(f, "params") ? h5::read_all<float>(f, "params") : std::vector<float>();
    m = h5::exists(f, "optimizer/m") ? h5::read_all<float>(f, "optimizer/m") : std::vector<float>();
    v = h5::exists(f, "optimizer/v") ? h5::read_all<float>(f, "optimizer/v") : std::vector<float>();
    const std::string stored = h5::read_attr_string(f, "/", "checksum");
    if (stored != checksum(s, p, m, v))
      throw Error(path + ": checksum mismatch (the file is corrupt)", ExitCode::failure);
    return s;
  } catch (const Error& e) {
    const std::string what = e.what();
    // HDF5 errors name the file already; anything else gets it prefixed.
    throw Error(what.rfind(path, 0) == 0 ? what : path + ": " + what, ExitCode::failure);
  }
}

}  // namespace

namespace {
// The file of either kind: a network's (store given) or a state-only one (gbdt: no flat buffers).
std::string write_checkpoint_file(const std::string& dir, int keep, const CheckpointState& state,
                                  const nn::ParameterStore<float>* store, const std::vector<float>& p,
                                  const std::vector<float>& m, const std::vector<float>& v) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error(dir + ": cannot create checkpoint directory (" + ec.message() + ")");
  const std::string name = strf("ckpt-%09llu.h5", (unsigned long long)state.global_step);
  std::string path = (fs::path(dir) / name).string();
  {
    const h5::File f = h5::File::create_in_memory(name);
    if (store) {
      h5::write(f, "params", {p.size()}, p.data());
      h5::write(f, "optimizer/m", {m.size()}, m.data());
      if (!v.empty()) h5::write(f, "optimizer/v", {v.size()}, v.data());
      for (const auto& t : store->tensors()) h5::write(f, "model/" + t.name, t.shape, p.data() + t.offset);
    }
    write_state(f, state);
    h5::write_attr(f, "/", "checksum", checksum(state, p, m, v));
    write_file_atomically(path, f.image());
  }
  // The pointer is written last: a crash before this line leaves the previous `latest` valid.
  write_atomically((fs::path(dir) / kLatest).string(), [&](const std::string& tmp) {
    std::ofstream out(tmp);
    out << name << "\n";
    if (!out.flush()) throw Error(tmp + ": write failed (disk full?)");
  });
  // Keep the newest `keep`; also clear temporary files left by killed writers.
  std::vector<std::pair<std::uint64_t, fs::path>> all;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string fn = entry.path().filename().string();
    if (fn.rfind("ckpt-", 0) == 0 && fn.find(".tmp.") != std::string::npos) fs::remove(entry.path(), ec);
    else if (step_of(fn) != ~0ull) all.emplace_back(step_of(fn), entry.path());
  }
  std::sort(all.rbegin(), all.rend());
  for (std::size_t i = static_cast<std::size_t>(keep); i < all.size(); ++i) fs::remove(all[i].second, ec);
  return path;
}
}  // namespace

std::string write_checkpoint(const std::string& dir, int keep, const CheckpointState& state,
                             const nn::ParameterStore<float>& store, const optim::Optimizer<float>& optimizer) {
  const std::vector<float> p = host_vector(store.param_span());
  const std::vector<float> m = host_vector(optimizer.first_moment());
  const std::vector<float> v = optimizer.second_moment().extent(0) ? host_vector(optimizer.second_moment())
                                                                   : std::vector<float>();
  return write_checkpoint_file(dir, keep, state, &store, p, m, v);
}

std::string write_state_checkpoint(const std::string& dir, int keep, const CheckpointState& state) {
  return write_checkpoint_file(dir, keep, state, nullptr, {}, {}, {});
}

CheckpointState read_checkpoint(const std::string& path, nn::ParameterStore<float>& store,
                                optim::Optimizer<float>& optimizer) {
  std::vector<float> p, m, v;
  CheckpointState s = load_verified(path, p, m, v);
  if (!s.ema.empty() && s.ema.size() != p.size())
    throw Error(path + strf(": ema/params holds %zu values, params %zu", s.ema.size(), p.size()),
                ExitCode::bad_input);
  if (p.size() != store.count() || m.size() != optimizer.first_moment().extent(0) ||
      v.size() != optimizer.second_moment().extent(0))
    throw Error(path + strf(": holds %zu parameters and optimizer state for %zu/%zu, this model has %llu "
                            "(a different model shape or optimizer)",
                            p.size(), m.size(), v.size(), (unsigned long long)store.count()),
                ExitCode::bad_input);
  auto copy_in = [](const std::vector<float>& src, auto view) {
    auto h = Kokkos::create_mirror_view(view);
    std::copy(src.begin(), src.end(), h.data());
    Kokkos::deep_copy(view, h);
  };
  copy_in(p, View1<float>(store.params()));
  nn::parameters_written();  // Note [parameter generation]
  copy_in(m, optimizer.first_moment());
  if (!v.empty()) copy_in(v, optimizer.second_moment());
  optimizer.set_steps_taken(s.global_step - s.skipped_steps);
  return s;
}

CheckpointState inspect_checkpoint(const std::string& path) {
  std::vector<float> p, m, v;
  return load_verified(path, p, m, v);
}

std::vector<std::string> checkpoint_candidates(const std::string& dir) {
  std::vector<std::string> out;
  std::ifstream latest(fs::path(dir) / kLatest);
  std::string name;
  if (latest && std::getline(latest, name) && !name.empty()) out.push_back((fs::path(dir) / name).string());
  std::vector<std::pair<std::uint64_t, std::string>> all;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string fn = entry.path().filename().string();
    if (step_of(fn) != ~0ull) all.emplace_back(step_of(fn), entry.path().string());
  }
  std::sort(all.rbegin(), all.rend());
  for (const auto& [step, path] : all)
    if (std::find(out.begin(), out.end(), path) == out.end()) out.push_back(path);
  return out;
}

CheckpointState run_state(const deck::Deck& deck, int ranks) {
  CheckpointState st;
  st.seed = static_cast<std::uint64_t>(deck.get_int("seed"));
  st.ranks = static_cast<std::uint64_t>(ranks);
  st.deck = deck.resolved();
  st.model_family = deck.get_string("model");
  st.version = kVersion;
  st.git_hash = kGitHash;
  st.backend = ExecSpace::name();
  return st;
}

CheckpointState run_state(const deck::Deck& deck, const Model& model, const optim::LossScaler& scaler,
                          std::uint64_t seed, int ranks, std::uint64_t global_batch) {
  CheckpointState st = run_state(deck, ranks);
  st.seed = seed;
  st.global_batch = global_batch;
  st.loss_scale = scaler.scale();
  st.loss_scale_growth_tracker = scaler.growth_tracker();
  st.model_family = model.family();
  st.model_config = model.config_string();
  return st;
}

}  // namespace hpct
