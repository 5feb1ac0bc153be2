// A trace file read front to back in chunks, gunzipped as it is read when it starts with gzip's
// magic bytes (1f 8b): the reader of a several-GB profiler trace never holds the document, only
// one chunk of it. Concatenated gzip members (`cat a.gz b.gz`) read as one stream, as gzip does.
//
// Bounded on hostile input: past the first 64 MiB, a stream that inflates to more than 200 times
// the compressed bytes it has read is a gzip bomb (real traces inflate 10 to 20 times; deflate's own
// ceiling is about 1032), refused in one sentence before it costs the time of inflating it.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace laptime::trace {

// What a file's first bytes say it is.
enum class FileMagic { Empty, Sqlite, Gzip, Json, Other };

// The first bytes of `path`, gunzipped when gzip: Sqlite, Gzip whose content begins like JSON
// (`{` or `[` after white space and a UTF-8 byte order mark) is Json, plain text likewise.
// Throws TraceError when the file cannot be opened.
FileMagic sniff_file(const std::string& path);

class ByteSource {
 public:
  // Opens `path` (a TraceError naming it when it cannot be). `name` is what sentences call it.
  explicit ByteSource(const std::string& path);
  ~ByteSource();
  ByteSource(const ByteSource&) = delete;
  ByteSource& operator=(const ByteSource&) = delete;

  // The next chunk of the (decoded) content; empty at the end. Throws TraceError for a read error,
  // a damaged or cut gzip stream, or a gzip bomb.
  std::string_view next();

  bool gzipped() const { return gzip_; }
  uint64_t decoded() const { return decoded_; }  // content bytes handed out so far
  uint64_t file_bytes() const { return file_bytes_; }

  // Past the first kBombFloor decoded bytes, more than kBombRatio times the compressed input is refused.
  static constexpr uint64_t kBombFloor = uint64_t{64} << 20;
  static constexpr uint64_t kBombRatio = 200;

 private:
  bool fill_input();  // false at the end of the file
  std::string path_;
  std::FILE* f_ = nullptr;
  bool gzip_ = false;
  bool stream_open_ = false;  // inside a gzip member
  bool at_eof_ = false;
  z_stream z_{};
  std::vector<unsigned char> in_, out_;
  uint64_t decoded_ = 0, consumed_ = 0, file_bytes_ = 0;
};

// A ByteSource as RapidJSON's input stream (its Stream concept: Peek, Take, Tell): a chunk at a
// time, a NUL after the last byte, as RapidJSON's own FileReadStream.
class JsonStream {
 public:
  typedef char Ch;
  explicit JsonStream(ByteSource& src) : src_(src) { refill(); }
  Ch Peek() const { return *cur_; }
  Ch Take() {
    const Ch c = *cur_;
    if (cur_ < last_)
      ++cur_;
    else
      refill();
    return c;
  }
  size_t Tell() const { return static_cast<size_t>(base_ + static_cast<uint64_t>(cur_ - begin_)); }
  bool at_end() const { return eof_; }
  // Not an output stream.
  Ch* PutBegin() { return nullptr; }
  void Put(Ch) {}
  void Flush() {}
  size_t PutEnd(Ch*) { return 0; }

 private:
  void refill() {
    if (eof_) return;
    if (begin_ != &nul_) base_ += static_cast<uint64_t>(last_ - begin_) + 1;
    const std::string_view chunk = src_.next();
    if (chunk.empty()) {
      eof_ = true;
      begin_ = cur_ = last_ = &nul_;
      return;
    }
    begin_ = cur_ = chunk.data();
    last_ = chunk.data() + chunk.size() - 1;
  }
  ByteSource& src_;
  const Ch nul_ = '\0';
  const Ch* begin_ = &nul_;
  const Ch* cur_ = &nul_;
  const Ch* last_ = &nul_;
  uint64_t base_ = 0;
  bool eof_ = false;
};

}  // namespace laptime::trace
