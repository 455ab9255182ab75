#pragma once

// On a fatal signal (SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL) the process writes the signal and
// a backtrace to stderr before it dies, so a crash in production leaves more than its exit code:
// `addr2line -e <unstripped binary> -f -C <offset>` names each frame (the build tree keeps the
// unstripped binaries the package strips).

namespace gpureduce {

// `program` prefixes the report. Call once, early in main.
void InstallCrashHandler(const char* program);

}  // namespace gpureduce
