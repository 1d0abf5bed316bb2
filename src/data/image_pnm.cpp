// PNM files (PBM, PGM and PPM, binary or plain, any maxval) through libnetpbm, their samples brought
// to 8 bits as Pillow brings them; libnetpbm's errors (a cut or corrupt file) become an Error naming
// the file (Note [libnetpbm errors]).
#include <cmath>
#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <new>
#include <string>

#include <netpbm/pam.h>

#include "data/image_formats.hpp"

namespace hpct::image_formats {

namespace {

// Note [libnetpbm errors]: libnetpbm reports an error (a file cut short: "EOF / read error", a bad
// header) through pm_error, which prints it and exits the process unless a jump buffer is set
// (pm_setjmpbuf: it then jumps there) and hands the text to a function of ours where one is set
// (pm_setusererrormsgfn); its warnings (pm_message) likewise. Both are the library's global state, not
// a thread's: one file is read at a time, under netpbm_mutex, and the text kept in `message` meanwhile.
std::mutex netpbm_mutex;
std::string message;  // the current read's first error (under netpbm_mutex)

void on_error(const char* text) {
  if (message.empty()) message = text != nullptr ? text : "an unknown error";
}
void on_message(const char* /*text*/) {}  // warnings (a header's odd spacing) are dropped

struct PnmRead {
  struct pam pam = {};
  tuple* row = nullptr;  // libnetpbm's row buffer, freed after a jump too
  long data_at = -1;     // where the samples start (after the header)
  bool too_large = false;
};

// Sample `s` of maxval `m` as 8 bits: Pillow's PpmDecoder computes round(s / m * 255) in double
// precision, rounding halves to even (nearbyint, in the default rounding mode, rounds the same double
// the same way); 255 and 65535 give s and round(s / 257) (Note [16-bit PNGs]).
std::uint8_t eight_bits(sample s, sample m) {
  if (m == 255) return static_cast<std::uint8_t>(s > 255 ? 255 : s);
  const double v = std::nearbyint(static_cast<double>(s) / static_cast<double>(m) * 255.0);
  return static_cast<std::uint8_t>(v > 255.0 ? 255.0 : v);
}

// Note [pnm and setjmp]: as Note [jpeg and setjmp]: `step` (libnetpbm's calls, and our loops over
// what they give) holds nothing whose destructor a jump would skip, and allocates nothing of ours
// (`out`'s pixels are sized between the steps, where a refused allocation throws as any other).
// Whether `step` ran without a libnetpbm error; its row buffer is freed after a jump too.
template <typename Step>
bool netpbm_step(PnmRead& r, const Step& step) {
  std::jmp_buf jump;
  std::jmp_buf* saved = nullptr;
  pm_setjmpbufsave(&jump, &saved);
  if (setjmp(jump)) {
    pm_setjmpbuf(saved);
    if (r.row != nullptr) pnm_freepamrow(r.row);
    r.row = nullptr;
    return false;
  }
  step();
  pm_setjmpbuf(saved);
  return true;
}

// The rows of the image whose header `r` holds, into `out`'s pixels (sized for them).
void read_rows(PnmRead& r, int channels, Image& out) {
  const auto w = static_cast<std::size_t>(r.pam.width);
  r.row = pnm_allocpamrow(&r.pam);
  const bool colour = r.pam.depth >= 3;  // PPM (a PAM's RGB and RGB_ALPHA); alpha dropped
  const sample m = r.pam.maxval;
  std::uint8_t* to = out.pixels.data();
  for (int y = 0; y < r.pam.height; ++y) {
    pnm_readpamrow(&r.pam, r.row);
    for (std::size_t x = 0; x < w; ++x) {
      const tuple t = r.row[x];
      const std::uint8_t a = eight_bits(t[0], m);
      if (!colour) {
        for (int c = 0; c < channels; ++c) *to++ = a;
        continue;
      }
      const std::uint8_t g = eight_bits(t[1], m), b = eight_bits(t[2], m);
      if (channels == 3) *to++ = a, *to++ = g, *to++ = b;
      else *to++ = grey_of(a, g, b);  // Note [grey from colour]
    }
  }
  pnm_freepamrow(r.row);
  r.row = nullptr;
}

bool read_pnm(std::FILE* f, int channels, bool header_only, PnmRead& r, Image& out) {
  if (!netpbm_step(r, [&] { pnm_readpaminit(f, &r.pam, PAM_STRUCT_SIZE(tuple_type)); })) return false;
  out.width = out.file_width = r.pam.width;
  out.height = out.file_height = r.pam.height;
  out.channels = channels;
  r.data_at = std::ftell(f);
  if (too_many_pixels(static_cast<std::uint64_t>(r.pam.width), static_cast<std::uint64_t>(r.pam.height))) {
    r.too_large = true;  // decode_pnm says so, naming the file
    return true;
  }
  if (header_only) return true;
  out.pixels.resize(static_cast<std::size_t>(r.pam.width) * static_cast<std::size_t>(r.pam.height) *
                    static_cast<std::size_t>(channels));
  return netpbm_step(r, [&] { read_rows(r, channels, out); });
}

}  // namespace

Image decode_pnm(const std::string& file, int channels, bool header_only, bool* whole) {
  const std::unique_ptr<std::FILE, int (*)(std::FILE*)> file_closed(open_image(file), std::fclose);
  std::FILE* f = file_closed.get();
  Image out;
  PnmRead r;
  bool ok = false;
  std::string why;
  {
    const std::lock_guard<std::mutex> lock(netpbm_mutex);
    static std::once_flag handlers;
    std::call_once(handlers, [] {
      pm_setusererrormsgfn(on_error);
      pm_setusermessagefn(on_message);
    });
    message.clear();
    ok = read_pnm(f, channels, header_only, r, out);
    why = message;
  }
  long end = -1;
  if (ok && whole != nullptr && std::fseek(f, 0, SEEK_END) == 0) end = std::ftell(f);
  if (r.too_large) check_pixel_count(file, out.file_width, out.file_height);
  if (!ok && says_out_of_memory(why)) throw std::bad_alloc();  // Note [decoders' out of memory]
  if (!ok) fail(file, "PNM: " + why + " (a truncated or corrupt file)");
  if (whole != nullptr) {
    // Note [image checks at open]: a binary file ends where its header and rows do (a PBM's rows of
    // bits in whole bytes); a plain (text) one is decoded once by check_image.
    const bool bits = r.pam.format == RPBM_FORMAT;
    const bool binary = bits || r.pam.format == RPGM_FORMAT || r.pam.format == RPPM_FORMAT;
    const auto w = static_cast<long>(r.pam.width);
    const long row = bits ? (w + 7) / 8 : w * static_cast<long>(r.pam.depth * r.pam.bytes_per_sample);
    *whole = binary && r.data_at >= 0 && end == r.data_at + row * r.pam.height;
  }
  return out;
}

}  // namespace hpct::image_formats
