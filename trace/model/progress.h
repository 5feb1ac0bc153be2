// Long work shows progress: one line on standard error, rewritten in place, once the work has run
// for kDelay seconds: what it is doing and how far ("reading the trace: 1,250,000 rows, 4 s",
// "reading reports: 12 of 40, 9 s"). Nothing when standard error is not a terminal, or with
// --quiet; the line is erased before the report is printed and when the work ends, so none of it
// stays in what the command prints.
//
// A command holds one Progress for its work. Everything else only calls the static hooks, which
// do nothing when no Progress is held: cheap enough for a reader's every row (a thread-local
// count, the lock taken once in 65,536 rows), safe from any thread. A ticker thread redraws the
// line every kEvery seconds, so a phase that calls no hook for a while still shows its time.
// While a Tally lives (the job view's reports done) it owns the line: the phases and counts of
// the work below it (each report's reader, on several threads at once) are not shown.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace laptime::trace {

class Progress {
 public:
  enum class Mode { Terminal, Quiet };    // Terminal: shown when the stream is a terminal
  using Clock = std::function<double()>;  // seconds, monotonic
  static constexpr double kDelay = 2.0;   // nothing before the work has run this long
  static constexpr double kEvery = 0.1;   // the line redrawn at most this often

  // The command's: on `out`, shown when `out` is a terminal and the mode is not Quiet, redrawn by
  // a ticker thread. One Progress at a time: a second one while the first lives shows nothing.
  explicit Progress(Mode mode, std::FILE* out = stderr);
  // Tests: `terminal` says whether to show it, `clock` tells the time, and no ticker runs (call
  // tick() to redraw when due).
  Progress(std::FILE* out, bool terminal, Clock clock);
  ~Progress();  // erases the line
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Redraws the line when it is due (shown, kDelay past the start, kEvery past the last draw).
  void tick();

  // The hooks.
  static void phase(const std::string& what);                          // a new phase, its count reset
  static void count(uint64_t done, uint64_t total, const char* unit);  // "done of total unit" (total 0: "done unit")
  static void row() {                                                  // one more row read
    if (++rows_here_ % kRowBatch == 0) rows(kRowBatch);
  }
  // Erases the line before the command prints, and keeps it away until the next phase begins.
  static void clear();

  // Owns the line while it lives: "what: done of total unit".
  class Tally {
   public:
    Tally(const std::string& what, uint64_t total, const char* unit);
    ~Tally();
    Tally(const Tally&) = delete;
    Tally& operator=(const Tally&) = delete;
    void step();  // one more done, from any thread

   private:
    bool owns_ = false;
  };

 private:
  static constexpr uint64_t kRowBatch = 65536;
  static void rows(uint64_t n);
  void draw_locked(double now);  // writes the line (mutex_ held)
  void erase_locked();           // erases it (mutex_ held)
  std::string line_locked(double now) const;

  std::FILE* out_;
  bool shown_ok_;  // a terminal, not --quiet, the only Progress
  Clock clock_;
  double start_ = 0, last_draw_ = -1;
  bool drawn_ = false;
  bool paused_ = false;  // clear() until the next phase()
  std::mutex mutex_;
  std::string phase_;
  uint64_t done_ = 0, total_ = 0;
  std::string unit_;
  int tallies_ = 0;  // Tally objects alive: the hooks below them are not shown
  // The ticker.
  std::thread ticker_;
  std::condition_variable stop_cv_;
  bool stop_ = false;

  static thread_local uint64_t rows_here_;
};

}  // namespace laptime::trace
