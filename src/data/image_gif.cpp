// GIF files through giflib: the first frame's palette indices and its colour table (local, else
// global) made into pixels as Pillow's Image.open(f).convert("RGB") makes them, transparent pixels
// included (Note [GIF pixels as Pillow's]); a file cut short or corrupt refused naming it.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include <gif_lib.h>

#include "data/image_formats.hpp"

namespace hpct::image_formats {

namespace {

// Note [GIF pixels as Pillow's]: Pillow (9.4 and 13 alike, GifImagePlugin) shows a GIF's first frame
// on a canvas of the logical screen's size, grown to hold the frame where the frame reaches past it;
// the canvas outside the frame holds palette index 0, or the transparent index where the frame's
// graphic control extension names one; each index shows the colour the frame's table (its local one,
// else the global one) holds, an index past the table's end black; with no table, or a table that is
// the grey ramp (entry i is (i, i, i): Pillow reads the frame as mode L then), the index itself as
// grey. convert("RGB") keeps a transparent pixel's colour as its table stores it (it drops the
// transparency, as a PNG's alpha: Note [PNG alpha]), not black. So does this, from giflib's indices,
// value for value (test_bitmap_images against Pillow's decode; bitmap_images_pillow13). Pillow 9.4
// shows an index past the table's end as its own grey, (i, i, i); Pillow 13 black, as here. giflib's
// DGifGetLine gives an interlaced frame's rows in the file's order: they are put in place here.

// The file giflib reads, through a FILE*; `cut`: a read asked for bytes past its end.
struct Input {
  std::FILE* f = nullptr;
  bool cut = false;
};

int read_bytes(GifFileType* gif, GifByteType* to, int size) {
  auto* in = static_cast<Input*>(gif->UserData);
  if (size <= 0) return 0;
  const std::size_t got = std::fread(to, 1, static_cast<std::size_t>(size), in->f);
  if (got < static_cast<std::size_t>(size)) in->cut = true;
  return static_cast<int>(got);
}

struct CloseGif {
  void operator()(GifFileType* g) const { DGifCloseFile(g, nullptr); }
};
using Gif = std::unique_ptr<GifFileType, CloseGif>;

struct CloseFile {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

// giflib's error `code` as the reason `file` is refused: a read past the end is a cut file, whatever
// giflib calls it; running out of memory is no bad file (Note [out of memory at the image check]).
[[noreturn]] void refuse(const std::string& file, const Input& in, int code) {
  if (code == D_GIF_ERR_NOT_ENOUGH_MEM) throw std::bad_alloc();
  if (in.cut) fail(file, "GIF: the data ends early (a truncated file)");
  const char* why = code != 0 ? GifErrorString(code) : nullptr;
  fail(file, std::string("GIF: ") + (why != nullptr ? why : "a record giflib cannot read") + " (a corrupt file)");
}

// The first frame as Pillow finds it: the records before its image descriptor read (extensions
// skipped, the last graphic control extension's transparent index kept), the descriptor and its
// table read, giflib left at the frame's pixel data.
struct Frame {
  int left = 0, top = 0, width = 0, height = 0;
  int transparent = -1;  // none
  bool interlaced = false;
  const ColorMapObject* colours = nullptr;  // local, else global (giflib's); none: the index as grey
};

Frame first_frame(GifFileType* gif, const std::string& file, const Input& in) {
  Frame fr;
  for (;;) {
    GifRecordType type = UNDEFINED_RECORD_TYPE;
    if (DGifGetRecordType(gif, &type) == GIF_ERROR) refuse(file, in, gif->Error);
    if (type == TERMINATE_RECORD_TYPE) fail(file, "GIF: no image in the file (a corrupt file)");
    if (type == IMAGE_DESC_RECORD_TYPE) break;
    int code = 0;
    GifByteType* block = nullptr;
    if (DGifGetExtension(gif, &code, &block) == GIF_ERROR) refuse(file, in, gif->Error);
    // A graphic control extension: block[0] its length, block[1] its flags (bit 0: a transparent
    // index is given), block[4] that index; one without the flag keeps an earlier one's, as Pillow.
    if (code == GRAPHICS_EXT_FUNC_CODE && block != nullptr && block[0] >= 4 && (block[1] & 1) != 0)
      fr.transparent = block[4];
    while (block != nullptr)
      if (DGifGetExtensionNext(gif, &block) == GIF_ERROR) refuse(file, in, gif->Error);
  }
  if (DGifGetImageDesc(gif) == GIF_ERROR) refuse(file, in, gif->Error);
  const GifImageDesc& d = gif->Image;
  fr.left = d.Left, fr.top = d.Top, fr.width = d.Width, fr.height = d.Height, fr.interlaced = d.Interlace;
  fr.colours = d.ColorMap != nullptr ? d.ColorMap : gif->SColorMap;
  bool ramp = fr.colours != nullptr;
  for (int i = 0; ramp && i < fr.colours->ColorCount; ++i) {
    const GifColorType& c = fr.colours->Colors[i];
    ramp = c.Red == i && c.Green == i && c.Blue == i;
  }
  if (ramp) fr.colours = nullptr;  // Pillow's mode L: the index as grey
  return fr;
}

// The rows of an interlaced frame of `height` rows in the order the file holds them: every 8th from
// 0, every 8th from 4, every 4th from 2, every 2nd from 1 (GIF89a, appendix E).
std::vector<int> interlaced_rows(int height) {
  std::vector<int> rows;
  rows.reserve(static_cast<std::size_t>(height));
  const int start[4] = {0, 4, 2, 1}, step[4] = {8, 8, 4, 2};
  for (int pass = 0; pass < 4; ++pass)
    for (int y = start[pass]; y < height; y += step[pass]) rows.push_back(y);
  return rows;
}

}  // namespace

Image decode_gif(const std::string& file, int channels, bool header_only, bool* whole) {
  const std::unique_ptr<std::FILE, CloseFile> f(open_image(file));
  Input in{f.get()};
  int code = 0;
  const Gif gif(DGifOpen(&in, read_bytes, &code));
  if (!gif) refuse(file, in, code);
  const Frame fr = first_frame(gif.get(), file, in);
  // Pillow's canvas: the screen, grown to hold the frame (Note [GIF pixels as Pillow's]).
  const std::uint64_t w = std::max<std::uint64_t>(gif->SWidth, static_cast<std::uint64_t>(fr.left) + fr.width);
  const std::uint64_t h = std::max<std::uint64_t>(gif->SHeight, static_cast<std::uint64_t>(fr.top) + fr.height);
  check_pixel_count(file, w, h);  // Note [pixel limit]
  Image out;
  out.width = out.file_width = static_cast<int>(w), out.height = out.file_height = static_cast<int>(h);
  out.channels = channels;
  if (header_only) {
    // Note [image checks at open]: a GIF ends with its trailer, 0x3B.
    if (whole != nullptr) {
      unsigned char last = 0;
      *whole = std::fseek(f.get(), -1, SEEK_END) == 0 && std::fread(&last, 1, 1, f.get()) == 1 && last == 0x3B;
    }
    return out;
  }
  // The palette as 256 colours, black past the table's end; no table: the index as grey.
  unsigned char rgb[256][3] = {};
  for (int i = 0; i < 256; ++i) {
    const bool listed = fr.colours != nullptr && i < fr.colours->ColorCount;
    const GifColorType c = listed ? fr.colours->Colors[i] : GifColorType{0, 0, 0};
    const auto grey = static_cast<GifByteType>(fr.colours == nullptr ? i : 0);
    rgb[i][0] = listed ? c.Red : grey, rgb[i][1] = listed ? c.Green : grey, rgb[i][2] = listed ? c.Blue : grey;
  }
  const std::size_t W = w, H = h;
  std::vector<GifPixelType> index(W * H, static_cast<GifPixelType>(fr.transparent >= 0 ? fr.transparent : 0));
  if (fr.width > 0 && fr.height > 0) {
    const std::vector<int> rows = fr.interlaced ? interlaced_rows(fr.height) : std::vector<int>();
    for (int k = 0; k < fr.height; ++k) {
      const int y = fr.interlaced ? rows[static_cast<std::size_t>(k)] : k;
      GifPixelType* row = &index[(static_cast<std::size_t>(fr.top) + y) * W + static_cast<std::size_t>(fr.left)];
      if (DGifGetLine(gif.get(), row, fr.width) == GIF_ERROR) refuse(file, in, gif->Error);
    }
  }
  out.pixels.resize(W * H * static_cast<std::size_t>(channels));
  std::uint8_t* p = out.pixels.data();
  if (channels == 3)
    for (const GifPixelType i : index) *p++ = rgb[i][0], *p++ = rgb[i][1], *p++ = rgb[i][2];
  else
    for (const GifPixelType i : index) *p++ = grey_of(rgb[i][0], rgb[i][1], rgb[i][2]);
  return out;
}

}  // namespace hpct::image_formats
