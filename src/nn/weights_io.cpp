// Writing and reading trained weights as HDF5, one dataset per tensor (see weights_io.hpp).
#include "nn/weights_io.hpp"

#include <vector>

#include "core/error.hpp"
#include "io/atomic_file.hpp"
#include "io/hdf5.hpp"
#include "nn/parameter_generation.hpp"

namespace hpct::nn {

template <class Scalar>
void write_weights(const std::string& path, const ParameterStore<Scalar>& store, const Attributes& attrs,
                   const Extras& extras) {
  auto host = to_host(store.params());
  const h5::File f = h5::File::create_in_memory(path);
  for (const auto& t : store.tensors()) {
    std::vector<float> values(t.size);
    for (std::uint64_t i = 0; i < t.size; ++i) values[i] = static_cast<float>(host(t.offset + i));
    h5::write(f, t.name, t.shape, values.data());
  }
  for (const auto& [name, values] : extras) h5::write(f, name, {values.size()}, values.data());
  for (const auto& [k, v] : attrs) h5::write_attr(f, "/", k, v);
  write_file_atomically(path, f.image());
}

template <class Scalar>
Attributes read_weights(const std::string& path, ParameterStore<Scalar>& store) {
  const h5::File f = h5::File::open_read(path);
  auto host = Kokkos::create_mirror_view(store.params());
  for (const auto& t : store.tensors()) {
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
  for (const char* key : {"model", "config", "hpctrain_version", "git_hash", "backend"})
    if (h5::has_attr(f, "/", key)) attrs[key] = h5::read_attr_string(f, "/", key);
  return attrs;
}

template void write_weights<float>(const std::string&, const ParameterStore<float>&, const Attributes&,
                                   const Extras&);
template void write_weights<double>(const std::string&, const ParameterStore<double>&, const Attributes&,
                                    const Extras&);
template Attributes read_weights<float>(const std::string&, ParameterStore<float>&);
template Attributes read_weights<double>(const std::string&, ParameterStore<double>&);

}  // namespace hpct::nn
