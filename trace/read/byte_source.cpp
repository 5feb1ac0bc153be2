#include "trace/read/byte_source.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "trace/model/error.h"
#include "trace/model/format.h"
#include "trace/model/text.h"

namespace laptime::trace {
namespace {

constexpr size_t kInChunk = size_t{256} << 10;
constexpr size_t kOutChunk = size_t{1} << 20;

bool is_gzip_magic(const unsigned char* p, size_t n) { return n >= 2 && p[0] == 0x1f && p[1] == 0x8b; }

// `{` or `[` after white space and an optional UTF-8 byte order mark.
bool begins_like_json(std::string_view s) {
  if (s.size() >= 3 && s.compare(0, 3, "\xEF\xBB\xBF") == 0) s.remove_prefix(3);
  for (char c : s) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    return c == '{' || c == '[';
  }
  return false;
}

}  // namespace

FileMagic sniff_file(const std::string& path) {
  ByteSource src(path);
  if (src.file_bytes() == 0) return FileMagic::Empty;
  std::string head;
  // Enough decoded bytes to see past leading white space; an inflate error here is not this
  // function's to report: the file is gzip, and the reader says what is wrong with it.
  try {
    for (std::string_view chunk; head.size() < 4096 && !(chunk = src.next()).empty();)
      head.append(chunk.substr(0, 4096 - head.size()));
  } catch (const TraceError&) {
    return FileMagic::Gzip;
  }
  if (!src.gzipped() && head.size() >= 16 && std::memcmp(head.data(), "SQLite format 3", 16) == 0)
    return FileMagic::Sqlite;
  if (begins_like_json(head)) return FileMagic::Json;
  return src.gzipped() ? FileMagic::Gzip : FileMagic::Other;
}

ByteSource::ByteSource(const std::string& path) : path_(path) {
  f_ = std::fopen(path.c_str(), "rb");
  if (!f_) throw TraceError("cannot open " + escape_name(path) + ": no such file, or it is not readable.");
  struct stat st {};
  const bool regular = fstat(fileno(f_), &st) == 0 && S_ISREG(st.st_mode);
  if (regular) file_bytes_ = static_cast<uint64_t>(st.st_size);
  // A small file reads in one small buffer; the decoder's buffer only for gzip.
  in_.resize(regular ? static_cast<size_t>(std::clamp<uint64_t>(file_bytes_ + 1, 4096, kInChunk)) : kInChunk);
  fill_input();
  gzip_ = is_gzip_magic(z_.next_in, z_.avail_in);
  if (gzip_) {
    out_.resize(kOutChunk);
    if (inflateInit2(&z_, 16 + MAX_WBITS) != Z_OK)
      throw TraceError("cannot start zlib to read " + escape_name(path) + ".");
    stream_open_ = true;
  }
}

ByteSource::~ByteSource() {
  if (gzip_) inflateEnd(&z_);
  if (f_) std::fclose(f_);
}

bool ByteSource::fill_input() {
  if (at_eof_) return false;
  const size_t n = std::fread(in_.data(), 1, in_.size(), f_);
  if (n < in_.size()) {
    if (std::ferror(f_)) throw TraceError("cannot read " + escape_name(path_) + ": " + std::strerror(errno) + ".");
    at_eof_ = true;
  }
  z_.next_in = in_.data();
  z_.avail_in = static_cast<uInt>(n);
  consumed_ += n;
  return n > 0;
}

std::string_view ByteSource::next() {
  if (!gzip_) {
    // The bytes fill_input() read first are handed out before any more are read.
    if (z_.avail_in == 0 && !fill_input()) return {};
    const std::string_view chunk(reinterpret_cast<const char*>(z_.next_in), z_.avail_in);
    z_.avail_in = 0;
    decoded_ += chunk.size();
    return chunk;
  }
  for (;;) {
    if (z_.avail_in == 0 && !fill_input()) {
      if (stream_open_)
        throw TraceError(escape_name(path_) + " ends in the middle of its gzip stream (" +
                         detail::format("%llu", static_cast<unsigned long long>(file_bytes_)) +
                         " bytes): the file was cut short, or is still being written.");
      return {};
    }
    if (!stream_open_) {
      // Between members: another member, or padding of zero bytes (as gzip accepts).
      while (z_.avail_in > 0 && *z_.next_in == 0) ++z_.next_in, --z_.avail_in;
      if (z_.avail_in == 0) continue;
      if (inflateReset(&z_) != Z_OK) throw TraceError("cannot restart zlib to read " + escape_name(path_) + ".");
      stream_open_ = true;
    }
    z_.next_out = out_.data();
    z_.avail_out = static_cast<uInt>(out_.size());
    const int rc = inflate(&z_, Z_NO_FLUSH);
    const size_t produced = out_.size() - z_.avail_out;
    if (rc == Z_STREAM_END) {
      stream_open_ = false;
    } else if (rc != Z_OK && !(rc == Z_BUF_ERROR && produced > 0)) {
      const uint64_t at = consumed_ - z_.avail_in;
      throw TraceError(escape_name(path_) + " is gzip but its stream is damaged at byte " +
                       detail::format("%llu", static_cast<unsigned long long>(at)) +
                       " (zlib: " + escape_name(z_.msg ? z_.msg : "error " + std::to_string(rc)) + ").");
    }
    decoded_ += produced;
    const uint64_t read = consumed_ - z_.avail_in;
    if (decoded_ > kBombFloor && decoded_ > kBombRatio * read)
      throw TraceError(escape_name(path_) + " inflates to more than " + std::to_string(kBombRatio) +
                       " times its compressed size (" +
                       detail::format("%llu", static_cast<unsigned long long>(decoded_ >> 20)) + " MiB from " +
                       detail::format("%llu", static_cast<unsigned long long>(read >> 10)) +
                       " KiB so far): a gzip bomb, not a profiler's trace.");
    if (produced > 0) return {reinterpret_cast<const char*>(out_.data()), produced};
  }
}

}  // namespace laptime::trace
