// The JSON parsers laptime could read a PyTorch profiler trace with, side by side on the same
// (uncompressed) file: each walks every event and counts the events and kernels, the least work
// any reader does. How laptime chose RapidJSON (docs/PERF.md, "Reading a PyTorch profiler trace").
//
//   g++ -O2 -std=c++17 scripts/kineto_bench/parsers.cpp -o /tmp/parsers -lsimdjson
//   /tmp/parsers nlohmann|rapidjson|simdjson TRACE.json
//
// nlohmann's and RapidJSON's SAX readers stream the file (memory: a buffer); simdjson's On-Demand
// API parses a document it holds whole (memory: the file, padded), so it reads a 1 GB trace only
// with 1 GB of RAM to spare.
#include <rapidjson/filereadstream.h>
#include <rapidjson/reader.h>
#include <simdjson.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace {

struct Counts {
  size_t events = 0, kernels = 0;
};

// Counts objects at depth 3 ({ traceEvents: [ {...} ] }) and "cat": "kernel" values.
struct RapidHandler : rapidjson::BaseReaderHandler<rapidjson::UTF8<>, RapidHandler> {
  Counts c;
  int depth = 0;
  bool cat_key = false;
  bool Default() {
    cat_key = false;
    return true;
  }
  bool RawNumber(const char*, rapidjson::SizeType, bool) { return Default(); }
  bool String(const char* s, rapidjson::SizeType n, bool) {
    if (cat_key && n == 6 && std::memcmp(s, "kernel", 6) == 0) ++c.kernels;
    return Default();
  }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    cat_key = depth == 3 && n == 3 && std::memcmp(s, "cat", 3) == 0;
    return true;
  }
  bool StartObject() {
    if (++depth == 3) ++c.events;
    return true;
  }
  bool EndObject(rapidjson::SizeType) { return --depth, true; }
  bool StartArray() { return ++depth, true; }
  bool EndArray(rapidjson::SizeType) { return --depth, true; }
};

struct NlohmannHandler : nlohmann::json_sax<nlohmann::json> {
  Counts c;
  int depth = 0;
  bool cat_key = false;
  bool null() override { return cat_key = false, true; }
  bool boolean(bool) override { return null(); }
  bool number_integer(number_integer_t) override { return null(); }
  bool number_unsigned(number_unsigned_t) override { return null(); }
  bool number_float(number_float_t, const string_t&) override { return null(); }
  bool string(string_t& s) override {
    if (cat_key && s == "kernel") ++c.kernels;
    return null();
  }
  bool binary(binary_t&) override { return null(); }
  bool start_object(std::size_t) override {
    if (++depth == 3) ++c.events;
    return true;
  }
  bool key(string_t& k) override {
    cat_key = depth == 3 && k == "cat";
    return true;
  }
  bool end_object() override { return --depth, true; }
  bool start_array(std::size_t) override { return ++depth, true; }
  bool end_array() override { return --depth, true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: parsers nlohmann|rapidjson|simdjson TRACE.json\n");
    return 2;
  }
  const std::string which = argv[1], path = argv[2];
  const auto t0 = std::chrono::steady_clock::now();
  Counts c;
  size_t bytes = 0;
  if (which == "rapidjson") {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    static char buf[1 << 20];
    rapidjson::FileReadStream is(f, buf, sizeof buf);
    RapidHandler h;
    rapidjson::Reader r;
    if (!r.Parse<rapidjson::kParseNumbersAsStringsFlag>(is, h)) return std::fprintf(stderr, "parse error\n"), 1;
    bytes = is.Tell();
    c = h.c;
    std::fclose(f);
  } else if (which == "nlohmann") {
    std::ifstream f(path, std::ios::binary);
    NlohmannHandler h;
    if (!nlohmann::json::sax_parse(f, &h)) return std::fprintf(stderr, "parse error\n"), 1;
    c = h.c;
    std::ifstream g(path, std::ios::binary | std::ios::ate);
    bytes = static_cast<size_t>(g.tellg());
  } else if (which == "simdjson") {
    simdjson::padded_string json = simdjson::padded_string::load(path);
    bytes = json.size();
    simdjson::ondemand::parser parser;
    simdjson::ondemand::document doc = parser.iterate(json);
    for (auto ev : doc["traceEvents"].get_array()) {
      ++c.events;
      std::string_view cat;
      if (ev.get_object()["cat"].get_string().get(cat) == simdjson::SUCCESS && cat == "kernel") ++c.kernels;
    }
  } else {
    return std::fprintf(stderr, "unknown parser %s\n", which.c_str()), 2;
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%-10s %zu events, %zu kernels, %.1f MB in %.2f s: %.0f MB/s\n", which.c_str(), c.events, c.kernels,
              bytes / 1e6, s, bytes / 1e6 / s);
  return 0;
}
