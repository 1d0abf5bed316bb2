// CRC-32C (Castagnoli), the checksum TFRecord and TensorBoard event files frame every record with,
// plus the "masked" form those formats store (a CRC of data that itself holds CRCs stays strong).
#pragma once

#include <cstddef>
#include <cstdint>

namespace hpct {

// CRC-32C of `size` bytes, continuing from `crc` (0 to start); crc32c("123456789") == 0xE3069283.
std::uint32_t crc32c(const void* data, std::size_t size, std::uint32_t crc = 0);

// The masked CRC stored in tfevents/TFRecord files: rotate right by 15 bits, add a constant.
inline std::uint32_t mask_crc32c(std::uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

}  // namespace hpct
