// Unit tests for common/quantity: apimachinery's parse, canonical form and arithmetic.
#include "common/quantity/quantity.h"

#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

namespace trainer::quantity {
namespace {

std::string Canon(std::string_view in) {
  auto q = Quantity::Parse(in);
  REQUIRE(q.ok());
  return q->ToString();
}

TEST_CASE("canonical forms match apimachinery", "[quantity]") {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"500m", "500m"},     {"0.5", "500m"},
      {"1.0", "1"},         {"1000m", "1"},
      {"1500m", "1500m"},   {"1.5k", "1500"},
      {"2000", "2k"},       {"2k", "2k"},
      {"4Gi", "4Gi"},       {"1024Mi", "1Gi"},
      {"1536Mi", "1536Mi"}, {"100Mi", "100Mi"},
      {"1e3", "1e3"},       {"12e-3", "12e-3"},
      {"1E", "1E"},         {"0", "0"},
      {"-1", "-1"},         {"0.1", "100m"},
      {"1Ki", "1Ki"},       {"512Ki", "512Ki"},
      {"1023", "1023"},     {"0.5Gi", "512Mi"},
      {"100u", "100u"},     {"1n", "1n"},
      {".5", "500m"},       {"+2", "+2"} /* kept verbatim, as upstream's cached text */,
      {"3000000000", "3G"}, {"1.1Gi", "1181116006400m"},
  };
  for (const auto& [in, want] : cases) {
    INFO(in);
    CHECK(Canon(in) == want);
  }
}

TEST_CASE("bad quantities get apimachinery's errors", "[quantity]") {
  CHECK(Quantity::Parse("abc").status().message().find(
            "quantities must match the regular expression") == 0);
  CHECK(Quantity::Parse("1Qi").status().message() ==
        "quantities must match the regular expression "
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
  CHECK(Quantity::Parse("1mm").status().message() == "unable to parse quantity's suffix");
  // parseQuantityString stops at the second '.', which then fails the suffix scan.
  CHECK(Quantity::Parse("1.2.3").status().message().find(
            "quantities must match the regular expression") == 0);
  CHECK_FALSE(Quantity::Parse("").ok());
  CHECK(Quantity::Parse("-")->IsZero());  // upstream: a lone sign is zero
  CHECK_FALSE(Quantity::Parse("1 ").ok());
}

TEST_CASE("values round up like Quantity.Value and MilliValue", "[quantity]") {
  CHECK(Quantity::Parse("2.5")->Value() == 3);
  CHECK(Quantity::Parse("0.7")->Value() == 1);
  CHECK(Quantity::Parse("1500m")->MilliValue() == 1500);
  CHECK(Quantity::Parse("1n")->MilliValue() == 1);
  CHECK(Quantity::Parse("4Gi")->Value() == 4294967296LL);
  CHECK(Quantity::Parse("-1.5")->Value() == -2);
  CHECK(Quantity::Parse("100E")->Value() == INT64_MAX);  // saturates
}

TEST_CASE("arithmetic and comparison are exact", "[quantity]") {
  Quantity a = *Quantity::Parse("1");
  Quantity b = *Quantity::Parse("500m");
  CHECK((a + b).ToString() == "1500m");
  CHECK((b * 3).ToString() == "1500m");
  CHECK((*Quantity::Parse("4Gi") * 102).ToString() == "408Gi");
  CHECK((*Quantity::Parse("1Gi") + *Quantity::Parse("1Gi")).ToString() == "2Gi");
  CHECK((Quantity() + *Quantity::Parse("1Gi")).ToString() == "1Gi");
  CHECK(a > b);
  CHECK(*Quantity::Parse("1000m") == a);
  CHECK(*Quantity::Parse("1Ki") == *Quantity::Parse("1024"));
  CHECK(*Quantity::Parse("1E") > *Quantity::Parse("999P"));
  CHECK(*Quantity::Parse("-1") < Quantity());
}

// Parse's fast path for plain integers must give exactly what the general path gives: the same
// value, format and printed text, or the same error.
void CheckSameAsGeneral(const std::string& text) {
  INFO("\"" << text << "\"");
  StatusOr<Quantity> fast = Quantity::Parse(text);
  StatusOr<Quantity> general = Quantity::ParseGeneral(text);
  REQUIRE(fast.ok() == general.ok());
  if (!fast.ok()) {
    CHECK(fast.status().message() == general.status().message());
    return;
  }
  CHECK(*fast == *general);
  CHECK(fast->format() == general->format());
  CHECK(fast->ToString() == general->ToString());
  CHECK(fast->Value() == general->Value());
  CHECK(fast->MilliValue() == general->MilliValue());
}

TEST_CASE("the fast path for plain integers agrees with the general parse", "[quantity]") {
  const char* suffixes[] = {"",  "n",  "u",  "m",  "k",  "M",  "G",  "T",  "P",  "E",
                            "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "K", "i", "mi", "kk",
                            "e3", "E3", "e-2", " ", "Gi ", "."};
  std::vector<std::string> numbers = {"1", "7", "8", "9", "10", "1000", "1023", "1024", "4096",
                                      "8191", "1536", "999", "0", "00", "01", "+1", "-1", "1.5"};
  std::mt19937_64 random(20261129);
  for (size_t len = 1; len <= 20; ++len) {
    numbers.push_back(std::string(len, '9'));
    numbers.push_back("1" + std::string(len - 1, '0'));
    numbers.push_back(std::to_string(len) + std::string(len, '0'));
    std::string digits(1, static_cast<char>('1' + random() % 9));
    while (digits.size() < len) digits.push_back(static_cast<char>('0' + random() % 10));
    numbers.push_back(digits);
  }
  // Binary values on either side of 2^63, where the general path starts to cap.
  for (const char* edge : {"8589934591Gi", "8589934592Gi", "7Ei", "8Ei", "9007199254740991Ki",
                           "9007199254740992Ki", "8796093022207Mi", "8796093022208Mi"}) {
    CheckSameAsGeneral(edge);
  }
  for (const std::string& number : numbers) {
    for (const char* suffix : suffixes) {
      CheckSameAsGeneral(number + suffix);
    }
  }
}

TEST_CASE("numbers from JSON read as the text the client wrote", "[quantity]") {
  CHECK(Quantity::FromJson(json::Value(1.0))->ToString() == "1");
  CHECK(Quantity::FromJson(json::Value(0.5))->ToString() == "500m");
  CHECK(Quantity::FromJson(json::Value(0.1))->ToString() == "100m");
  CHECK(Quantity::FromJson(json::Value(int64_t{4}))->ToString() == "4");
  CHECK(Quantity::FromJson(json::Value("4Gi"))->ToString() == "4Gi");
  CHECK_FALSE(Quantity::FromJson(json::Value(true)).ok());
  CHECK_FALSE(Quantity::FromJson(json::Value::Object()).ok());
}

TEST_CASE("int or string", "[quantity]") {
  CHECK(IntOrString::FromJson(json::Value(3))->ToString() == "3");
  CHECK(IntOrString::FromJson(json::Value("auto"))->ToString() == "auto");
  CHECK(IntOrString::FromJson(json::Value(2.0))->is_int);
  CHECK_FALSE(IntOrString::FromJson(json::Value(2.5)).ok());
  CHECK(json::Write(IntOrString::FromInt(5).ToJson()) == "5");
}

}  // namespace
}  // namespace trainer::quantity
