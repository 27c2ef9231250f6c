// StderrCapture: for tests of what a component logs. Redirects fd 2 into a temporary file while
// it lives; Lines() restores stderr and returns what was written, a line each.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

namespace trainer::log::testing {

class StderrCapture {
 public:
  StderrCapture() {
    std::fflush(stderr);
    file_ = std::tmpfile();
    saved_ = dup(2);
    dup2(fileno(file_), 2);
  }
  ~StderrCapture() {
    Restore();
    std::fclose(file_);
  }
  StderrCapture(const StderrCapture&) = delete;
  StderrCapture& operator=(const StderrCapture&) = delete;

  std::vector<std::string> Lines() {
    Restore();
    std::fseek(file_, 0, SEEK_SET);
    std::vector<std::string> lines;
    std::string line;
    int c;
    while ((c = std::fgetc(file_)) != EOF) {
      if (c == '\n') {
        lines.push_back(line);
        line.clear();
      } else {
        line.push_back(static_cast<char>(c));
      }
    }
    if (!line.empty()) lines.push_back(line);
    return lines;
  }

 private:
  void Restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    dup2(saved_, 2);
    close(saved_);
    saved_ = -1;
  }
  FILE* file_ = nullptr;
  int saved_ = -1;
};

}  // namespace trainer::log::testing
