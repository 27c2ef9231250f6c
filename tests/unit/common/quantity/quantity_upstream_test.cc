// Quantity cases from apimachinery's quantity_test.go (parse, canonical emit, rounding, caps),
// Quantity.String()'s verbatim text, JSON numbers, and property checks on random quantities.
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <string>

#include "common/quantity/quantity.h"

namespace trainer::quantity {
namespace {

Quantity Q(std::string_view text) {
  auto q = Quantity::Parse(text);
  INFO(text << ": " << q.status().ToString());
  REQUIRE(q.ok());
  return *q;
}

TEST_CASE("parse values match apimachinery's table", "[unit][quantity]") {
  struct Case {
    const char* in;
    const char* same_value_as;  // a plain spelling of the expected value
    const char* prints;         // String()
  };
  const Case cases[] = {
      {"0", "0", "0"},
      {"0n", "0", "0"},
      {"0Ki", "0", "0"},
      {"0e3", "0", "0"},
      {"1Ki", "1024", "1Ki"},
      {"8Ki", "8192", "8Ki"},
      {"7Mi", "7340032", "7Mi"},
      {"3Ei", "3458764513820540928", "3Ei"},
      {"5n", "0.000000005", "5n"},
      {"50k", "50000", "50k"},
      {"1E", "1000000000000000000", "1E"},
      {"1E-3", "0.001", "1E-3"},
      {"1e3", "1000", "1e3"},
      {"100.035k", "100035", "100.035k"},  // scale 0, digits end in no 000: kept verbatim
      {"0.001", "1m", "1m"},
      {"0.0005k", "500m", "500m"},
      {"0.00050k", "500m", "500m"},
      {"0.50000", "500m", "500m"},
      {"0.5e0", "500m", "500e-3"},
      {"0.5e-1", "50m", "50e-3"},
      {"1.2e3", "1200", "1200"},
      {"1.3E+6", "1300000", "1300e3"},
      {"1.53E12", "1530000000000", "1530e9"},
      {"9.01", "9010m", "9010m"},
      {"8.1k", "8100", "8100"},
      {"7.123456M", "7123456", "7.123456M"},
      {"6.987654321G", "6987654321", "6.987654321G"},
      {"7.1234567M", "7123456.7", "7123456700m"},
      {"2.5P", "2500T", "2500T"},
      {"1.01E", "1010P", "1010P"},
      {"3.001n", "4n", "4n"},
      {"1.1E-9", "2n", "2e-9"},
      {"0.0000000001", "1n", "1n"},
      {"0.00000000050", "1n", "1n"},
      {"0.9n", "1n", "1n"},
      {"0.00000012345", "124n", "124n"},
      {"12E", "12000P", "12E"},
      {"100.035Ki", "102435.84", "102435840m"},
      {"0.5Mi", "524288", "512Ki"},
      {"0.05Gi", "53687091.2", "53687091200m"},
      {"0.025Ti", "27487790694.4", "27487790694400m"},
      {"0.000000000001Ki", "2n", "2n"},
      {".001", "1m", "1m"},
      {".0001k", "100m", "100m"},
      {"1.", "1", "1."},
      {"1.G", "1000000000", "1.G"},
      {"1.0", "1", "1"},
      {"-1", "-1", "-1"},
      {"-0.5", "-500m", "-500m"},
      {"-1Ki", "-1024", "-1Ki"},
      {"-3.001n", "-4n", "-4n"},
      {"010", "10", "010"},
      {"1000E", "1e21", "1e21"},
      {"18446744073709551616", "18446744073709551616", "18446744073709551616"},
  };
  for (const Case& c : cases) {
    INFO(c.in);
    Quantity q = Q(c.in);
    CHECK(q == Q(c.same_value_as));
    CHECK(q.ToString() == c.prints);
  }
}

TEST_CASE("binary quantities cap at 2^63-1", "[unit][quantity]") {
  for (const char* in : {"9Ei", "9223372036854775807Ki", "8Ei"}) {
    Quantity q = Q(in);
    CHECK(q.Value() == INT64_MAX);
    CHECK(q.format() == Quantity::Format::kBinarySI);
    CHECK(q.ToString() == "9223372036854775807");
  }
  CHECK(Q("-9Ei").Value() == -INT64_MAX);
}

TEST_CASE("emit then parse gives the canonical form", "[unit][quantity]") {
  // apimachinery's TestQuantityParseEmit: the alternate spelling prints as the expected one.
  const std::pair<const char*, const char*> cases[] = {
      {"1024Mi", "1Gi"},  {"307200Ki", "300Mi"}, {"1025024Mi", "1001Gi"},
      {"1024Gi", "1Ti"},  {"5000m", "5"},        {"0.5", "500m"},
      {"1000M", "1G"},    {"0.001T", "1G"},      {"1000000k", "1G"},
      {"1000u", "1m"},    {"1.08", "1080m"},     {"1080000000n", "1080m"},
      {".001e12", "1e9"}, {"0.001e0", "1e-3"},   {"1000e-12", "1e-9"},
      {"00", "0"},        {"1536Mi", "1536Mi"},  {"1025", "1025"},
      {"0.5Gi", "512Mi"}, {"1.5Gi", "1536Mi"},   {"1.1Gi", "1181116006400m"},
      {"2000", "2k"},     {"3000000000", "3G"},  {"1000m", "1"},
  };
  for (const auto& [in, want] : cases) {
    INFO(in);
    CHECK(Q(in).ToString() == want);
    CHECK(Q(want).ToString() == want);
  }
}

TEST_CASE("parse errors use apimachinery's texts", "[unit][quantity]") {
  const std::string format_wrong =
      "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
  const std::pair<const char*, std::string> cases[] = {
      {"", format_wrong},
      {"1.1.M", format_wrong},
      {"1+1.0M", format_wrong},
      {"aoeu", format_wrong},
      {" 1", format_wrong},
      {"1 ", format_wrong},
      {"1e+5e", format_wrong},
      {"1Ki ", format_wrong},
      {"0.1mi", "unable to parse quantity's suffix"},
      {"0.1am", format_wrong},
      {".5i", "unable to parse quantity's suffix"},
      {"1i", "unable to parse quantity's suffix"},
      {"-3.01i", "unable to parse quantity's suffix"},
      {"-3.01e-", "unable to parse quantity's suffix"},
      {"1e", "unable to parse quantity's suffix"},
      {"1k3", "unable to parse quantity's suffix"},
      {"1e99999999999999999999", "unable to parse quantity's suffix"},
  };
  for (const auto& [in, want] : cases) {
    INFO("[" << in << "]");
    auto q = Quantity::Parse(in);
    REQUIRE_FALSE(q.ok());
    CHECK(q.status().code() == StatusCode::kInvalidArgument);
    CHECK(q.status().message() == want);
  }
  // Like upstream, a lone sign or dot is zero rather than an error.
  for (const char* in : {"-", "+", ".", "-.", "+0"}) {
    INFO(in);
    CHECK(Q(in).IsZero());
  }
}

TEST_CASE("Value and MilliValue round away from zero and saturate", "[unit][quantity]") {
  const struct {
    const char* in;
    int64_t value;
    int64_t milli;
  } cases[] = {
      {"1.5", 2, 1500},
      {"1500m", 2, 1500},
      {"1n", 1, 1},
      {"-1n", -1, -1},
      {"-1.5", -2, -1500},
      {"4Gi", 4294967296LL, 4294967296000LL},
      {"0", 0, 0},
      {"1m", 1, 1},
      {"999u", 1, 1},
      {"1E", 1000000000000000000LL, INT64_MAX},
      {"100E", INT64_MAX, INT64_MAX},
      {"-100E", INT64_MIN, INT64_MIN},
      {"1e-9", 1, 1},
      {"9223372036854775807", INT64_MAX, INT64_MAX},
  };
  for (const auto& c : cases) {
    INFO(c.in);
    Quantity q = Q(c.in);
    CHECK(q.Value() == c.value);
    CHECK(q.MilliValue() == c.milli);
  }
}

TEST_CASE("arithmetic keeps formats like Quantity.Add and Mul", "[unit][quantity]") {
  CHECK((Q("1") + Q("500m")).ToString() == "1500m");
  CHECK((Q("1Ki") + Q("1")).ToString() == "1025");
  CHECK((Q("1Mi") + Q("1Mi")).ToString() == "2Mi");
  CHECK((Q("0") + Q("1Gi")).ToString() == "1Gi");  // a zero receiver takes the other's format
  CHECK((Q("1e3") + Q("1k")).ToString() == "2e3");
  CHECK((Q("+2") + Q("0")).ToString() == "2");  // results print canonically
  CHECK((Q("500m") * 4).ToString() == "2");
  CHECK((Q("4Gi") * 0).ToString() == "0");
  CHECK((Q("1") - Q("1500m")).ToString() == "-500m");
  CHECK((Q("1E") * INT64_MAX).Value() == INT64_MAX);
  CHECK((Q("1E") * INT64_MIN).Value() == INT64_MIN);
  Quantity sum;
  for (int i = 0; i < 1000; ++i) sum += Q("1m");
  CHECK(sum.ToString() == "1");
  CHECK((Q("1e100") + Q("1n")) > Q("1e100"));  // far-apart terms still round up, never down
}

TEST_CASE("comparison is by value", "[unit][quantity]") {
  CHECK(Q("1Ki") == Q("1024"));
  CHECK(Q("1k") < Q("1Ki"));
  CHECK(Q("1E") > Q("999P"));
  CHECK(Q("-1") < Q("0"));
  CHECK(Q("-2") < Q("-1"));
  CHECK(Q("-1E") < Q("-1"));
  CHECK(Q("1n") > Q("0"));
  CHECK(Q("0.1") == Q("100m"));
  CHECK(Q("1e21") > Q("999E"));
  CHECK(Q("12345678901234567890123") > Q("12345678901234567890122"));
}

TEST_CASE("JSON numbers read as Go's encoding/json writes them", "[unit][quantity]") {
  const std::pair<double, const char*> cases[] = {
      {1.0, "1"},
      {0.5, "500m"},
      {0.1, "100m"},
      {2.5, "2500m"},
      {1e-7, "100e-9"},
      {1e21, "1e+21"},
      {123456.789, "123456.789"},
      {1.25, "1250m"},
      {-0.25, "-250m"},
      {0.0, "0"},
  };
  for (const auto& [d, want] : cases) {
    INFO(d);
    auto q = Quantity::FromJson(json::Value(d));
    REQUIRE(q.ok());
    CHECK(q->ToString() == want);
  }
  CHECK(Quantity::FromJson(json::Value(int64_t{2000}))->ToString() == "2k");
  CHECK(Quantity::FromJson(json::Value(" 4Gi "))->ToString() == "4Gi");  // TrimSpace, as upstream
  CHECK(Quantity::FromJson(json::Value())->IsZero());
  CHECK(Quantity::FromJson(json::Value(true)).status().message().find("quantities must match") ==
        0);
  CHECK_FALSE(Quantity::FromJson(json::Value::Array()).ok());
  CHECK_FALSE(Quantity::FromJson(json::Value(std::nan(""))).ok());
}

TEST_CASE("IntOrString follows intstr", "[unit][quantity]") {
  CHECK(IntOrString::FromJson(json::Value(int64_t{2147483647}))->int_value == 2147483647);
  CHECK_FALSE(IntOrString::FromJson(json::Value(int64_t{2147483648})).ok());
  CHECK_FALSE(IntOrString::FromJson(json::Value(int64_t{-2147483649})).ok());
  CHECK(IntOrString::FromJson(json::Value("25%"))->str == "25%");
  CHECK_FALSE(IntOrString::FromJson(json::Value(1.5)).ok());
  CHECK_FALSE(IntOrString::FromJson(json::Value()).ok());
  CHECK(json::Write(IntOrString::FromString("auto").ToJson()) == "\"auto\"");
  CHECK(IntOrString::FromInt(3) == *IntOrString::FromJson(json::Value(3)));
}

TEST_CASE("random quantities round trip through their text", "[unit][quantity]") {
  std::mt19937_64 rng(5);
  const char* suffixes[] = {"",   "n",  "u",  "m",  "k",  "M",  "G",   "T",  "P",  "E",   "Ki",
                            "Mi", "Gi", "Ti", "Pi", "Ei", "e3", "e-3", "E6", "e0", "e-9", "e21"};
  for (int i = 0; i < 20000; ++i) {
    std::string text;
    if (rng() % 4 == 0) text += "-";
    text += std::to_string(rng() % 1000000);
    if (rng() % 2 == 0) text += "." + std::to_string(rng() % 100000);
    text += suffixes[rng() % std::size(suffixes)];
    INFO(text);
    Quantity q = Q(text);
    std::string printed = q.ToString();
    Quantity back = Q(printed);
    REQUIRE(back == q);
    REQUIRE(back.ToString() == printed);
    // Canonical text is a fixed point even after arithmetic.
    Quantity doubled = q + q;
    REQUIRE(doubled == q * 2);
    // (Parsing caps BinarySI text at 2^63-1, so only values below that read back exactly.)
    if (doubled.format() != Quantity::Format::kBinarySI ||
        (doubled.Value() > INT64_MIN && doubled.Value() < INT64_MAX)) {
      REQUIRE(Q(doubled.ToString()) == doubled);
    }
    REQUIRE((doubled - q) == q);
    REQUIRE((q <=> doubled) == (q.Sign() > 0   ? std::strong_ordering::less
                                : q.Sign() < 0 ? std::strong_ordering::greater
                                               : std::strong_ordering::equal));
  }
}

TEST_CASE("hostile quantity texts are total", "[unit][quantity]") {
  std::string long_digits(5000, '7');
  CHECK(Q(long_digits) > Q("1e4998"));
  CHECK(Q("0." + std::string(5000, '0') + "1").ToString() == "1n");
  CHECK(Quantity::Parse("1e999999999").ok());
  CHECK_FALSE(Quantity::Parse("1e9999999999").ok());
  CHECK(Q("1e999999999").Value() == INT64_MAX);
  CHECK(Q("1e-999999999").ToString() == "1e-9");
  std::mt19937 rng(9);
  const std::string alphabet = "0123456789.+-eEinumkKMGTP xi";
  for (int i = 0; i < 20000; ++i) {
    std::string s;
    for (size_t n = rng() % 12; n > 0; --n) s.push_back(alphabet[rng() % alphabet.size()]);
    auto q = Quantity::Parse(s);
    if (q.ok()) {
      INFO(s);
      CHECK(Q(q->ToString()) == *q);
    }
  }
}

}  // namespace
}  // namespace trainer::quantity
