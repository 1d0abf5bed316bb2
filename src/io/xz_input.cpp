// xz's decoder for text tables (compressed_input.hpp): streams one after another, blocks inside
// each, a restart point at the start of a block (Note [xz blocks]); the loop is stream_decoder.hpp's.
#include <lzma.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <string>

#include "io/compressed_input.hpp"
#include "io/stream_decoder.hpp"

namespace hpct::io {
namespace {

using namespace detail;  // stream_decoder.hpp: FileBytes, Step, StreamDecoder, truncated

// Note [xz blocks]
// An xz file is streams one after another (`cat a.xz b.xz`, pixz's), each blocks then an index of
// them (offset and sizes), a footer, and zero padding; `xz -T2` (or more threads), `xz --block-size`
// and xz >= 5.6's default (-T0) write blocks of 3 dictionary sizes (24 MiB of text at -6), each
// decodable alone from its header. So the restart points of an xz table are block starts: the scan reads the
// file's indexes with liblzma's file-info decoder (from the end of the file backwards: a few small
// reads, not a decode) and keeps a point at the start of each block at least 1 MiB of text after
// the last (RestartPoint::bits holds the check of the block's stream, which its header does not
// say). The scan itself still decodes the whole file with the stream decoder, which checks every
// block, index and footer: damage is found there, naming the line before it; a file whose indexes
// cannot be read (cut short, damaged, bytes after the last stream) gets no point and is read from
// its start, as a single-block file is. A read from a point decodes block after block with the
// block decoder (lzma_block_header_decode, lzma_block_decoder: it checks the block's CRC or SHA-256
// as the stream decoder does); at the stream's index it passes over the index and footer and goes
// on with the stream decoder for the streams after.
DamagedData damaged(lzma_ret r) {
  return DamagedData(std::string("the xz data is damaged (liblzma: ") +
                     (r == LZMA_DATA_ERROR     ? "corrupt data"
                      : r == LZMA_FORMAT_ERROR ? "not xz data"
                      : r == LZMA_MEM_ERROR    ? "out of memory"
                                               : "unsupported options or a failed check") +
                     ")");
}

struct Xz {
  using Stream = lzma_stream;
  static constexpr const char* name = "xz";

  bool in_block = false;               // decoding one block from its header, not a stream
  lzma_check check = LZMA_CHECK_NONE;  // the check of the block's stream (in_block)

  void init(Stream& s, FileBytes& in) {
    if (!in_block) {
      if (lzma_stream_decoder(&s, UINT64_MAX, 0) != LZMA_OK) throw std::bad_alloc();
      return;
    }
    unsigned char header[LZMA_BLOCK_HEADER_SIZE_MAX];
    if (!in.take(header, 1)) throw truncated(name);
    lzma_filter filters[LZMA_FILTERS_MAX + 1];
    block_ = lzma_block{};
    block_.version = 1;
    block_.check = check;
    block_.filters = filters;
    block_.header_size = lzma_block_header_size_decode(header[0]);
    if (!in.take(header + 1, block_.header_size - 1)) throw truncated(name);
    lzma_ret r = lzma_block_header_decode(&block_, nullptr, header);
    if (r != LZMA_OK) throw damaged(r);
    r = lzma_block_decoder(&s, &block_);  // copies the filters' options
    lzma_filters_free(filters, nullptr);
    block_.filters = nullptr;
    if (r != LZMA_OK) throw damaged(r);
  }
  static void end(Stream& s) { lzma_end(&s); }
  static Step step(Stream& s, bool at_end) {
    const lzma_ret r = lzma_code(&s, at_end ? LZMA_FINISH : LZMA_RUN);
    if (r == LZMA_STREAM_END) return Step::stream_end;
    if (r == LZMA_OK) return Step::more;
    if (r == LZMA_BUF_ERROR) throw truncated(name);
    throw damaged(r);
  }
  // After a stream's end: its padding (zero bytes), then another stream's header or the end; other
  // bytes are ignored. After a block's end: the next block's header, or the stream's index (its
  // first byte 0) and footer, then as after a stream.
  bool another_stream(FileBytes& in) {
    unsigned char c = 0;
    if (in_block) {
      if (!in.peek(c)) throw truncated(name);
      if (c != 0) return true;
      pass_index_and_footer(in);
      in_block = false;
    }
    while (in.peek(c) && c == 0) in.consumed(1);
    return in.peek(c) && c == 0xfd;
  }
  // A point at a block (the start of the file is a stream's).
  void restart(const RestartPoint& p) {
    in_block = p.in > 0;
    check = static_cast<lzma_check>(p.bits);
  }

 private:
  // The block decoder keeps a pointer to its block's options until the block's end (it copies the
  // check there to compare): they live here, not on the stack of init().
  lzma_block block_{};

  void pass_index_and_footer(FileBytes& in) const {
    lzma_stream s = LZMA_STREAM_INIT;
    lzma_index* index = nullptr;
    if (lzma_index_decoder(&s, &index, UINT64_MAX) != LZMA_OK) throw std::bad_alloc();
    lzma_ret r = LZMA_OK;
    while (r == LZMA_OK) {
      if (in.left() == 0 && !in.fill()) {
        lzma_end(&s);
        throw truncated(name);
      }
      s.next_in = in.next();
      s.avail_in = in.left();
      r = lzma_code(&s, LZMA_RUN);
      in.consumed(in.left() - s.avail_in);
    }
    lzma_end(&s);
    if (r != LZMA_STREAM_END) throw damaged(r);
    lzma_index_end(index, nullptr);
    unsigned char footer[LZMA_STREAM_HEADER_SIZE];
    if (!in.take(footer, sizeof footer)) throw truncated(name);
    lzma_stream_flags flags{};
    r = lzma_stream_footer_decode(&flags, footer);
    if (r != LZMA_OK) throw damaged(r);
    if (flags.check != check) throw damaged(LZMA_DATA_ERROR);
  }
};

// The file's indexes, read with liblzma's file-info decoder (it asks for the bytes it needs); null
// where they cannot be read. The file is left at its start.
lzma_index* read_indexes(std::FILE* f) {
  lzma_index* index = nullptr;
  if (fseeko(f, 0, SEEK_END) != 0) return nullptr;
  const off_t size = ftello(f);
  lzma_stream s = LZMA_STREAM_INIT;
  if (size > 0 && lzma_file_info_decoder(&s, &index, UINT64_MAX, static_cast<std::uint64_t>(size)) == LZMA_OK) {
    std::vector<std::uint8_t> buf(1 << 16);
    if (fseeko(f, 0, SEEK_SET) == 0) {
      while (true) {
        if (s.avail_in == 0) {
          const std::size_t n = std::fread(buf.data(), 1, buf.size(), f);
          if (n == 0) break;
          s.next_in = buf.data();
          s.avail_in = n;
        }
        const lzma_ret r = lzma_code(&s, LZMA_RUN);
        if (r == LZMA_SEEK_NEEDED) {
          s.avail_in = 0;
          if (fseeko(f, static_cast<off_t>(s.seek_pos), SEEK_SET) != 0) break;
          continue;
        }
        if (r != LZMA_OK) break;  // LZMA_STREAM_END: `index` is set
      }
    }
  }
  lzma_end(&s);
  std::clearerr(f);
  if (fseeko(f, 0, SEEK_SET) != 0)
    throw DamagedData(std::string("cannot seek back to the start of the file (") + std::strerror(errno) + ")");
  return index;
}

}  // namespace

std::unique_ptr<Decoder> xz_decoder(std::FILE* f, std::vector<RestartPoint>* record, std::uint64_t spacing) {
  if (record) {
    if (lzma_index* index = read_indexes(f)) {
      lzma_index_iter it;
      lzma_index_iter_init(&it, index);
      std::uint64_t last = 0;
      while (!lzma_index_iter_next(&it, LZMA_INDEX_ITER_NONEMPTY_BLOCK) && it.stream.flags) {
        const std::uint64_t out = it.block.uncompressed_file_offset;
        if (out - last < spacing) continue;
        record->push_back(
            RestartPoint{out, it.block.compressed_file_offset, static_cast<int>(it.stream.flags->check), {}});
        last = out;
      }
      lzma_index_end(index, nullptr);
    }
  }
  // The points are the blocks': none at stream starts (a stream's first block is one).
  return std::make_unique<StreamDecoder<Xz>>(f, nullptr, spacing);
}

}  // namespace hpct::io
