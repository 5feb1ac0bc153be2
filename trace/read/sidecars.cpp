#include "trace/read/sidecars.h"

#include <cstdlib>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/input_file.h"
#include "core/os.h"
#include "trace/model/error.h"
#include "trace/model/format.h"
#include "trace/model/text.h"

namespace laptime::trace {
namespace {

using detail::clip;

// A layer costs or peak file is a few hundred KB at most; a FIFO, a folder or a device is
// refused before it is opened (core/input_file.h), a file past the bound before it is read.
constexpr size_t kMaxSidecarBytes = 64u << 20;
constexpr double kMaxCount = 1e18, kMinCount = 1e-3;  // FLOPs or bytes of one layer, when not 0
constexpr double kMaxCeiling = 1e6;                   // TFLOP/s or GB/s

nlohmann::json read_json(const std::string& path, const char* what) {
  std::string text;
  try {
    text = read_input(path, "a " + std::string(what) + " file", kMaxSidecarBytes);
  } catch (const InputError& e) {
    throw TraceError(e.what());
  }
  try {
    return parse_untrusted_json(text, path);
  } catch (const nlohmann::json::exception&) {
    throw TraceError(path + " is not a JSON " + what + " file.");
  }
}

}  // namespace

nlohmann::json parse_untrusted_json(const std::string& text, const std::string& path) {
  // One pass over the text, strings skipped: the deepest nesting of [ and {.
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        throw TraceError(path + " nests deeper than " + std::to_string(kMaxJsonDepth) +
                         " levels of JSON arrays and objects: it is no file laptime writes.");
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return nlohmann::json::parse(text);
}

// --- The sidecar ------------------------------------------------------------------------

std::string layer_costs_path(const std::string& report_or_trace) {
  const size_t slash = report_or_trace.find_last_of('/'), dot = report_or_trace.find_last_of('.');
  const size_t base = slash == std::string::npos ? 0 : slash + 1;  // a leading dot is no extension
  const bool has_ext = dot != std::string::npos && dot > base;
  return (has_ext ? report_or_trace.substr(0, dot) : report_or_trace) + ".layers.json";
}

LayerCosts layer_costs_from_json(const nlohmann::json& j, const std::string& source) {
  const std::string bad = source + " is not a laptime layer costs file (schema laptime.layers/1)";
  if (!j.is_object() || j.value("schema", "") != "laptime.layers/1" || !j.contains("layers") || !j["layers"].is_array())
    throw TraceError(bad + ".");
  LayerCosts c;
  c.source = source;
  try {
    c.model = j.at("model").get<std::string>();
    c.precision = j.at("precision").get<std::string>();
    c.shape = j.value("shape", "");
    for (const auto& l : j["layers"]) {
      LayerCostEntry e;
      e.name = l.at("name").get<std::string>();
      e.parent = l.value("parent", "");
      e.kind = l.value("kind", "");
      e.precision = l.value("precision", "");
      e.flops = l.at("flops").get<double>();
      e.weight_bytes = l.at("bytes").at("weights").get<double>();
      e.input_bytes = l.at("bytes").at("inputs").get<double>();
      e.output_bytes = l.at("bytes").at("outputs").get<double>();
      if (!(e.flops >= 0 && e.weight_bytes >= 0 && e.input_bytes >= 0 && e.output_bytes >= 0))
        throw TraceError(bad + ": layer " + escape_name(clip(e.name)) + " has a negative count.");
      // Counts of FLOPs and bytes a layer can have (5e-324 FLOPs or 1e308 bytes once sent the
      // roofline plot's decade loop on for ever).
      for (double v : {e.flops, e.weight_bytes, e.input_bytes, e.output_bytes})
        if (!(v <= kMaxCount) || (v > 0 && v < kMinCount))
          throw TraceError(bad + ": layer " + escape_name(clip(e.name)) +
                           " has a count that is no number of FLOPs or bytes (0, or 0.001 to 1e18).");
      c.layers.push_back(std::move(e));
    }
  } catch (const nlohmann::json::exception&) {
    throw TraceError(bad + ": a field is missing or of the wrong type.");
  }
  return c;
}

LayerCosts read_layer_costs(const std::string& path) {
  return layer_costs_from_json(read_json(path, "layer costs"), path);
}

// --- The ceilings -----------------------------------------------------------------------

double Ceilings::tflops(const std::string& precision) const {
  if (precision == "bf16" || precision == "fp16") return bf16_tflops;
  if (precision == "tf32") return tf32_tflops;
  if (precision == "fp32") return fp32_tflops;
  if (precision == "fp8") {
    if (fp8_tflops > 0) return fp8_tflops;
    throw TraceError("the ceilings in " + source +
                     " have no fp8 rate (measured before fp8 existed): run `laptime peak --force`.");
  }
  throw TraceError("no compute ceiling for precision '" + precision + "': expected bf16, tf32, fp32 or fp8.");
}

std::string cache_folder() {
  if (const char* d = std::getenv("LAPTIME_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/laptime";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/laptime";
  return ".";
}

std::vector<std::string> peak_cache_files() {
  std::vector<std::string> out;
  std::error_code ec;
  const std::string dir = cache_folder();
  for (auto it = std::filesystem::directory_iterator(dir, ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind("peak-", 0) == 0 && name.size() > 10 && name.compare(name.size() - 5, 5, ".json") == 0)
      out.push_back(it->path().string());
    if (out.size() >= 4096) break;  // a cache holds one file a GPU model
  }
  return out;
}

std::string default_peak_path(const std::string& gpu_name) {
  const std::string dir = cache_folder();
  std::string key;
  for (char c : gpu_name) key += (std::isalnum(static_cast<unsigned char>(c)) || c == '-') ? c : '_';
  return dir + "/peak-" + (key.empty() ? "unknown" : key) + ".json";
}

nlohmann::json ceilings_to_json(const Ceilings& c) {
  nlohmann::json j{{"schema", "laptime.peak/1"},
                   {"gpu", {{"name", c.gpu}, {"uuid", c.uuid}}},
                   {"tflops", {{"bf16", c.bf16_tflops}, {"tf32", c.tf32_tflops}, {"fp32", c.fp32_tflops}}},
                   {"copy_gbps", c.copy_gbps},
                   {"measured", c.measured}};
  if (c.fp8_tflops > 0) j["tflops"]["fp8"] = c.fp8_tflops;  // older files have none
  return j;
}

Ceilings ceilings_from_json(const nlohmann::json& j, const std::string& source) {
  const std::string bad = source + " is not a laptime peak file (schema laptime.peak/1, from `laptime peak`)";
  if (!j.is_object() || j.value("schema", "") != "laptime.peak/1") throw TraceError(bad + ".");
  Ceilings c;
  c.source = source;
  try {
    c.gpu = j.at("gpu").at("name").get<std::string>();
    c.uuid = j.at("gpu").value("uuid", "");
    c.bf16_tflops = j.at("tflops").at("bf16").get<double>();
    c.tf32_tflops = j.at("tflops").at("tf32").get<double>();
    c.fp32_tflops = j.at("tflops").at("fp32").get<double>();
    c.fp8_tflops = j.at("tflops").value("fp8", 0.0);
    c.copy_gbps = j.at("copy_gbps").get<double>();
    c.measured = j.value("measured", "");
  } catch (const nlohmann::json::exception&) {
    throw TraceError(bad + ": a field is missing or of the wrong type.");
  }
  // A ceiling no device reaches (1e308 TFLOP/s once sent the roofline plot's decade loop on for
  // ever): 1e6 TFLOP/s and 1e6 GB/s are a thousand times today's largest GPU.
  const auto ceiling = [](double v) { return v > 0 && v <= kMaxCeiling; };
  for (double v : {c.bf16_tflops, c.tf32_tflops, c.fp32_tflops, c.copy_gbps})
    if (!ceiling(v)) throw TraceError(bad + ": every ceiling must be a positive number of at most 1e6.");
  if (j.at("tflops").contains("fp8") && !ceiling(c.fp8_tflops))
    throw TraceError(bad + ": every ceiling must be a positive number of at most 1e6.");
  return c;
}

Ceilings read_ceilings(const std::string& path) { return ceilings_from_json(read_json(path, "peak"), path); }

FoundCeilings find_ceilings(const std::string& peak_file, const std::string& gpu) {
  FoundCeilings found;
  if (!peak_file.empty()) {
    found.ceilings = read_ceilings(peak_file);
    return found;
  }
  if (gpu.empty() || !path_exists(default_peak_path(gpu))) return found;
  try {
    found.ceilings = read_ceilings(default_peak_path(gpu));
  } catch (const TraceError& e) {
    found.note = std::string(e.what()) + " Run `laptime peak --force` to measure again.";
  }
  return found;
}

}  // namespace laptime::trace
