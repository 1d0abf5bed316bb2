// The safetensors writer: header through nlohmann-json, data as little-endian float32.
#include "nn/safetensors.hpp"

#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.hpp"
#include "io/atomic_file.hpp"

namespace hpct::nn {

namespace {
bool little_endian() {
  const std::uint32_t one = 1;
  unsigned char first = 0;
  std::memcpy(&first, &one, 1);
  return first == 1;
}
}  // namespace

std::vector<char> safetensors_image(const std::vector<NamedTensor>& tensors,
                                    const std::map<std::string, std::string>& metadata) {
  // The data is the float32 bytes as they lie in memory; the format says little-endian.
  if (!little_endian()) throw Error("safetensors: big-endian hosts are not supported");
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::set<std::string> seen;
  std::uint64_t offset = 0;
  for (const NamedTensor& t : tensors) {
    if (t.name == "__metadata__" || !seen.insert(t.name).second)
      throw Error("safetensors: tensor name '" + t.name + "' is reserved or repeated");
    std::uint64_t count = 1;
    for (auto d : t.shape) count *= d;
    if (count != t.values.size())
      throw Error("safetensors: tensor '" + t.name + "' has " + std::to_string(t.values.size()) +
                  " values for its shape");
    const std::uint64_t bytes = count * sizeof(float);
    header[t.name] = {{"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  // Spaces after the JSON (allowed by the format) align the data to 8 bytes.
  text.append((8 - (text.size() % 8)) % 8, ' ');
  std::vector<char> out(8 + text.size() + offset);
  std::uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
  std::memcpy(out.data() + 8, text.data(), text.size());
  char* data = out.data() + 8 + text.size();
  for (const NamedTensor& t : tensors) {
    std::memcpy(data, t.values.data(), t.values.size() * sizeof(float));
    data += t.values.size() * sizeof(float);
  }
  return out;
}

void write_safetensors(const std::string& path, const std::vector<NamedTensor>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  write_file_atomically(path, safetensors_image(tensors, metadata));
}

}  // namespace hpct::nn
