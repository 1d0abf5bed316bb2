// Network weights as a safetensors file (the format of Hugging Face's safetensors library, read by
// safetensors.torch.load_file): 8-byte little-endian header length, a JSON header naming each
// tensor's dtype, shape and byte range, then the raw little-endian data, tensor after tensor.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace hpct::nn {

struct NamedTensor {
  std::string name;                  // as in PyTorch's state_dict: "fc0.weight"
  std::vector<std::uint64_t> shape;  // row-major
  std::vector<float> values;         // F32
};

// The file's bytes: tensors in the given order, the header padded with spaces so that the data
// starts 8-byte aligned, and `metadata` as the header's "__metadata__" (string values only, as the
// format requires). Names must be unique and must not be "__metadata__".
std::vector<char> safetensors_image(const std::vector<NamedTensor>& tensors,
                                    const std::map<std::string, std::string>& metadata);

// Writes safetensors_image(...) to `path` atomically (temporary file, fsync, rename).
void write_safetensors(const std::string& path, const std::vector<NamedTensor>& tensors,
                       const std::map<std::string, std::string>& metadata);

}  // namespace hpct::nn
