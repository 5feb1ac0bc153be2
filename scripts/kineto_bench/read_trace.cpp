// laptime's Kineto reader alone on one trace (load_kineto_json: parse, keep, finalize), its time
// and MB/s of JSON (the decoded bytes, for a .json.gz), for docs/PERF.md; peak RSS from the shell's
// time. Built against a host build's libraries:
//
//   g++ -O2 -std=c++17 -I. scripts/kineto_bench/read_trace.cpp build-host/trace/liblaptime_trace_read.a \
//     build-host/trace/liblaptime_trace_model.a build-host/core/liblaptime_host.a -lsqlite3 -lz -o /tmp/read_trace
//   /usr/bin/time -f '%e s, %M KB' /tmp/read_trace TRACE.json[.gz]
#include <chrono>
#include <cstdio>

#include "trace/read/byte_source.h"
#include "trace/read/kineto_json.h"

int main(int argc, char** argv) {
  if (argc != 2) return std::fprintf(stderr, "usage: read_trace TRACE.json[.gz]\n"), 2;
  uint64_t bytes = 0;
  {
    laptime::trace::ByteSource src(argv[1]);
    while (!src.next().empty()) {
    }
    bytes = src.decoded();
  }
  const auto t0 = std::chrono::steady_clock::now();
  const laptime::trace::Trace t = laptime::trace::load_kineto_json(argv[1]);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("laptime %zu kernels, %zu calls, %zu ranges; %.1f MB of JSON in %.2f s: %.0f MB/s\n", t.kernels.size(),
              t.api_calls.size(), t.nvtx.size(), bytes / 1e6, s, bytes / 1e6 / s);
  return 0;
}
