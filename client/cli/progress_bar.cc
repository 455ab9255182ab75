#include "client/cli/progress_bar.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/str_format.h"

namespace gpureduce::cli {
namespace {

constexpr auto kFirstDrawAfter = std::chrono::milliseconds(300);
constexpr auto kRedrawEvery = std::chrono::milliseconds(100);
constexpr int kBarWidth = 30;

bool StderrIsATerminal() {
  const char* term = std::getenv("TERM");
  return isatty(STDERR_FILENO) == 1 && (term == nullptr || std::strcmp(term, "dumb") != 0);
}

}  // namespace

ProgressBar::ProgressBar(uint64_t total_bytes)
    : total_bytes_(total_bytes),
      enabled_(StderrIsATerminal()),
      start_(Clock::now()),
      last_draw_(start_) {}

void ProgressBar::Update(uint64_t bytes_done) {
  if (!enabled_) return;
  const Clock::time_point now = Clock::now();
  if (now - start_ < kFirstDrawAfter || now - last_draw_ < kRedrawEvery) return;
  last_draw_ = now;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  const double mb = bytes_done / 1e6;
  std::string line;
  if (total_bytes_ > 0) {
    const double fraction = std::min(1.0, double(bytes_done) / double(total_bytes_));
    const int filled = static_cast<int>(fraction * kBarWidth);
    line = absl::StrFormat("\r[%s%s] %5.1f%%  %.0f / %.0f MB  %.0f MB/s ", std::string(filled, '#'),
                           std::string(kBarWidth - filled, '.'), 100 * fraction, mb,
                           total_bytes_ / 1e6, mb / seconds);
  } else {
    line = absl::StrFormat("\r%.0f MB sent  %.0f MB/s ", mb, mb / seconds);
  }
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressBar::Finish() {
  if (!drawn_) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace gpureduce::cli
