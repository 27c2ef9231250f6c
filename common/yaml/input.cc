// go-yaml v2 readerc.go's character checks, with its texts.
#include "common/yaml/input.h"

#include <cstdint>
#include <string>

namespace trainer::yaml::internal {
namespace {

// YAML's printable set: what go-yaml allows outside "control characters are not allowed".
bool IsPrintable(uint32_t c) {
  return c == 0x09 || c == 0x0A || c == 0x0D || (c >= 0x20 && c <= 0x7E) || c == 0x85 ||
         (c >= 0xA0 && c <= 0xD7FF) || (c >= 0xE000 && c <= 0xFFFD) ||
         (c >= 0x10000 && c <= 0x10FFFF);
}

}  // namespace

Status CheckInputCharacters(std::string_view text) {
  size_t i = 0;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") i = 3;  // a UTF-8 byte order mark is skipped
  int line = 1;
  int column = 1;
  auto fail = [&](std::string_view problem) {
    return InvalidArgumentError("yaml: line " + std::to_string(line) + ", column " +
                                std::to_string(column) + ": " + std::string(problem));
  };
  while (i < text.size()) {
    auto octet = static_cast<unsigned char>(text[i]);
    size_t width;
    uint32_t value;
    if ((octet & 0x80) == 0x00) {
      width = 1;
      value = octet;
    } else if ((octet & 0xE0) == 0xC0) {
      width = 2;
      value = octet & 0x1F;
    } else if ((octet & 0xF0) == 0xE0) {
      width = 3;
      value = octet & 0x0F;
    } else if ((octet & 0xF8) == 0xF0) {
      width = 4;
      value = octet & 0x07;
    } else {
      return fail("invalid leading UTF-8 octet");
    }
    if (width > text.size() - i) return fail("incomplete UTF-8 octet sequence");
    for (size_t k = 1; k < width; ++k) {
      auto trailing = static_cast<unsigned char>(text[i + k]);
      if ((trailing & 0xC0) != 0x80) return fail("invalid trailing UTF-8 octet");
      value = (value << 6) | (trailing & 0x3F);
    }
    if ((width == 2 && value < 0x80) || (width == 3 && value < 0x800) ||
        (width == 4 && value < 0x10000)) {
      return fail("invalid length of a UTF-8 sequence");
    }
    if ((value >= 0xD800 && value <= 0xDFFF) || value > 0x10FFFF) {
      return fail("invalid Unicode character");
    }
    if (!IsPrintable(value)) return fail("control characters are not allowed");
    i += width;
    if (value == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return OkStatus();
}

}  // namespace trainer::yaml::internal
