// Base64 on OpenSSL's block coders (see base64.h).
#include "common/encoding/base64.h"

#include <openssl/evp.h>

namespace trainer::encoding {

std::string Base64Encode(std::string_view data) {
  std::string out(4 * ((data.size() + 2) / 3) + 1, '\0');  // + the NUL EVP_EncodeBlock writes
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(data.data()),
                          static_cast<int>(data.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

StatusOr<std::string> Base64Decode(std::string_view text) {
  std::string clean;
  clean.reserve(text.size());
  for (char c : text) {
    if (c != ' ' && c != '\t' && c != '\r' && c != '\n') {
      clean.push_back(c);
    }
  }
  if (clean.size() % 4 != 0) {
    return InvalidArgumentError("illegal base64 data: length is not a multiple of 4");
  }
  // EVP_DecodeBlock reads '=' as zero bits wherever it stands: only the last two may be padding.
  size_t pad = 0;
  while (pad < 2 && pad < clean.size() && clean[clean.size() - 1 - pad] == '=') {
    ++pad;
  }
  if (clean.find('=') < clean.size() - pad) {
    return InvalidArgumentError("illegal base64 data: misplaced padding");
  }
  std::string out(clean.size() / 4 * 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(clean.data()),
                          static_cast<int>(clean.size()));
  if (n < 0) {
    return InvalidArgumentError("illegal base64 data: invalid character");
  }
  out.resize(static_cast<size_t>(n) - pad);  // EVP_DecodeBlock counts the padding bytes
  return out;
}

StatusOr<std::string> Base64RawURLDecode(std::string_view text) {
  std::string std_text;
  std_text.reserve(text.size() + 2);
  for (char c : text) {
    if (c == '+' || c == '/' || c == '=' || c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      return InvalidArgumentError("illegal base64 data: invalid character");
    }
    std_text.push_back(c == '-' ? '+' : c == '_' ? '/' : c);
  }
  if (std_text.size() % 4 == 1) {
    return InvalidArgumentError("illegal base64 data: bad length");
  }
  std_text.append((4 - std_text.size() % 4) % 4, '=');
  return Base64Decode(std_text);
}

}  // namespace trainer::encoding
