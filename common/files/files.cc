// ReadFile (see files.h).
#include "common/files/files.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace trainer::files {

StatusOr<std::string> ReadFile(const std::string& path) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::string reason = errno != 0 ? std::strerror(errno) : "cannot open the file";
    reason[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(reason[0])));  // Go's
    return NotFoundError("open " + path + ": " + reason);
  }
  std::ostringstream out;
  out << in.rdbuf();
  if (in.bad()) {
    return InternalError("read " + path + ": read error");
  }
  return out.str();
}

}  // namespace trainer::files
