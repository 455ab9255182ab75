#include "common/crash_handler.h"

#include <execinfo.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <initializer_list>

namespace gpureduce {
namespace {

const char* program_name = "gpureduce";

void Write(const char* text) { (void)!write(STDERR_FILENO, text, strlen(text)); }

// Only async-signal-safe calls: write, backtrace (its first call, made at install time, loads
// what it needs), backtrace_symbols_fd, raise.
void OnFatalSignal(int signal_number) {
  Write(program_name);
  Write(": fatal signal ");
  Write(strsignal(signal_number));
  Write("; backtrace (addr2line -e <unstripped binary> -f -C <offset>):\n");
  void* frames[64];
  const int count = backtrace(frames, 64);
  backtrace_symbols_fd(frames, count, STDERR_FILENO);
  raise(signal_number);  // the default action, now restored: the core dump or the exit status
}

}  // namespace

void InstallCrashHandler(const char* program) {
  program_name = program;
  void* warm[1];
  backtrace(warm, 1);
  struct sigaction action {};
  action.sa_handler = OnFatalSignal;
  action.sa_flags = SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  for (int signal_number : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL}) {
    sigaction(signal_number, &action, nullptr);
  }
}

}  // namespace gpureduce
