#include "trace/model/progress.h"

#include <unistd.h>

#include <atomic>
#include <chrono>

#include "trace/model/format.h"
#include "trace/model/text.h"

namespace laptime::trace {

namespace {

std::atomic<Progress*> current{nullptr};

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// 1250000 -> "1,250,000": a count read at a glance.
std::string grouped(uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace

thread_local uint64_t Progress::rows_here_ = 0;

Progress::Progress(Mode mode, std::FILE* out)
    : Progress(out, mode == Mode::Terminal && out && isatty(fileno(out)) == 1, steady_seconds) {
  if (!shown_ok_) return;
  ticker_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stop_cv_.wait_for(lock, std::chrono::duration<double>(kEvery), [this] { return stop_; })) {
      draw_locked(clock_());
    }
  });
}

Progress::Progress(std::FILE* out, bool terminal, Clock clock) : out_(out), clock_(std::move(clock)) {
  Progress* none = nullptr;
  shown_ok_ = terminal && current.compare_exchange_strong(none, this);
  start_ = clock_();
}

Progress::~Progress() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    erase_locked();
  }
  stop_cv_.notify_all();
  if (ticker_.joinable()) ticker_.join();
  Progress* self = this;
  current.compare_exchange_strong(self, nullptr);
}

void Progress::tick() {
  const std::lock_guard<std::mutex> lock(mutex_);
  draw_locked(clock_());
}

std::string Progress::line_locked(double now) const {
  std::string line = phase_.empty() ? "working" : phase_;
  if (done_ || total_) {
    line += ": " + grouped(done_);
    if (total_) line += " of " + grouped(total_);
    if (!unit_.empty()) line += " " + unit_;
  }
  line += detail::format(", %.0f s", now - start_);
  // One line of a terminal, whatever a phase names (a report's file name is data: escaped).
  line = escape_name(line);
  if (line.size() > 78) line = utf8_prefix(line, 77) + "~";
  return line;
}

void Progress::draw_locked(double now) {
  if (!shown_ok_ || stop_ || paused_ || now - start_ < kDelay || (last_draw_ >= 0 && now - last_draw_ < kEvery)) return;
  last_draw_ = now;
  drawn_ = true;
  std::fprintf(out_, "\r%s\x1b[K", line_locked(now).c_str());
  std::fflush(out_);
}

void Progress::erase_locked() {
  if (!drawn_) return;
  std::fprintf(out_, "\r\x1b[K");
  std::fflush(out_);
  drawn_ = false;
  last_draw_ = -1;  // drawn again at once if the work goes on
}

void Progress::phase(const std::string& what) {
  Progress* p = current.load();
  if (!p) return;
  const std::lock_guard<std::mutex> lock(p->mutex_);
  if (p->tallies_) return;
  p->paused_ = false;
  p->phase_ = what;
  p->done_ = p->total_ = 0;
  p->unit_.clear();
}

void Progress::count(uint64_t done, uint64_t total, const char* unit) {
  Progress* p = current.load();
  if (!p) return;
  const std::lock_guard<std::mutex> lock(p->mutex_);
  if (p->tallies_) return;
  p->done_ = done;
  p->total_ = total;
  p->unit_ = unit;
}

void Progress::rows(uint64_t n) {
  Progress* p = current.load();
  if (!p) return;
  const std::lock_guard<std::mutex> lock(p->mutex_);
  if (p->tallies_) return;
  if (p->unit_ != "rows") {
    p->done_ = 0;
    p->total_ = 0;
    p->unit_ = "rows";
  }
  p->done_ += n;
}

void Progress::clear() {
  Progress* p = current.load();
  if (!p) return;
  const std::lock_guard<std::mutex> lock(p->mutex_);
  p->erase_locked();
  p->paused_ = true;
}

Progress::Tally::Tally(const std::string& what, uint64_t total, const char* unit) {
  Progress* p = current.load();
  if (!p) return;
  const std::lock_guard<std::mutex> lock(p->mutex_);
  if (p->tallies_++) return;  // an outer one keeps the line
  owns_ = true;
  p->phase_ = what;
  p->done_ = 0;
  p->total_ = total;
  p->unit_ = unit;
}

Progress::Tally::~Tally() {
  Progress* p = current.load();
  if (!p) return;
  const std::lock_guard<std::mutex> lock(p->mutex_);
  --p->tallies_;
}

void Progress::Tally::step() {
  Progress* p = current.load();
  if (!p || !owns_) return;
  const std::lock_guard<std::mutex> lock(p->mutex_);
  ++p->done_;
}

}  // namespace laptime::trace
