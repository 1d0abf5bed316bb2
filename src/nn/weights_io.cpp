// Writing and reading trained weights as HDF5, one dataset per tensor (see weights_io.hpp).
#include "nn/weights_io.hpp"

#include <vector>

#include "core/error.hpp"
#include "io/atomic_file.hpp"
#include "io/hdf5.hpp"
#include "nn/parameter_generation.hpp"

namespace hpct::nn {

namespace {
constexpr const char* kEmaGroup = "ema/";
}  // namespace

WeightsChoice weights_choice(const std::string& name, const std::string& origin) {
  if (name == "ema") return WeightsChoice::ema;
  if (name == "raw") return WeightsChoice::raw;
  throw Error(origin + ": '" + name + "' is not ema or raw", ExitCode::bad_input);
}

template <class Scalar>
void write_weights(const std::string& path, const ParameterStore<Scalar>& store, const Attributes& attrs,
                   const Extras& extras, const float* ema) {
  auto host = to_host(store.params());
  const h5::File f = h5::File::create_in_memory(path);
  for (const auto& t : store.tensors()) {
    std::vector<float> values(t.size);
    for (std::uint64_t i = 0; i < t.size; ++i) values[i] = static_cast<float>(host(t.offset + i));
    h5::write(f, t.name, t.shape, values.data());
    if (ema) h5::write(f, kEmaGroup + t.name, t.shape, ema + t.offset);
  }
  for (const auto& [name, values] : extras) h5::write(f, name, {values.size()}, values.data());
  for (const auto& [k, v] : attrs) h5::write_attr(f, "/", k, v);
  write_file_atomically(path, f.image());
}

// Note [weights choice]: a run with ema_decay writes both sets; what users expect of such a file
// (timm's and Lightning's EMA checkpoints are evaluated with the EMA) is the EMA, so every reader
// (predict, sample, the evaluation apps, convert, the in-situ library, init_weights) takes it unless
// told `--weights raw`. A file of a run without EMA has one set, which `preferred` takes silently
// and an explicit `--weights ema` refuses, so a user never evaluates other weights than asked for.
template <class Scalar>
Attributes read_weights(const std::string& path, ParameterStore<Scalar>& store, WeightsChoice choice) {
  const h5::File f = h5::File::open_read(path);
  const bool has_ema = h5::exists(f, "ema");
  if (choice == WeightsChoice::ema && !has_ema)
    throw Error(path + ": holds no EMA weights (the run had ema_decay 0); use --weights raw", ExitCode::bad_input);
  const bool use_ema = has_ema && choice != WeightsChoice::raw;
  auto host = Kokkos::create_mirror_view(store.params());
  for (const auto& tensor : store.tensors()) {
    typename ParameterStore<Scalar>::Tensor t = tensor;
    if (use_ema) t.name = kEmaGroup + t.name;
    const h5::DatasetInfo di = h5::info(f, t.name);
    if (di.dims != t.shape) {
      std::string want, got;
      for (auto d : t.shape) want += (want.empty() ? "" : "x") + std::to_string(d);
      for (auto d : di.dims) got += (got.empty() ? "" : "x") + std::to_string(d);
      throw Error(path + ": dataset '" + t.name + "' has shape " + got + ", the model needs " + want,
                  ExitCode::bad_input);
    }
    const std::vector<double> values = h5::read_all<double>(f, t.name);
    for (std::uint64_t i = 0; i < t.size; ++i) host(t.offset + i) = static_cast<Scalar>(values[i]);
  }
  Kokkos::deep_copy(store.params(), host);
  parameters_written();  // Note [parameter generation]
  Attributes attrs;
  for (const char* key : {"model", "config", "hpctrain_version", "git_hash", "backend", "ema"})
    if (h5::has_attr(f, "/", key)) attrs[key] = h5::read_attr_string(f, "/", key);
  attrs["weights"] = use_ema ? "ema" : "raw";
  return attrs;
}

template void write_weights<float>(const std::string&, const ParameterStore<float>&, const Attributes&,
                                   const Extras&, const float*);
template void write_weights<double>(const std::string&, const ParameterStore<double>&, const Attributes&,
                                    const Extras&, const float*);
template Attributes read_weights<float>(const std::string&, ParameterStore<float>&, WeightsChoice);
template Attributes read_weights<double>(const std::string&, ParameterStore<double>&, WeightsChoice);

}  // namespace hpct::nn
