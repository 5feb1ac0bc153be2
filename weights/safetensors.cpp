#include "weights/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "core/os.h"
#include "core/check.h"

namespace laptime {
namespace {

using nlohmann::json;

constexpr const char* kMetadataKey = "__metadata__";

struct Unmap {
  std::size_t size = 0;
  void operator()(void* p) const {
    if (p != nullptr) ::munmap(p, size);
  }
};
using Mapping = std::unique_ptr<void, Unmap>;

// "[2, 3]"; a shape from a hostile file can have any number of dimensions, so after the first
// few the rest are counted rather than printed.
std::string format_shape(const std::vector<int64_t>& shape) {
  constexpr std::size_t kShown = 8;
  std::ostringstream os;
  os << '[';
  for (std::size_t i = 0; i < shape.size() && i < kShown; ++i) os << (i ? ", " : "") << shape[i];
  if (shape.size() > kShown) os << ", ... (" << shape.size() << " dimensions)";
  os << ']';
  return os.str();
}

// Safetensors is little-endian whatever the host is; assembling values byte by byte keeps the
// reader correct on any host and free of alignment assumptions about the data section.
template <typename UInt>
UInt load_le(const std::byte* p) {
  UInt v = 0;
  for (std::size_t i = 0; i < sizeof(UInt); ++i) v |= static_cast<UInt>(std::to_integer<uint8_t>(p[i])) << (8 * i);
  return v;
}

template <typename UInt>
void store_le(UInt v, std::byte* p) {
  for (std::size_t i = 0; i < sizeof(UInt); ++i) p[i] = static_cast<std::byte>((v >> (8 * i)) & 0xff);
}

template <typename Float, typename UInt>
Float bits_to(UInt bits) {
  static_assert(sizeof(Float) == sizeof(UInt));
  Float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// bfloat16 is the top half of an IEEE float32, so widening is a shift.
float bf16_to_float(uint16_t h) { return bits_to<float>(static_cast<uint32_t>(h) << 16); }

// IEEE binary16: 1 sign bit, 5 exponent bits (bias 15), 10 mantissa bits. Every half value is
// exactly representable as a float, so the conversion is exact.
float f16_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1f)  // infinity or NaN: all-ones exponent, mantissa (and so NaN payload) kept
    return bits_to<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, which float holds as a normal
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  return bits_to<float>(sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
}

// Untrusted text in a message: at most kExcerptBytes bytes, control characters and bytes that
// are not printable ASCII as \xNN, so a message stays one short line whatever the file holds.
constexpr std::size_t kExcerptBytes = 64;

std::string excerpt(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size() && out.size() < kExcerptBytes; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      static const char* const kHex = "0123456789abcdef";
      out += {'\\', 'x', kHex[c >> 4], kHex[c & 0xf]};
    }
  }
  if (out.size() >= kExcerptBytes && s.size() > kExcerptBytes) {
    out.resize(kExcerptBytes);
    out += "... (" + std::to_string(s.size()) + " bytes)";
  }
  return out;
}

// A JSON value as compact text, cut after about kExcerptBytes characters. Iterative on purpose:
// json::dump() recurses once per nesting level, and a hostile header can nest deeply.
std::string excerpt(const json& value) {
  const auto scalar = [](const json& j) {
    if (j.is_string() && j.get_ref<const std::string&>().size() > kExcerptBytes)
      return json(j.get_ref<const std::string&>().substr(0, kExcerptBytes))
          .dump(-1, ' ', true, json::error_handler_t::replace);
    return j.dump(-1, ' ', true, json::error_handler_t::replace);  // ASCII, never throws
  };
  struct Frame {
    json::const_iterator it, end;
    bool object, first;
  };
  std::string out;
  std::vector<Frame> stack;
  const auto enter = [&](const json& j) {
    if (!j.is_structured()) {
      out += scalar(j);
      return;
    }
    out += j.is_object() ? '{' : '[';
    stack.push_back({j.cbegin(), j.cend(), j.is_object(), true});
  };
  enter(value);
  while (!stack.empty() && out.size() <= kExcerptBytes) {
    Frame& f = stack.back();
    if (f.it == f.end) {
      out += f.object ? '}' : ']';
      stack.pop_back();
      continue;
    }
    if (!f.first) out += ", ";
    f.first = false;
    if (f.object) out += scalar(json(f.it.key())) + ": ";
    const json& child = *f.it;
    ++f.it;
    enter(child);  // may push, invalidating f
  }
  if (out.size() > kExcerptBytes || !stack.empty()) {
    out.resize(std::min(out.size(), kExcerptBytes));
    out += "...";
  }
  return out;
}

// a * b, false when it does not fit in 64 bits.
bool checked_mul(uint64_t a, uint64_t b, uint64_t* out) {
  if (b != 0 && a > std::numeric_limits<uint64_t>::max() / b) return false;
  *out = a * b;
  return true;
}

// A JSON integer as int64, rejecting floats and values beyond int64.
bool as_int64(const json& j, int64_t* out) {
  if (j.is_number_unsigned()) {
    const uint64_t u = j.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
    *out = static_cast<int64_t>(u);
    return true;
  }
  if (j.is_number_integer()) {
    *out = j.get<int64_t>();
    return true;
  }
  return false;
}

// The element count, then x element size in bytes, each product checked as the reference
// reader checks it (a dimension that overflows is refused even if a later one is 0); false
// when either does not fit in 64 bits. Dimensions are non-negative here.
bool element_count(const std::vector<int64_t>& shape, uint64_t* out) {
  uint64_t n = 1;
  for (int64_t d : shape)
    if (!checked_mul(n, static_cast<uint64_t>(d), &n)) return false;
  *out = n;
  return true;
}

bool byte_size(const std::vector<int64_t>& shape, DType dtype, uint64_t* out) {
  uint64_t n = 0;
  return element_count(shape, &n) && checked_mul(n, dtype_size(dtype), out);
}

void require_min_size(const std::string& source, std::size_t size) {
  require(size >= 8, source + " is " + std::to_string(size) +
                         " bytes long, too short for a safetensors file (the header length "
                         "field alone takes 8 bytes)");
}

TensorInfo parse_entry(const std::string& name, const json& entry, const std::string& source, const std::byte* data,
                       uint64_t data_size) {
  const std::string where = "tensor '" + excerpt(name) + "' in " + source;
  require(entry.is_object(), where + " is described by a JSON " + entry.type_name() + " instead of an object");
  for (const char* field : {"dtype", "shape", "data_offsets"})
    require(entry.contains(field), where + " has no '" + field + "' field");

  TensorInfo t;
  t.name = name;
  const json& dtype = entry["dtype"];
  require(dtype.is_string() && parse_dtype(dtype.get<std::string>(), &t.dtype),
          where + " has dtype " + excerpt(dtype) +
              ", which laptime does not read (it reads F32, F16, BF16, F64, I32, I64, U8)");

  const json& shape = entry["shape"];
  require(shape.is_array(), where + " has a shape that is not a list of integers");
  for (const json& d : shape) {
    int64_t v = 0;
    require(as_int64(d, &v), where + " has a shape that is not a list of integers");
    t.shape.push_back(v);
  }
  require(std::none_of(t.shape.begin(), t.shape.end(), [](int64_t d) { return d < 0; }),
          where + " has a negative dimension in shape " + format_shape(t.shape));

  const json& offsets = entry["data_offsets"];
  int64_t begin = 0, end = 0;
  require(offsets.is_array() && offsets.size() == 2 && as_int64(offsets[0], &begin) && as_int64(offsets[1], &end) &&
              begin >= 0 && end >= 0,
          where + " has data_offsets " + excerpt(offsets) + " instead of two non-negative integers [begin, end]");
  const std::string range = "[" + std::to_string(begin) + ", " + std::to_string(end) + "]";
  require(begin <= end, where + " has data_offsets " + range + " whose begin is after its end");
  require(static_cast<uint64_t>(end) <= data_size,
          where + " ends at byte " + std::to_string(end) + " of the data section, which is only " +
              std::to_string(data_size) + " bytes long; the file is truncated or corrupt");

  uint64_t expected = 0;
  require(byte_size(t.shape, t.dtype, &expected),
          where + " has shape " + format_shape(t.shape) + " whose size overflows 64 bits; the file is corrupt");
  const auto actual = static_cast<uint64_t>(end - begin);
  require(expected == actual, where + " has shape " + format_shape(t.shape) + " of " + dtype_name(t.dtype) + " (" +
                                  std::to_string(expected) + " bytes) but data_offsets " + range + " span " +
                                  std::to_string(actual) + " bytes");
  t.data = data + begin;
  t.nbytes = static_cast<std::size_t>(actual);
  return t;
}

std::map<std::string, std::string> parse_metadata(const json& meta, const std::string& source) {
  require(meta.is_object(), std::string(kMetadataKey) + " in " + source + " is a JSON " + meta.type_name() +
                                " instead of an object of strings");
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : meta.items()) {
    require(value.is_string(), std::string(kMetadataKey) + " key '" + excerpt(key) + "' in " + source +
                                   " holds a JSON " + value.type_name() +
                                   ", but safetensors metadata values must be strings");
    out.emplace(key, value.get<std::string>());
  }
  return out;
}

}  // namespace

int64_t TensorInfo::numel() const {
  uint64_t n = 0;
  require(std::none_of(shape.begin(), shape.end(), [](int64_t d) { return d < 0; }) && element_count(shape, &n) &&
              n <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()),
          "tensor '" + excerpt(name) + "' has shape " + format_shape(shape) +
              ", whose element count is negative or overflows 64 bits");
  return static_cast<int64_t>(n);
}

struct SafeTensors::Impl {
  std::string source;
  // The image: a read-only mapping from open(), or the buffer handed to from_bytes().
  Mapping mapping{nullptr, Unmap{}};
  std::vector<std::byte> owned;

  std::vector<TensorInfo> tensors;  // in data-offset order
  std::unordered_map<std::string, std::size_t> index;
  std::map<std::string, std::string> metadata;

  void parse(const std::byte* bytes, std::size_t size);
};

void SafeTensors::Impl::parse(const std::byte* bytes, std::size_t size) {
  require_min_size(source, size);
  const uint64_t header_size = load_le<uint64_t>(bytes);
  require(header_size <= kMaxHeaderBytes, source + " declares a " + std::to_string(header_size) +
                                              "-byte header, over the " + std::to_string(kMaxHeaderBytes) +
                                              "-byte limit; it is corrupt or not a safetensors file");
  require(header_size <= size - 8, source + " declares a " + std::to_string(header_size) + "-byte header but only " +
                                       std::to_string(size - 8) +
                                       " bytes follow the length field; the file is truncated");

  const char* header_begin = reinterpret_cast<const char*>(bytes + 8);
  const char* header_end = header_begin + header_size;
  // nlohmann ends its input at a NUL byte, so `{...}\0anything` would parse as `{...}`; the
  // reference reader (serde_json) allows only whitespace after the JSON and refuses it. A NUL
  // is valid nowhere in JSON text (inside a string it must be escaped), so any NUL is an error
  // at its position (1-based, as nlohmann counts header bytes).
  if (const void* nul = std::memchr(header_begin, '\0', static_cast<std::size_t>(header_size)))
    throw Error("the header of " + source + " is not valid JSON (error at header byte " +
                std::to_string(static_cast<const char*>(nul) - header_begin + 1) + ")");
  // nlohmann keeps the last of duplicate keys silently; a key given twice is ambiguous, so
  // the keys are watched as they are parsed: tensor names at the top level, and the keys of
  // each tensor's entry and of __metadata__ one level down (the reference refuses "dtype"
  // twice in one entry; a metadata key twice would mean two values for one setting).
  // The nesting depth is bounded as it is parsed: a valid header needs three levels, and
  // anything recursive on a 100,000-deep value (printing it, copying it) would run out of stack.
  std::unordered_set<std::string> seen, seen_in_entry;
  std::string duplicate, entry_name, duplicate_in_entry, duplicated_entry;
  const json::parser_callback_t watch_keys = [&](int depth, json::parse_event_t event, json& parsed) {
    if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) &&
        depth >= static_cast<int>(kMaxHeaderDepth))
      throw Error("the header of " + source + " nests JSON arrays or objects more than " +
                  std::to_string(kMaxHeaderDepth) + " deep; it is corrupt or not a safetensors file");
    if (event != json::parse_event_t::key) return true;
    const std::string& key = parsed.get_ref<const std::string&>();
    if (depth == 1) {  // a tensor name or __metadata__; the keys below are its entry's
      if (!seen.insert(key).second && duplicate.empty()) duplicate = key;
      entry_name = key;
      seen_in_entry.clear();
    } else if (depth == 2 && !seen_in_entry.insert(key).second && duplicate_in_entry.empty()) {
      duplicate_in_entry = key;
      duplicated_entry = entry_name;
    }
    return true;
  };
  json header;
  try {
    header = json::parse(header_begin, header_end, watch_keys);
  } catch (const json::parse_error& e) {
    const bool utf8 = std::strstr(e.what(), "UTF-8") != nullptr;
    throw Error("the header of " + source + " is not valid " + (utf8 ? "UTF-8" : "JSON") + " (error at header byte " +
                std::to_string(e.byte) + ")");
  } catch (const json::out_of_range&) {
    throw Error("the header of " + source + " is not valid JSON (a number is out of range)");
  }
  require(header.is_object(), "the header of " + source + " is a JSON " + header.type_name() + " instead of an object");
  require(duplicate.empty(), "the header of " + source + " names '" + excerpt(duplicate) + "' twice");
  require(
      duplicate_in_entry.empty(),
      (duplicated_entry == kMetadataKey ? std::string(kMetadataKey) : "tensor '" + excerpt(duplicated_entry) + "'") +
          " in " + source + " names '" + excerpt(duplicate_in_entry) + "' twice");

  const std::byte* data = bytes + 8 + header_size;
  const uint64_t data_size = size - 8 - header_size;
  for (const auto& [key, value] : header.items()) {
    if (key == kMetadataKey)
      metadata = parse_metadata(value, source);
    else
      tensors.push_back(parse_entry(key, value, source, data, data_size));
  }

  // The reference reader's layout rule: sorted by offsets, the tensors tile the data section
  // exactly, each starting where the previous one ends, the first at 0 and the last at the end
  // of the file. Anything else (an overlap, a hole, bytes after the last tensor) is refused.
  std::sort(tensors.begin(), tensors.end(), [](const TensorInfo& a, const TensorInfo& b) {
    return a.data != b.data ? a.data < b.data : a.nbytes < b.nbytes;
  });
  const auto span = [&](const TensorInfo& x) {
    return "[" + std::to_string(x.data - data) + ", " + std::to_string(x.data - data + x.nbytes) + ")";
  };
  uint64_t covered = 0;  // the data section is tiled up to here
  const TensorInfo* previous = nullptr;
  for (const TensorInfo& t : tensors) {
    const auto begin = static_cast<uint64_t>(t.data - data);
    if (begin < covered)  // then `previous` ends at `covered`, after t begins
      throw Error("tensors '" + excerpt(previous->name) + "' and '" + excerpt(t.name) + "' in " + source +
                  " overlap in the data section (bytes " + span(*previous) + " and " + span(t) + ")");
    require(begin == covered, "bytes [" + std::to_string(covered) + ", " + std::to_string(begin) +
                                  ") of the data section of " + source + " belong to no tensor (a hole before '" +
                                  excerpt(t.name) + "'); safetensors files pack tensors without gaps");
    covered = begin + t.nbytes;
    previous = &t;
  }
  require(covered == data_size, source + " has " + std::to_string(data_size - covered) +
                                    (data_size - covered == 1 ? " byte" : " bytes") +
                                    " after the last tensor's data (the data section is " + std::to_string(data_size) +
                                    " bytes, its tensors end at byte " + std::to_string(covered) +
                                    "); the file is corrupt or has something appended");
  for (std::size_t i = 0; i < tensors.size(); ++i) index.emplace(tensors[i].name, i);
}

SafeTensors::SafeTensors(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SafeTensors::SafeTensors(SafeTensors&&) noexcept = default;
SafeTensors& SafeTensors::operator=(SafeTensors&&) noexcept = default;
SafeTensors::~SafeTensors() = default;

SafeTensors SafeTensors::open(const std::string& path) {
  auto impl = std::make_unique<Impl>();
  impl->source = path;
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever; it is
  // refused by the fstat below instead (the flag does not affect mmap of a regular file).
  const FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  require(fd.get() >= 0, "cannot open weights file " + path + ": " + std::strerror(errno));
  struct stat st {};
  require(::fstat(fd.get(), &st) == 0, "cannot read weights file " + path + ": " + std::strerror(errno));
  require(S_ISREG(st.st_mode), path + " is not a regular file, so it cannot be a safetensors file");
  const auto size = static_cast<std::size_t>(st.st_size);
  // Checked before mapping because mmap rejects an empty range.
  require_min_size(path, size);
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
  require(p != MAP_FAILED, "cannot map weights file " + path + ": " + std::strerror(errno));
  impl->mapping = Mapping(p, Unmap{size});
  impl->parse(static_cast<const std::byte*>(p), size);
  return SafeTensors(std::move(impl));
}

SafeTensors SafeTensors::from_bytes(std::vector<std::byte> bytes, const std::string& source) {
  auto impl = std::make_unique<Impl>();
  impl->source = source;
  impl->owned = std::move(bytes);
  impl->parse(impl->owned.data(), impl->owned.size());
  return SafeTensors(std::move(impl));
}

const std::string& SafeTensors::source() const { return impl_->source; }
const std::vector<TensorInfo>& SafeTensors::tensors() const { return impl_->tensors; }

const TensorInfo* SafeTensors::find(const std::string& name) const {
  const auto it = impl_->index.find(name);
  return it == impl_->index.end() ? nullptr : &impl_->tensors[it->second];
}

const TensorInfo& SafeTensors::get(const std::string& name) const {
  const TensorInfo* t = find(name);
  require(t != nullptr, "tensor '" + name + "' is missing from " + impl_->source);
  return *t;
}

const TensorInfo& SafeTensors::get(const std::string& name, const std::vector<int64_t>& shape) const {
  const TensorInfo& t = get(name);
  require(t.shape == shape, "tensor '" + name + "' in " + impl_->source + " has shape " + format_shape(t.shape) +
                                ", expected " + format_shape(shape));
  return t;
}

std::vector<float> SafeTensors::to_float(const TensorInfo& t) const {
  const auto n = static_cast<std::size_t>(t.numel());
  std::vector<float> out(n);
  const std::byte* p = t.data;
  switch (t.dtype) {
    case DType::F32:
      for (std::size_t i = 0; i < n; ++i) out[i] = bits_to<float>(load_le<uint32_t>(p + 4 * i));
      return out;
    case DType::F64:
      for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(bits_to<double>(load_le<uint64_t>(p + 8 * i)));
      return out;
    case DType::F16:
      for (std::size_t i = 0; i < n; ++i) out[i] = f16_to_float(load_le<uint16_t>(p + 2 * i));
      return out;
    case DType::BF16:
      for (std::size_t i = 0; i < n; ++i) out[i] = bf16_to_float(load_le<uint16_t>(p + 2 * i));
      return out;
    case DType::I32:
    case DType::I64:
    case DType::U8:
    case DType::F8E4M3:  // never parsed from a file (core/dtype.h)
      break;
  }
  throw Error("tensor '" + excerpt(t.name) + "' in " + impl_->source + " holds " + dtype_name(t.dtype) +
              " integers, which cannot be read as weights (F32, F16, BF16 or F64 expected)");
}

const std::map<std::string, std::string>& SafeTensors::metadata() const { return impl_->metadata; }

const std::string& SafeTensors::meta(const std::string& key) const {
  const auto it = impl_->metadata.find(key);
  require(it != impl_->metadata.end(), "metadata key '" + key + "' is missing from " + impl_->source);
  return it->second;
}

// from_chars rather than strtol/strtod: it ignores the locale and reports trailing garbage.
int64_t SafeTensors::meta_int(const std::string& key) const {
  const std::string& value = meta(key);
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  require(ec == std::errc() && end == value.data() + value.size(), "metadata key '" + excerpt(key) + "' in " +
                                                                       impl_->source + " has value '" + excerpt(value) +
                                                                       "', which is not an integer");
  return v;
}

double SafeTensors::meta_double(const std::string& key) const {
  const std::string& value = meta(key);
  double v = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  require(ec == std::errc() && end == value.data() + value.size() && std::isfinite(v),
          "metadata key '" + excerpt(key) + "' in " + impl_->source + " has value '" + excerpt(value) +
              "', which is not a finite number");
  return v;
}

std::vector<std::byte> serialize_safetensors(const std::vector<TensorBlob>& tensors,
                                             const std::map<std::string, std::string>& metadata) {
  // Widest element type first, as the reference writer does: with the header padded to a
  // multiple of 8, every tensor then starts aligned to its own element size.
  std::vector<const TensorBlob*> order;
  for (const TensorBlob& t : tensors) order.push_back(&t);
  std::stable_sort(order.begin(), order.end(), [](const TensorBlob* a, const TensorBlob* b) {
    return dtype_size(a->dtype) > dtype_size(b->dtype);
  });

  json header = json::object();
  if (!metadata.empty()) header[kMetadataKey] = metadata;
  uint64_t offset = 0;
  for (const TensorBlob* t : order) {
    require(t->name != kMetadataKey && !header.contains(t->name),
            "cannot serialize tensor '" + t->name + "': the name is reserved or given twice");
    require(std::none_of(t->shape.begin(), t->shape.end(), [](int64_t d) { return d < 0; }),
            "cannot serialize tensor '" + t->name + "': shape " + format_shape(t->shape) + " has a negative dimension");
    uint64_t expected = 0;
    require(byte_size(t->shape, t->dtype, &expected) && expected == t->bytes.size(),
            "cannot serialize tensor '" + t->name + "': shape " + format_shape(t->shape) + " of " +
                dtype_name(t->dtype) + " does not match its " + std::to_string(t->bytes.size()) + " bytes");
    header[t->name] = {
        {"dtype", dtype_name(t->dtype)}, {"shape", t->shape}, {"data_offsets", {offset, offset + expected}}};
    offset += expected;
  }

  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::vector<std::byte> image(8 + text.size() + offset);
  store_le<uint64_t>(text.size(), image.data());
  std::memcpy(image.data() + 8, text.data(), text.size());
  std::byte* data = image.data() + 8 + text.size();
  for (const TensorBlob* t : order) {
    std::copy(t->bytes.begin(), t->bytes.end(), data);
    data += t->bytes.size();
  }
  return image;
}

}  // namespace laptime
