// common/encoding/base64: RFC 4648 vectors both ways and Go's StdEncoding strictness.
#include "common/encoding/base64.h"

#include <catch2/catch.hpp>

namespace trainer::encoding {
namespace {

TEST_CASE("Base64Encode: RFC 4648 test vectors", "[encoding]") {
  CHECK(Base64Encode("") == "");
  CHECK(Base64Encode("f") == "Zg==");
  CHECK(Base64Encode("fo") == "Zm8=");
  CHECK(Base64Encode("foo") == "Zm9v");
  CHECK(Base64Encode("foobar") == "Zm9vYmFy");
  CHECK(Base64Encode(std::string("\0\xff", 2)) == "AP8=");
}

TEST_CASE("Base64Decode: vectors, white space and binary data", "[encoding]") {
  CHECK(*Base64Decode("") == "");
  CHECK(*Base64Decode("Zg==") == "f");
  CHECK(*Base64Decode("Zm8=") == "fo");
  CHECK(*Base64Decode("Zm9vYmFy") == "foobar");
  CHECK(*Base64Decode("aGVs\n bG8g\r\nd29y\tbGQ=") == "hello world");
  CHECK(*Base64Decode("AP8=") == std::string("\0\xff", 2));
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  CHECK(*Base64Decode(Base64Encode(all)) == all);
}

TEST_CASE("Base64Decode: rejects what Go's StdEncoding rejects", "[encoding]") {
  for (const char* bad :
       {"!!", "Zg=", "Zg", "Z===", "Zm=v", "=Zm9", "Zm9v*A==", "aGVsbG8-", "a_8="}) {
    INFO(bad);
    StatusOr<std::string> s = Base64Decode(bad);
    CHECK_FALSE(s.ok());
    if (!s.ok()) CHECK(s.status().code() == StatusCode::kInvalidArgument);
  }
}

TEST_CASE("Base64RawURLDecode: the JWT segment alphabet, unpadded", "[encoding]") {
  CHECK(*Base64RawURLDecode("") == "");
  CHECK(*Base64RawURLDecode("Zg") == "f");
  CHECK(*Base64RawURLDecode("Zm8") == "fo");
  CHECK(*Base64RawURLDecode("-_8") == "\xfb\xff");
  CHECK(*Base64RawURLDecode("eyJhbGciOiJFUzI1NiJ9") == R"({"alg":"ES256"})");
  for (const char* bad : {"Zg==", "+/8", "Z", "Zm 9v", "Zm9v!"}) {
    INFO(bad);
    CHECK_FALSE(Base64RawURLDecode(bad).ok());
  }
}

}  // namespace
}  // namespace trainer::encoding
