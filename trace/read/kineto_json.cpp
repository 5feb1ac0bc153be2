#include "trace/read/kineto_json.h"

#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "trace/model/format.h"
#include "trace/model/progress.h"
#include "trace/model/text.h"
#include "trace/model/validate.h"
#include "trace/read/byte_source.h"

namespace laptime::trace {

TimeText micros_to_ns(std::string_view s, Ns* ns) {
  size_t i = 0;
  if (i < s.size() && s[i] == '-') {
    // Negative: no time of a capture; "-0" and "-0.0" are zero all the same.
    bool nonzero = false;
    for (char c : s.substr(1)) {
      if (c == 'e' || c == 'E') break;
      nonzero = nonzero || (c >= '1' && c <= '9');
    }
    if (nonzero) return TimeText::OutOfRange;
    ++i;
  }
  // Digits of the mantissa without its point, and where the point sits among them.
  std::string_view digits_int, digits_frac;
  const size_t a = i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  digits_int = s.substr(a, i - a);
  if (i < s.size() && s[i] == '.') {
    const size_t b = ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    digits_frac = s.substr(b, i - b);
    if (digits_frac.empty()) return TimeText::NotNumber;
  }
  if (digits_int.empty()) return TimeText::NotNumber;
  int64_t exponent = 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool neg = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    if (i == s.size()) return TimeText::NotNumber;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i)
      exponent = std::min<int64_t>(exponent * 10 + (s[i] - '0'), 100000);
    if (neg) exponent = -exponent;
  }
  if (i != s.size()) return TimeText::NotNumber;
  // Nanoseconds: the point moves three places right, then `exponent` more.
  const int64_t point = static_cast<int64_t>(digits_int.size()) + 3 + exponent;
  unsigned __int128 v = 0;
  int64_t k = 0;
  auto digit = [&](int64_t at) -> int {
    const int64_t n_int = static_cast<int64_t>(digits_int.size());
    if (at < n_int) return digits_int[at] - '0';
    if (at - n_int < static_cast<int64_t>(digits_frac.size())) return digits_frac[at - n_int] - '0';
    return 0;
  };
  const int64_t n_digits = static_cast<int64_t>(digits_int.size() + digits_frac.size());
  // Leading zeros do not count toward the size; past 20 significant digits before the point the
  // value is out of range whatever they are.
  for (k = 0; k < point; ++k) {
    if (k >= n_digits) {
      // Only zeros remain: multiply by ten per place, stopping once out of range.
      v *= 10;
    } else {
      v = v * 10 + static_cast<unsigned>(digit(k));
    }
    if (v >= static_cast<unsigned __int128>(kMaxTime)) return TimeText::OutOfRange;
  }
  *ns = static_cast<Ns>(v);
  return TimeText::Ok;
}

namespace {

constexpr int kMaxDepth = 64;
constexpr int64_t kU32 = 0xFFFFFFFFll;

// A scalar as it was written: its text and whether it was a string.
struct Scalar {
  bool present = false;
  bool string = false;
  std::string text;
  void set(const char* s, size_t n, bool is_string) {
    present = true;
    string = is_string;
    text.assign(s, n);
  }
  void clear() { present = false; }
};

enum class Cat { Kernel, Memcpy, Memset, Runtime, Driver, Sync, UserAnnotation, GpuUserAnnotation, CpuOp, Flow, Other };

Cat category_of(const std::string& cat) {
  std::string c = detail::lower(cat);
  if (c == "kernel") return Cat::Kernel;
  if (c == "gpu_memcpy" || c == "memcpy") return Cat::Memcpy;
  if (c == "gpu_memset" || c == "memset") return Cat::Memset;
  if (c == "cuda_runtime" || c == "runtime") return Cat::Runtime;
  if (c == "cuda_driver" || c == "driver") return Cat::Driver;
  if (c == "cuda_sync") return Cat::Sync;
  if (c == "user_annotation") return Cat::UserAnnotation;
  if (c == "gpu_user_annotation") return Cat::GpuUserAnnotation;
  if (c == "cpu_op" || c == "operator") return Cat::CpuOp;
  if (c == "ac2g" || c == "async_cpu_to_gpu" || c == "async_gpu") return Cat::Flow;
  return Cat::Other;
}

// Which field of the event (or its args) the next value is.
enum class Field {
  None,
  Ph,
  Cat,
  Name,
  Pid,
  Tid,
  Ts,
  Dur,
  Id,
  Args,
  Correlation,
  Device,
  Stream,
  Bytes,
  SyncKind,
  ArgName,
  Grid,
  Block,
  GraphNode,
};

// Where in the document a value lands.
enum class Place { Root, RootObject, Events, Event, Args, Dims, Devices, Device, Distributed, Skip };

struct Event {
  std::string ph, cat, name;
  Scalar pid, tid, ts, dur, id;
  Scalar correlation, device, stream, bytes, graph_node;
  std::string sync_kind, arg_name;
  bool has_sync_kind = false, has_arg_name = false;
  Scalar grid[3], block[3];
  int grid_n = 0, block_n = 0;
  void clear() {
    ph.clear();
    cat.clear();
    name.clear();
    for (Scalar* s : {&pid, &tid, &ts, &dur, &id, &correlation, &device, &stream, &bytes, &graph_node}) s->clear();
    for (int k = 0; k < 3; ++k) grid[k].clear(), block[k].clear();
    grid_n = block_n = 0;
    has_sync_kind = has_arg_name = false;
  }
};

// An integer field: parsed from its text, checked against [lo, hi].
enum class IntText { Ok, Absent, NotInteger, OutOfRange };
IntText int_of(const Scalar& s, int64_t lo, int64_t hi, int64_t* out) {
  if (!s.present) return IntText::Absent;
  if (s.string || s.text.empty()) return IntText::NotInteger;
  const std::string& t = s.text;
  size_t i = t[0] == '-' ? 1 : 0;
  if (i == t.size()) return IntText::NotInteger;
  bool neg = i == 1;
  unsigned __int128 v = 0;
  for (; i < t.size(); ++i) {
    const char c = t[i];
    if (c == '.' || c == 'e' || c == 'E') {
      // A number with a fraction or an exponent: an integer only when it is whole ("7.0", "1e3").
      Ns ns = 0;
      if (neg) return IntText::OutOfRange;
      const TimeText r = micros_to_ns(t, &ns);  // x 1000, exact
      if (r == TimeText::NotNumber) return IntText::NotInteger;
      if (r == TimeText::OutOfRange) return IntText::OutOfRange;
      if (ns % 1000 != 0) return IntText::NotInteger;
      v = static_cast<unsigned __int128>(ns / 1000);
      break;
    }
    if (c < '0' || c > '9') return IntText::NotInteger;
    v = v * 10 + static_cast<unsigned>(c - '0');
    if (v > (static_cast<unsigned __int128>(1) << 64)) return IntText::OutOfRange;
  }
  if (neg) {
    if (v > static_cast<unsigned __int128>(INT64_MAX) + 1) return IntText::OutOfRange;
    const int64_t x = v == 0 ? 0 : -static_cast<int64_t>(v - 1) - 1;
    if (x < lo || x > hi) return IntText::OutOfRange;
    *out = x;
    return IntText::Ok;
  }
  if (v > static_cast<unsigned __int128>(INT64_MAX) || static_cast<int64_t>(v) < lo || static_cast<int64_t>(v) > hi)
    return IntText::OutOfRange;
  *out = static_cast<int64_t>(v);
  return IntText::Ok;
}

// One event's checks, as nsys_sqlite.cpp's Row: the first failure decides why it is left out.
class Check {
 public:
  Ns time(const Scalar& s) {
    if (failed_) return 0;
    if (!s.present) return fail(DropReason::Null), 0;
    if (s.string) return fail(DropReason::NotInteger), 0;
    Ns ns = 0;
    switch (micros_to_ns(s.text, &ns)) {
      case TimeText::Ok:
        return ns;
      case TimeText::NotNumber:
        return fail(DropReason::NotInteger), 0;
      case TimeText::OutOfRange:
        return fail(DropReason::OutOfRange), 0;
    }
    return 0;
  }
  std::pair<Ns, Ns> interval(const Scalar& ts, const Scalar& dur) {
    const Ns start = time(ts);
    if (!failed_ && dur.present && !dur.string && !dur.text.empty() && dur.text[0] == '-') {
      Ns d = 0;
      if (micros_to_ns(dur.text.substr(1), &d) == TimeText::Ok && d > 0) {
        fail(DropReason::EndBeforeStart);
        return {0, 0};
      }
    }
    const Ns d = time(dur);
    if (failed_) return {0, 0};
    if (start + d >= kMaxTime) {
      fail(DropReason::OutOfRange);
      return {0, 0};
    }
    return {start, start + d};
  }
  // Required id in [lo, hi].
  int64_t id(const Scalar& s, int64_t lo, int64_t hi) {
    if (failed_) return 0;
    int64_t v = 0;
    switch (int_of(s, lo, hi, &v)) {
      case IntText::Ok:
        return v;
      case IntText::Absent:
        return fail(DropReason::Null), 0;
      case IntText::NotInteger:
        return fail(DropReason::NotInteger), 0;
      case IntText::OutOfRange:
        return fail(DropReason::OutOfRange), 0;
    }
    return 0;
  }
  // Optional integer: absent or not an integer reads as `def`; clamped to [lo, hi].
  static int64_t value(const Scalar& s, int64_t def, int64_t lo, int64_t hi) {
    int64_t v = 0;
    switch (int_of(s, INT64_MIN, INT64_MAX, &v)) {
      case IntText::Ok:
        return std::clamp(v, lo, hi);
      case IntText::OutOfRange:
        return !s.text.empty() && s.text[0] == '-' ? lo : hi;
      default:
        return def;
    }
  }
  bool ok() const { return !failed_; }
  DropReason reason() const { return reason_; }

 private:
  void fail(DropReason r) {
    if (!failed_) reason_ = r;
    failed_ = true;
  }
  bool failed_ = false;
  DropReason reason_ = DropReason::Null;
};

// "Memcpy HtoD (Pageable -> Device)": the direction and the two memory kinds.
CopyKind copy_kind_of(const std::string& name) {
  static const std::pair<const char*, CopyKind> kKinds[] = {
      {"HtoD", CopyKind::HtoD}, {"DtoH", CopyKind::DtoH}, {"DtoD", CopyKind::DtoD}, {"HtoH", CopyKind::HtoH},
      {"PtoP", CopyKind::PtoP}, {"HtoA", CopyKind::HtoA}, {"AtoH", CopyKind::AtoH}, {"AtoA", CopyKind::AtoA},
      {"AtoD", CopyKind::AtoD}, {"DtoA", CopyKind::DtoA}};
  for (const auto& [word, kind] : kKinds)
    if (name.find(word) != std::string::npos) return kind;
  return CopyKind::Unknown;
}

MemKind mem_kind_of(std::string word) {
  word = detail::lower(word);
  while (!word.empty() && word.back() == ' ') word.pop_back();
  while (!word.empty() && word.front() == ' ') word.erase(0, 1);
  if (word == "pageable") return MemKind::Pageable;
  if (word == "pinned") return MemKind::Pinned;
  if (word == "device") return MemKind::Device;
  if (word == "array") return MemKind::Array;
  if (word == "managed") return MemKind::Managed;
  if (word == "device static") return MemKind::DeviceStatic;
  if (word == "managed static") return MemKind::ManagedStatic;
  return MemKind::Unknown;
}

// "(Pageable -> Device)" -> {Pageable, Device}; "(Device)" -> {Device, Device}.
std::pair<MemKind, MemKind> mem_kinds_of(const std::string& name) {
  const size_t open = name.rfind('('), close = name.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open)
    return {MemKind::Unknown, MemKind::Unknown};
  const std::string inside = name.substr(open + 1, close - open - 1);
  const size_t arrow = inside.find("->");
  if (arrow == std::string::npos) {
    const MemKind k = mem_kind_of(inside);
    return {k, k};
  }
  return {mem_kind_of(inside.substr(0, arrow)), mem_kind_of(inside.substr(arrow + 2))};
}

SyncType sync_type_of(const std::string& kind) {
  const std::string k = detail::lower(kind);
  if (k.find("wait") != std::string::npos) return SyncType::StreamWaitEvent;
  if (k.find("stream") != std::string::npos) return SyncType::StreamSynchronize;
  if (k.find("event") != std::string::npos) return SyncType::EventSynchronize;
  if (k.find("context") != std::string::npos || k.find("device") != std::string::npos)
    return SyncType::ContextSynchronize;
  return SyncType::Unknown;
}

// A number that ends a name: "ProfilerStep#12" -> 12.
std::optional<uint64_t> trailing_number(const std::string& s) {
  size_t i = s.size();
  while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9') --i;
  if (i == s.size() || s.size() - i > 18) return std::nullopt;
  return std::stoull(s.substr(i));
}

class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path), src_(path), stream_(src_) {}

  Trace read() {
    rapidjson::Reader reader;
    constexpr unsigned kFlags = rapidjson::kParseNumbersAsStringsFlag | rapidjson::kParseStopWhenDoneFlag;
    const rapidjson::ParseResult ok = reader.Parse<kFlags>(stream_, *this);
    const std::string file = escape_name(path_);
    if (!ok) {
      if (!error_.empty()) throw TraceError(file + " " + error_);
      if (stream_.at_end())
        throw TraceError(file + " ends in the middle of its JSON (after " + std::to_string(src_.decoded()) +
                         " bytes): the profiler did not finish writing it, or the file was cut short.");
      // RapidJSON calls a raw control character in a string an invalid escape: say both.
      const std::string why = ok.Code() == rapidjson::kParseErrorStringEscapeInvalid
                                  ? "a control character or an invalid escape inside a string."
                                  : rapidjson::GetParseError_En(ok.Code());
      throw TraceError(file + " is not valid JSON at byte " + std::to_string(ok.Offset()) + ": " + why);
    }
    if (!saw_events_)
      throw TraceError(file +
                       " is JSON but not a PyTorch profiler trace: it has no traceEvents array (torch.profiler's "
                       "export_chrome_trace and tensorboard_trace_handler write one).");
    if (events_ == metadata_)
      throw TraceError(file + " is a PyTorch profiler trace without profiled events (" +
                       detail::plural(metadata_, "metadata record", "metadata records") +
                       "): the profiler recorded nothing; profile at least one step of the loop (schedule's active "
                       "steps, each ended by prof.step()).");
    finish();
    return std::move(t_);
  }

  // --- RapidJSON's SAX handler ----------------------------------------------------------------

  bool Null() { return scalar("null", 4, false); }
  bool Bool(bool b) { return scalar(b ? "true" : "false", b ? 4 : 5, false); }
  bool Int(int) { return true; }  // numbers arrive as RawNumber (kParseNumbersAsStringsFlag)
  bool Uint(unsigned) { return true; }
  bool Int64(int64_t) { return true; }
  bool Uint64(uint64_t) { return true; }
  bool Double(double) { return true; }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool) { return scalar(s, n, false); }
  bool String(const char* s, rapidjson::SizeType n, bool) { return scalar(s, n, true); }

  bool Key(const char* s, rapidjson::SizeType n, bool) {
    if (skip_) return true;
    const std::string_view k(s, n);
    field_ = Field::None;
    switch (place_.back()) {
      case Place::RootObject:
        root_key_.assign(k);
        break;
      case Place::Event:
        field_ = k == "ph"     ? Field::Ph
                 : k == "cat"  ? Field::Cat
                 : k == "name" ? Field::Name
                 : k == "pid"  ? Field::Pid
                 : k == "tid"  ? Field::Tid
                 : k == "ts"   ? Field::Ts
                 : k == "dur"  ? Field::Dur
                 : k == "id"   ? Field::Id
                 : k == "args" ? Field::Args
                               : Field::None;
        break;
      case Place::Args:
        field_ = k == "correlation"      ? Field::Correlation
                 : k == "device"         ? Field::Device
                 : k == "stream"         ? Field::Stream
                 : k == "bytes"          ? Field::Bytes
                 : k == "cuda_sync_kind" ? Field::SyncKind
                 : k == "name"           ? Field::ArgName
                 : k == "grid"           ? Field::Grid
                 : k == "block"          ? Field::Block
                 : k == "graph node id"  ? Field::GraphNode
                                         : Field::None;
        break;
      case Place::Device:
      case Place::Distributed:
        root_key_.assign(k);
        break;
      default:
        break;
    }
    return true;
  }

  bool StartObject() { return open(true); }
  bool EndObject(rapidjson::SizeType) { return close(); }
  bool StartArray() { return open(false); }
  bool EndArray(rapidjson::SizeType) { return close(); }

 private:
  bool deeper() {
    if (++depth_ > kMaxDepth) {
      error_ = "nests deeper than " + std::to_string(kMaxDepth) +
               " levels of JSON arrays and objects: it is no profiler's trace.";
      return false;
    }
    return true;
  }

  bool open(bool object) {
    if (!deeper()) return false;
    if (skip_) return ++skip_, true;
    const Place at = place_.back();
    Place next = Place::Skip;
    switch (at) {
      case Place::Root:
        next = object ? Place::RootObject : Place::Events;  // a bare array: the JSON Array Format
        if (!object) saw_events_ = true;
        break;
      case Place::RootObject:
        if (!object && root_key_ == "traceEvents") next = Place::Events, saw_events_ = true;
        if (!object && root_key_ == "deviceProperties") next = Place::Devices;
        if (object && root_key_ == "distributedInfo") next = Place::Distributed;
        break;
      case Place::Events:
        if (object) {
          next = Place::Event;
          ev_.clear();
        }
        break;
      case Place::Event:
        if (object && field_ == Field::Args) next = Place::Args;
        break;
      case Place::Args:
        if (!object && (field_ == Field::Grid || field_ == Field::Block)) next = Place::Dims;
        break;
      case Place::Devices:
        if (object) {
          next = Place::Device;
          gpu_ = Gpu();
          gpu_id_.clear();
        }
        break;
      default:
        break;
    }
    if (next == Place::Skip) {
      skip_ = 1;
      return true;
    }
    place_.push_back(next);
    return true;
  }

  bool close() {
    --depth_;
    if (skip_) return --skip_, true;
    const Place at = place_.back();
    place_.pop_back();
    if (at == Place::Event) event();
    if (at == Place::Device) {
      int64_t id = 0;
      if (int_of(gpu_id_, 0, kU32, &id) == IntText::Ok) gpu_.id = static_cast<uint32_t>(id);
      t_.gpus.push_back(gpu_);
    }
    if (at == Place::Dims) field_ = Field::None;
    return true;
  }

  bool scalar(const char* s, size_t n, bool is_string) {
    if (skip_) return true;
    switch (place_.back()) {
      case Place::RootObject:
        if (root_key_ == "schemaVersion") schema_.assign(s, n);
        break;
      case Place::Event:
        switch (field_) {
          case Field::Ph:
            ev_.ph.assign(s, n);
            break;
          case Field::Cat:
            ev_.cat.assign(s, n);
            break;
          case Field::Name:
            ev_.name.assign(s, n);
            break;
          case Field::Pid:
            ev_.pid.set(s, n, is_string);
            break;
          case Field::Tid:
            ev_.tid.set(s, n, is_string);
            break;
          case Field::Ts:
            ev_.ts.set(s, n, is_string);
            break;
          case Field::Dur:
            ev_.dur.set(s, n, is_string);
            break;
          case Field::Id:
            ev_.id.set(s, n, is_string);
            break;
          default:
            break;
        }
        break;
      case Place::Args:
        switch (field_) {
          case Field::Correlation:
            ev_.correlation.set(s, n, is_string);
            break;
          case Field::Device:
            ev_.device.set(s, n, is_string);
            break;
          case Field::Stream:
            ev_.stream.set(s, n, is_string);
            break;
          case Field::Bytes:
            ev_.bytes.set(s, n, is_string);
            break;
          case Field::GraphNode:
            ev_.graph_node.set(s, n, is_string);
            break;
          case Field::SyncKind:
            ev_.sync_kind.assign(s, n), ev_.has_sync_kind = true;
            break;
          case Field::ArgName:
            ev_.arg_name.assign(s, n), ev_.has_arg_name = true;
            break;
          default:
            break;
        }
        break;
      case Place::Dims:
        if (field_ == Field::Grid && ev_.grid_n < 3) ev_.grid[ev_.grid_n++].set(s, n, is_string);
        if (field_ == Field::Block && ev_.block_n < 3) ev_.block[ev_.block_n++].set(s, n, is_string);
        break;
      case Place::Device:
        if (root_key_ == "id") gpu_id_.set(s, n, is_string);
        if (root_key_ == "name" && is_string) gpu_.name.assign(s, n);
        if (root_key_ == "numSms")
          gpu_.sm_count = static_cast<int>(Check::value(scalar_of(s, n, is_string), 0, 0, 1 << 20));
        break;
      case Place::Distributed:
        if (root_key_ == "rank") rank_ = scalar_of(s, n, is_string);
        break;
      default:
        break;
    }
    return true;
  }

  static Scalar scalar_of(const char* s, size_t n, bool is_string) {
    Scalar x;
    x.set(s, n, is_string);
    return x;
  }

  // --- One event ------------------------------------------------------------------------------

  // Counts a row of `cat` as read and, when it failed a check, as left out (DroppedRows).
  bool keep(Cat cat, const Check& c) {
    DroppedRows::Table*& table = tables_[static_cast<int>(cat)];
    if (!table) table = &t_.dropped.tables[ev_.cat];
    ++table->read;
    if (c.ok()) return true;
    ++table->by_reason[static_cast<int>(c.reason())];
    return false;
  }

  // A CPU row's process and thread: integers, or the thread's name given as a string (a synthetic
  // id, named). A string pid is one of the profiler's own rows ("Spans", "Traces"): no process.
  bool cpu_thread(Check& c, uint32_t* pid, uint32_t* tid) {
    if (ev_.pid.present && ev_.pid.string) return false;
    *pid = static_cast<uint32_t>(c.id(ev_.pid, 0, kU32));
    if (ev_.tid.present && ev_.tid.string) {
      auto [it, fresh] =
          string_tids_.try_emplace(ev_.tid.text, 0x80000000u + static_cast<uint32_t>(string_tids_.size()));
      if (fresh) t_.thread_names[{*pid, it->second}] = ev_.tid.text;
      *tid = it->second;
    } else {
      // Kineto writes some thread ids as signed 32-bit numbers (-247463936): the same 32 bits.
      *tid = static_cast<uint32_t>(c.id(ev_.tid, INT32_MIN, kU32));
    }
    return true;
  }

  void gpu_work(Check& c, GpuWork* w) {
    std::tie(w->start, w->end) = c.interval(ev_.ts, ev_.dur);
    // The device: args.device, else the row's pid (Kineto draws a GPU as the process numbered
    // by its device); the stream: args.stream, else the row's tid.
    const Scalar& device = ev_.device.present ? ev_.device : ev_.pid;
    const Scalar& stream = ev_.stream.present ? ev_.stream : ev_.tid;
    w->device = static_cast<uint32_t>(Check::value(device, 0, 0, kU32));
    w->stream = static_cast<uint32_t>(Check::value(stream, 0, 0, kU32));
    if (!ev_.correlation.present && c.ok()) {
      // An older trace's row without args.correlation: its ac2g flow ends here.
      pending_flow_ = true;
    } else {
      w->correlation = static_cast<uint32_t>(c.id(ev_.correlation, 0, kU32));
    }
    if (ev_.graph_node.present) {
      int64_t node = 0;
      if (int_of(ev_.graph_node, 0, INT64_MAX - 1, &node) == IntText::Ok && node > 0)
        w->graph_node = static_cast<uint64_t>(node);
    }
  }

  Name kernel_short_name(const Name& full) {
    auto [it, fresh] = short_names_.try_emplace(full.key());
    if (fresh) it->second = t_.intern(short_kernel_name(full.str()));
    return it->second;
  }

  void event() {
    ++events_;
    Progress::row();  // long reads show their events (trace/model/progress.h)
    if (ev_.ph.size() == 1 && ev_.ph[0] == 'M') return metadata();
    if (ev_.ph.size() != 1) return;
    const Cat cat = category_of(ev_.cat);
    const char ph = ev_.ph[0];
    if (cat == Cat::Flow && (ph == 's' || ph == 'f')) return flow(ph);
    if (ph != 'X') return;
    pending_flow_ = false;
    Check c;
    switch (cat) {
      case Cat::Kernel: {
        Kernel k;
        gpu_work(c, &k);
        k.name = ev_.name.empty() ? t_.intern("(unnamed kernel)") : t_.intern(ev_.name);
        k.short_name = kernel_short_name(k.name);
        auto dim = [](const Scalar& s) { return static_cast<uint32_t>(Check::value(s, 1, 0, kU32)); };
        auto dim16 = [](const Scalar& s) { return static_cast<uint16_t>(Check::value(s, 1, 0, 0xFFFF)); };
        k.grid = {dim(ev_.grid[0]), dim16(ev_.grid[1]), dim16(ev_.grid[2])};
        k.block = {dim(ev_.block[0]), dim16(ev_.block[1]), dim16(ev_.block[2])};
        if (keep(cat, c)) {
          t_.kernels.push_back(std::move(k));
          if (pending_flow_) awaiting_.push_back({Awaiting::Kernel, t_.kernels.size() - 1});
        }
        break;
      }
      case Cat::Memcpy: {
        Memcpy m;
        gpu_work(c, &m);
        m.bytes = static_cast<uint64_t>(Check::value(ev_.bytes, 0, 0, INT64_MAX));
        m.kind = copy_kind_of(ev_.name);
        std::tie(m.src, m.dst) = mem_kinds_of(ev_.name);
        if (keep(cat, c)) {
          t_.memcpys.push_back(m);
          if (pending_flow_) awaiting_.push_back({Awaiting::Memcpy, t_.memcpys.size() - 1});
        }
        break;
      }
      case Cat::Memset: {
        Memset m;
        gpu_work(c, &m);
        m.bytes = static_cast<uint64_t>(Check::value(ev_.bytes, 0, 0, INT64_MAX));
        m.mem = mem_kinds_of(ev_.name).first;
        if (keep(cat, c)) {
          t_.memsets.push_back(m);
          if (pending_flow_) awaiting_.push_back({Awaiting::Memset, t_.memsets.size() - 1});
        }
        break;
      }
      case Cat::Runtime:
      case Cat::Driver: {
        ApiCall a;
        if (!cpu_thread(c, &a.pid, &a.tid)) return;
        std::tie(a.start, a.end) = c.interval(ev_.ts, ev_.dur);
        if (ev_.correlation.present)
          a.correlation = static_cast<uint32_t>(c.id(ev_.correlation, 0, kU32));
        else
          pending_flow_ = c.ok();
        const Name raw = t_.intern(ev_.name);
        auto [norm, fresh] = api_names_.try_emplace(raw.key());
        if (fresh) norm->second = t_.intern(normalize_api_name(raw));
        a.name = norm->second;
        if (keep(cat, c)) {
          t_.api_calls.push_back(std::move(a));
          if (pending_flow_) awaiting_.push_back({Awaiting::Api, t_.api_calls.size() - 1});
        }
        break;
      }
      case Cat::Sync: {
        SyncEvent s;
        std::tie(s.start, s.end) = c.interval(ev_.ts, ev_.dur);
        s.device = static_cast<uint32_t>(Check::value(ev_.device.present ? ev_.device : ev_.pid, 0, 0, kU32));
        const int64_t stream = Check::value(ev_.stream, -1, -1, kU32);
        s.stream = stream < 0 ? static_cast<uint32_t>(kU32) : static_cast<uint32_t>(stream);
        s.correlation = static_cast<uint32_t>(c.id(ev_.correlation, 0, kU32));
        s.type = sync_type_of(ev_.has_sync_kind ? ev_.sync_kind : ev_.name);
        if (keep(cat, c)) t_.syncs.push_back(s);
        break;
      }
      case Cat::UserAnnotation:
      case Cat::CpuOp: {
        NvtxEvent r;
        if (!cpu_thread(c, &r.pid, &r.tid)) return;
        std::tie(r.start, r.end) = c.interval(ev_.ts, ev_.dur);
        r.domain = cat == Cat::CpuOp ? pytorch_domain_ : Name();
        r.text = t_.intern(ev_.name);
        r.kind = NvtxKind::PushPop;
        if (cat == Cat::UserAnnotation && ev_.name.rfind("ProfilerStep#", 0) == 0)
          if (const std::optional<uint64_t> n = trailing_number(ev_.name)) r.has_payload = true, r.payload = *n;
        if (keep(cat, c)) t_.nvtx.push_back(std::move(r));
        break;
      }
      default:
        break;
    }
  }

  void metadata() {
    ++metadata_;
    if (ev_.pid.present && ev_.pid.string) return;
    int64_t pid = 0, tid = 0;
    if (int_of(ev_.pid, 0, kU32, &pid) != IntText::Ok) return;
    if (ev_.name == "process_name" && ev_.has_arg_name) process_names_[static_cast<uint32_t>(pid)] = ev_.arg_name;
    if (ev_.name == "thread_name" && ev_.has_arg_name && int_of(ev_.tid, INT32_MIN, kU32, &tid) == IntText::Ok)
      thread_names_[{static_cast<uint32_t>(pid), static_cast<uint32_t>(tid)}] = ev_.arg_name;
  }

  // An ac2g flow's end: the correlation of a row that came without one, at the same thread and
  // time (Kineto writes a flow right after its row). Only such rows' flows are held.
  void flow(char ph) {
    if (awaiting_.empty() || !pending_flow_) return;
    const Awaiting& a = awaiting_.back();
    Check c;
    const int64_t id = c.id(ev_.id, 0, kU32);
    if (!c.ok()) return;
    const Ns at = c.time(ev_.ts);
    if (!c.ok()) return;
    auto fits = [&](Ns start) { return start == at; };
    if (ph == 'f' && a.kind != Awaiting::Api) {
      GpuWork* w = a.kind == Awaiting::Kernel   ? static_cast<GpuWork*>(&t_.kernels[a.index])
                   : a.kind == Awaiting::Memcpy ? static_cast<GpuWork*>(&t_.memcpys[a.index])
                                                : static_cast<GpuWork*>(&t_.memsets[a.index]);
      if (!fits(w->start)) return;
      w->correlation = static_cast<uint32_t>(id);
    } else if (ph == 's' && a.kind == Awaiting::Api) {
      ApiCall& call = t_.api_calls[a.index];
      if (!fits(call.start)) return;
      call.correlation = static_cast<uint32_t>(id);
    } else {
      return;
    }
    awaiting_.pop_back();
    pending_flow_ = false;
  }

  // --- After the last event -------------------------------------------------------------------

  void finish() {
    // GPU rows still without a correlation id have no launch to join: left out, counted.
    if (!awaiting_.empty()) drop_unflowed();
    // CPU processes: those with API calls or ranges. GPU rows' "processes" are devices.
    std::map<uint32_t, size_t> calls_of;
    for (const ApiCall& a : t_.api_calls) ++calls_of[a.pid];
    std::set<uint32_t> cpu;
    for (const auto& [pid, n] : calls_of) cpu.insert(pid);
    for (const NvtxEvent& r : t_.nvtx) cpu.insert(r.pid);
    assign_gpu_pids(calls_of);
    for (const auto& [thread, name] : thread_names_)
      if (cpu.count(thread.first) && !t_.thread_names.count(thread)) t_.thread_names[thread] = name;
    for (uint32_t pid : cpu) {
      auto it = process_names_.find(pid);
      std::string name = it == process_names_.end() ? "" : it->second;
      if (!rank_.present) {
        if (!name.empty()) t_.process_names[pid] = name;
        continue;
      }
      int64_t rank = 0;
      if (int_of(rank_, 0, kU32, &rank) == IntText::Ok)
        t_.process_names[pid] = (name.empty() ? "" : name + " ") + "rank " + std::to_string(rank);
    }
    drop_profiler_sync();
    note_duplicate_correlations();
    keep_gpus_used();
    shift_to_zero();
    t_.format = TraceFormat::Kineto;
    t_.source = "PyTorch profiler (Kineto JSON" + (schema_.empty() ? std::string() : ", schema " + schema_) + ")";
    if (t_.kernels.empty() && t_.memcpys.empty() && t_.memsets.empty()) {
      auto it = t_.dropped.tables.find("kernel");
      if (it != t_.dropped.tables.end() && it->second.read > 0)
        t_.notes.push_back("Every kernel event (" + std::to_string(it->second.read) +
                           ") was left out as invalid, so GPU utilization and the kernel mix (questions 2 and 3) "
                           "cannot be answered.");
      else
        t_.notes.push_back(
            "The trace has no GPU events (kernel, gpu_memcpy, gpu_memset): profile with "
            "activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], and alone (under `nsys profile` or "
            "`ncu` the PyTorch profiler records no GPU work: CUPTI takes one client), so GPU utilization and "
            "the kernel mix (questions 2 and 3) can be answered.");
    }
    t_.finalize();
    mark_graph_work();
    check_totals(t_);
  }

  // A CUDA Graph's replayed work carries its cudaGraphLaunch's correlation: once joined, each is a
  // graph node's work (GpuWork::graph_node), numbered in its replay's order where Kineto gives no
  // node id (it records no node creation, so the layer is the launch's range, as graph.h says).
  void mark_graph_work() {
    std::unordered_map<int, uint64_t> next_node;  // launch call -> nodes numbered so far
    auto mark = [&](auto& rows) {
      for (auto& w : rows)
        if (w.api >= 0 && w.graph_node == kNoGraphNode && t_.api_calls[w.api].name == "cudaGraphLaunch")
          w.graph_node = next_node[w.api]++;
    };
    mark(t_.kernels), mark(t_.memcpys), mark(t_.memsets);
  }

  void drop_unflowed() {
    size_t dropped = 0;
    std::vector<char> gone_k(t_.kernels.size()), gone_c(t_.memcpys.size()), gone_s(t_.memsets.size());
    for (const Awaiting& a : awaiting_) {
      if (a.kind == Awaiting::Api) continue;  // a call without an id launched nothing we can see
      const char* table = a.kind == Awaiting::Kernel   ? "kernel"
                          : a.kind == Awaiting::Memcpy ? "gpu_memcpy"
                                                       : "gpu_memset";
      (a.kind == Awaiting::Kernel ? gone_k : a.kind == Awaiting::Memcpy ? gone_c : gone_s)[a.index] = 1;
      ++t_.dropped.tables[table].by_reason[static_cast<int>(DropReason::Null)];
      ++dropped;
    }
    if (!dropped) return;
    auto erase = [](auto& v, const std::vector<char>& gone) {
      size_t k = 0;
      for (size_t i = 0; i < v.size(); ++i)
        if (!gone[i]) v[k++] = std::move(v[i]);
      v.resize(k);
    };
    erase(t_.kernels, gone_k);
    erase(t_.memcpys, gone_c);
    erase(t_.memsets, gone_s);
  }

  // Kineto draws GPU rows under the device's number; the model's pid is the launching process's,
  // found through the correlation id (one process in the usual trace: all of them are its).
  void assign_gpu_pids(const std::map<uint32_t, size_t>& calls_of) {
    if (calls_of.empty()) return;
    uint32_t main = calls_of.begin()->first;
    for (const auto& [pid, n] : calls_of)
      if (n > calls_of.at(main)) main = pid;
    auto set_all = [](auto& rows, auto&& pid_of) {
      for (auto& w : rows) w.pid = pid_of(w.correlation);
    };
    if (calls_of.size() == 1) {
      auto one = [main](uint32_t) { return main; };
      set_all(t_.kernels, one), set_all(t_.memcpys, one), set_all(t_.memsets, one), set_all(t_.syncs, one);
      return;
    }
    std::unordered_map<uint32_t, uint32_t> by_correlation;
    by_correlation.reserve(t_.api_calls.size());
    for (const ApiCall& a : t_.api_calls)
      if (a.correlation) by_correlation.try_emplace(a.correlation, a.pid);
    auto lookup = [&](uint32_t corr) {
      auto it = by_correlation.find(corr);
      return it == by_correlation.end() ? main : it->second;
    };
    set_all(t_.kernels, lookup), set_all(t_.memcpys, lookup), set_all(t_.memsets, lookup), set_all(t_.syncs, lookup);
  }

  // torch.profiler synchronizes the device before it stops (profile.__exit__): the trace's last
  // cudaDeviceSynchronize, when it is its thread's last runtime call, sits in no range of its thread
  // and starts after every range of its process has ended. The program did not ask for it.
  void drop_profiler_sync() {
    int last = -1;
    for (size_t i = 0; i < t_.api_calls.size(); ++i)
      if (t_.api_calls[i].name == "cudaDeviceSynchronize" &&
          (last < 0 || t_.api_calls[i].start >= t_.api_calls[static_cast<size_t>(last)].start))
        last = static_cast<int>(i);
    if (last < 0) return;
    const ApiCall& a = t_.api_calls[static_cast<size_t>(last)];
    for (const ApiCall& b : t_.api_calls)
      if (b.pid == a.pid && b.tid == a.tid && b.start > a.start) return;
    for (const NvtxEvent& r : t_.nvtx)
      if (r.pid == a.pid && r.end >= a.start) return;
    t_.notes.push_back("The profiler's own cudaDeviceSynchronize at the end of its window (" +
                       detail::ms(a.end - a.start) + " ms, as torch.profiler stops) is not the program's: left out.");
    t_.api_calls.erase(t_.api_calls.begin() + last);
  }

  // CUPTI never gives two calls of one process the same correlation id: a trace that does is damaged
  // or merged from two, and the GPU work joins one of them (Trace::finalize's rule), said once.
  void note_duplicate_correlations() {
    std::vector<uint64_t> keys;
    keys.reserve(t_.api_calls.size());
    for (const ApiCall& a : t_.api_calls)
      if (a.correlation) keys.push_back(uint64_t{a.pid} << 32 | a.correlation);
    std::sort(keys.begin(), keys.end());
    size_t twice = 0;
    for (size_t i = 1; i < keys.size(); ++i) twice += keys[i] == keys[i - 1];
    if (twice)
      t_.notes.push_back(detail::plural(twice, "CUDA API call reuses", "CUDA API calls reuse") +
                         " the correlation id of another call of its process, which CUPTI never does (a damaged or "
                         "merged trace): the GPU work with that id is joined to the runtime call, else the earliest.");
  }

  // deviceProperties lists every GPU of the machine; the trace's are those its GPU rows ran on.
  void keep_gpus_used() {
    std::set<uint32_t> used;
    for (const Kernel& k : t_.kernels) used.insert(k.device);
    for (const Memcpy& m : t_.memcpys) used.insert(m.device);
    for (const Memset& m : t_.memsets) used.insert(m.device);
    if (used.empty()) return;
    std::vector<Gpu> kept;
    for (const Gpu& g : t_.gpus)
      if (used.count(g.id)) kept.push_back(g);
    t_.gpus = std::move(kept);
  }

  // Times since the trace's first kept event, as nsys's are since its session's start.
  void shift_to_zero() {
    Ns first = kMaxTime;
    auto low = [&first](const auto& rows) {
      for (const auto& r : rows) first = std::min(first, r.start);
    };
    low(t_.kernels), low(t_.memcpys), low(t_.memsets), low(t_.api_calls), low(t_.syncs), low(t_.nvtx);
    if (first == kMaxTime || first == 0) return;
    auto shift = [first](auto& rows) {
      for (auto& r : rows) r.start -= first, r.end -= first;
    };
    shift(t_.kernels), shift(t_.memcpys), shift(t_.memsets), shift(t_.api_calls), shift(t_.syncs), shift(t_.nvtx);
  }

  struct Awaiting {
    enum Kind { Kernel, Memcpy, Memset, Api } kind;
    size_t index;
  };

  std::string path_;
  ByteSource src_;
  JsonStream stream_;
  std::string error_;
  int depth_ = 0;
  int skip_ = 0;
  std::vector<Place> place_{Place::Root};
  std::string root_key_;
  Field field_ = Field::None;
  Event ev_;
  Gpu gpu_;
  Scalar gpu_id_, rank_;
  std::string schema_;
  bool saw_events_ = false;
  size_t events_ = 0, metadata_ = 0;
  bool pending_flow_ = false;
  std::vector<Awaiting> awaiting_;
  DroppedRows::Table* tables_[static_cast<int>(Cat::Other) + 1] = {};
  std::map<uint32_t, std::string> process_names_;
  std::map<std::pair<uint32_t, uint32_t>, std::string> thread_names_;
  std::unordered_map<std::string, uint32_t> string_tids_;
  std::unordered_map<const void*, Name> short_names_, api_names_;
  Trace t_;
  Name pytorch_domain_ = t_.intern("pytorch");
};

}  // namespace

Trace load_kineto_json(const std::string& path) { return Reader(path).read(); }

}  // namespace laptime::trace
