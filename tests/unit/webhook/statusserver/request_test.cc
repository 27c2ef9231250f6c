// The status request codec (webhook/statusserver/request.h) against Go: every row's expected
// output is what Go 1.26's encoding/json (json.NewDecoder(body).Decode, then
// json.NewEncoder(w).Encode) and k8s.io/apimachinery v0.36.3's metav1.Time produce for the same
// body, as upstream's handler does; nullptr where Go returns an error (upstream: 422).
#include "webhook/statusserver/request.h"

#include <catch2/catch.hpp>

namespace trainer::statusserver {
namespace {

struct Row {
  const char* body;
  const char* want;  // nullptr: decode error
};

const Row kRows[] = {
    {"", nullptr},
    {"   ", nullptr},
    {"null", "{}\n"},
    {"nullx", "{}\n"},
    {"{}", "{}\n"},
    {"{} trailing garbage", "{}\n"},
    {"{\"trainerStatus\":null}", "{}\n"},
    {"{\"trainerStatus\":{}}", "{\"trainerStatus\":{\"lastUpdatedTime\":null}}\n"},
    {"{\"trainerStatus\":{\"progressPercentage\":50,\"estimatedRemainingSeconds\":120,\"metrics\":["
     "{\"name\":\"loss\",\"value\":\"0.25\"}],\"lastUpdatedTime\":\"2025-03-04T05:06:07Z\"}}",
     "{\"trainerStatus\":{\"progressPercentage\":50,\"estimatedRemainingSeconds\":120,\"metrics\":["
     "{\"name\":\"loss\",\"value\":\"0.25\"}],\"lastUpdatedTime\":\"2025-03-04T05:06:07Z\"}}\n"},
    {"{\"trainerStatus\":{\"progressPercentage\":0,\"lastUpdatedTime\":\"2025-03-04T05:06:07.999+"
     "01:30\",\"extra\":{\"deep\":[1,2,{\"x\":null}]}},\"kind\":\"x\"}",
     "{\"trainerStatus\":{\"progressPercentage\":0,\"lastUpdatedTime\":\"2025-03-04T03:36:07Z\"}}"
     "\n"},
    {"{\"TRAINERSTATUS\":{\"ProgressPercentage\":7,\"lastupdatedtime\":\"2025-03-04T05:06:07Z\"}}",
     "{\"trainerStatus\":{\"progressPercentage\":7,\"lastUpdatedTime\":\"2025-03-04T05:06:07Z\"}}"
     "\n"},
    {"{\"trainer\xc5\xbftatus\":{\"progressPercentage\":7}}",
     "{\"trainerStatus\":{\"progressPercentage\":7,\"lastUpdatedTime\":null}}\n"},
    {"{\"trainerStatus\":{\"progressPercentage\":1},\"trainerStatus\":{"
     "\"estimatedRemainingSeconds\":2}}",
     "{\"trainerStatus\":{\"progressPercentage\":1,\"estimatedRemainingSeconds\":2,"
     "\"lastUpdatedTime\":null}}\n"},
    {"{\"trainerStatus\":{\"progressPercentage\":1},\"trainerStatus\":null}", "{}\n"},
    {"{\"trainerStatus\":{\"metrics\":[{\"name\":\"a\",\"value\":\"1\"},{\"name\":\"b\"}],"
     "\"metrics\":[{\"value\":\"2\"}]}}",
     "{\"trainerStatus\":{\"metrics\":[{\"name\":\"a\",\"value\":\"2\"}],\"lastUpdatedTime\":null}}"
     "\n"},
    {"{\"trainerStatus\":{\"metrics\":[]}}", "{\"trainerStatus\":{\"lastUpdatedTime\":null}}\n"},
    {"{\"trainerStatus\":{\"metrics\":[null,{}]}}",
     "{\"trainerStatus\":{\"metrics\":[{},{}],\"lastUpdatedTime\":null}}\n"},
    {"{\"trainerStatus\":{\"metrics\":null}}", "{\"trainerStatus\":{\"lastUpdatedTime\":null}}\n"},
    {"{\"trainerStatus\":{\"progressPercentage\":50.0}}", nullptr},
    {"{\"trainerStatus\":{\"progressPercentage\":5e1}}", nullptr},
    {"{\"trainerStatus\":{\"progressPercentage\":\"50\"}}", nullptr},
    {"{\"trainerStatus\":{\"progressPercentage\":2147483648}}", nullptr},
    {"{\"trainerStatus\":{\"progressPercentage\":-2147483648}}",
     "{\"trainerStatus\":{\"progressPercentage\":-2147483648,\"lastUpdatedTime\":null}}\n"},
    {"{\"trainerStatus\":{\"progressPercentage\":-0}}",
     "{\"trainerStatus\":{\"progressPercentage\":0,\"lastUpdatedTime\":null}}\n"},
    {"{\"trainerStatus\":{\"progressPercentage\":01}}", nullptr},
    {"{\"trainerStatus\":{\"progressPercentage\":null}}",
     "{\"trainerStatus\":{\"lastUpdatedTime\":null}}\n"},
    {"{\"trainerStatus\":{\"progressPercentage\":true}}", nullptr},
    {"{\"trainerStatus\":{\"metrics\":[{\"name\":\"loss\",\"value\":0.5}]}}", nullptr},
    {"{\"trainerStatus\":{\"metrics\":{}}}", nullptr},
    {"{\"trainerStatus\":{\"metrics\":[5]}}", nullptr},
    {"{\"trainerStatus\":5}", nullptr},
    {"[]", nullptr},
    {"\"x\"", nullptr},
    {"{\"trainerStatus\":{\"progressPercentage\":5,}}", nullptr},
    {"{\"trainerStatus\":{\"progressPercentage\":5}", nullptr},
    {"{\"a\":[1,2,]}", nullptr},
    {"{\"a\":tru}", nullptr},
    {"{\"a\":\"\\x\"}", nullptr},
    {"{\"a\":\"tab\x09here\"}", nullptr},
    {"\xef\xbb\xbf{}", nullptr},
    {"{\"trainerStatus\":{\"lastUpdatedTime\":\"2024-02-29T23:59:59Z\"}}",
     "{\"trainerStatus\":{\"lastUpdatedTime\":\"2024-02-29T23:59:59Z\"}}\n"},
    {"{\"trainerStatus\":{\"lastUpdatedTime\":\"2023-02-29T00:00:00Z\"}}", nullptr},
    {"{\"trainerStatus\":{\"lastUpdatedTime\":\"2024-01-01 00:00:00Z\"}}", nullptr},
    {"{\"trainerStatus\":{\"lastUpdatedTime\":\"2024-01-01t00:00:00Z\"}}", nullptr},
    {"{\"trainerStatus\":{\"lastUpdatedTime\":\"2024-01-01T00:00:00z\"}}", nullptr},
    {"{\"trainerStatus\":{\"lastUpdatedTime\":\"2024-01-01T00:00:60Z\"}}", nullptr},
    {"{\"trainerStatus\":{\"lastUpdatedTime\":\"2024-01-01T24:00:00Z\"}}", nullptr},
    {"{\"trainerStatus\":{\"lastUpdatedTime\":\"2024-01-01T00:00:00\"}}", nullptr},
    {"{\"trainerStatus\":{\"lastUpdatedTime\":\"2024-01-01T00:00:00+0100\"}}", nullptr},
    {"{\"trainerStatus\":{\"lastUpdatedTime\":\"2024-01-01T00:00:00,5-01:00\"}}",
     "{\"trainerStatus\":{\"lastUpdatedTime\":\"2024-01-01T01:00:00Z\"}}\n"},
    {"{\"trainerStatus\":{\"lastUpdatedTime\":\"2024-01-01T00:00:00.Z\"}}", nullptr},
    {"{\"trainerStatus\":{\"lastUpdatedTime\":\"0000-01-01T00:00:00+01:00\"}}",
     "{\"trainerStatus\":{\"lastUpdatedTime\":\"-0001-12-31T23:00:00Z\"}}\n"},
    {"{\"trainerStatus\":{\"lastUpdatedTime\":\"9999-12-31T23:00:00-01:00\"}}",
     "{\"trainerStatus\":{\"lastUpdatedTime\":\"10000-01-01T00:00:00Z\"}}\n"},
    {"{\"trainerStatus\":{\"lastUpdatedTime\":\"0001-01-01T00:00:00Z\"}}",
     "{\"trainerStatus\":{\"lastUpdatedTime\":null}}\n"},
    {"{\"trainerStatus\":{\"lastUpdatedTime\":\"0001-01-01T00:00:00.5Z\"}}",
     "{\"trainerStatus\":{\"lastUpdatedTime\":\"0001-01-01T00:00:00Z\"}}\n"},
    {"{\"trainerStatus\":{\"lastUpdatedTime\":1700000000}}", nullptr},
    {"{\"trainerStatus\":{\"lastUpdatedTime\":\"2024-01-01T00:00:00+24:00\"}}",
     "{\"trainerStatus\":{\"lastUpdatedTime\":\"2023-12-31T00:00:00Z\"}}\n"},
    {"{\"trainerStatus\":{\"lastUpdatedTime\":\"2024-01-01T00:00:00.1234567891234Z\"}}",
     "{\"trainerStatus\":{\"lastUpdatedTime\":\"2024-01-01T00:00:00Z\"}}\n"},
    {"{\"trainerStatus\":{\"metrics\":[{\"name\":\"<a&b>\\u2028\\u2029\",\"value\":"
     "\"\\ud800x\\ud83d\\ude00\\b\\f\\u0001\\/\"}],\"lastUpdatedTime\":\"2024-01-01T00:00:00Z\"}}",
     "{\"trainerStatus\":{\"metrics\":[{\"name\":\"\\u003ca\\u0026b\\u003e\\u2028\\u2029\","
     "\"value\":\"\xef\xbf\xbdx\xf0\x9f\x98\x80\\b\\f\\u0001/"
     "\"}],\"lastUpdatedTime\":\"2024-01-01T00:00:00Z\"}}\n"},
    {"{\"trainerStatus\":{\"metrics\":[{\"name\":\"bad\xff\xfe utf8 "
     "\xed\xa0\x80\",\"value\":\"\xc3\xa9\"}],\"lastUpdatedTime\":\"2024-01-01T00:00:00Z\"}}",
     "{\"trainerStatus\":{\"metrics\":[{\"name\":\"bad\xef\xbf\xbd\xef\xbf\xbd utf8 "
     "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\",\"value\":\"\xc3\xa9\"}],\"lastUpdatedTime\":\"2024-"
     "01-01T00:00:00Z\"}}\n"},
    {"{\"trainerStatus\":{\"metrics\":[{\"name\":\"\\udc00\\ud800\\ud800\\udc00\"}]}}",
     "{\"trainerStatus\":{\"metrics\":[{\"name\":\"\xef\xbf\xbd\xef\xbf\xbd\xf0\x90\x80\x80\"}],"
     "\"lastUpdatedTime\":null}}\n"},
    {"{\"trainerStatus\":{\"metrics\":[{\"name\":\"a\",\"value\":\"b\",\"name\":\"c\"}]}}",
     "{\"trainerStatus\":{\"metrics\":[{\"name\":\"c\",\"value\":\"b\"}],\"lastUpdatedTime\":null}}"
     "\n"},
    {"{\"x\":1.5e+10,\"y\":-0.0,\"z\":[true,false,null,{}],\"trainerStatus\":{"
     "\"progressPercentage\":3}}",
     "{\"trainerStatus\":{\"progressPercentage\":3,\"lastUpdatedTime\":null}}\n"},
    {"{\"x\":-}", nullptr},
    {"{\"x\":1.}", nullptr},
    {"{\"x\":1e}", nullptr},
    {"{\"trainerStatus\":{\"progressPercentage\":3}}    {",
     "{\"trainerStatus\":{\"progressPercentage\":3,\"lastUpdatedTime\":null}}\n"},
    {"{\"trainer\xe2\x84\xaaStatus\":{\"progressPercentage\":7}}", "{}\n"},
    {"{\"trainerStatuS\":{\"progressPercentage\":7}}",
     "{\"trainerStatus\":{\"progressPercentage\":7,\"lastUpdatedTime\":null}}\n"},
    {"{\"trainerStatus\":{\"lastUpdatedTime\":\"2024-01-01T00:00:00+23:60\"}}",
     "{\"trainerStatus\":{\"lastUpdatedTime\":\"2023-12-31T00:00:00Z\"}}\n"},
    {"{\"trainerStatus\":{\"lastUpdatedTime\":\"2024-01-01T00:00:00+25:00\"}}", nullptr},
    {"{\"trainerStatus\":{\"lastUpdatedTime\":\"2024-01-01T00:00:00-24:00\"}}",
     "{\"trainerStatus\":{\"lastUpdatedTime\":\"2024-01-02T00:00:00Z\"}}\n"},
    {"{\"trainerStatus\":{\"lastUpdatedTime\":\"2024-01-01T00:00:00+24:59\"}}",
     "{\"trainerStatus\":{\"lastUpdatedTime\":\"2023-12-30T23:01:00Z\"}}\n"},
    {"{\"trainerStatus\":{\"lastUpdatedTime\":\"2024-01-01T00:00:00+99:00\"}}", nullptr},
    {"{\"trainerStatus\":{\"lastUpdatedTime\":\"2024-01-01T00:00:00.5,5Z\"}}", nullptr},
    {"{\"trainerStatus\":{\"lastUpdatedTime\":\"2024-1-01T00:00:00Z\"}}", nullptr},
    {"{\"trainerStatus\":{\"lastUpdatedTime\":\"+024-01-01T00:00:00Z\"}}", nullptr},
    {"{\"trainerStatus\":{\"lastUpdatedTime\":\"2024-01-01T00:00:00ZZ\"}}", nullptr},
    {"{\"trainerStatus\":{\"lastUpdatedTime\":\"2024-01-01T00:00:00 Z\"}}", nullptr},
    {"{\"trainerStatus\":{\"lastUpdatedTime\":\"20240-01-01T00:00:00Z\"}}", nullptr},
    {"{\"trainerStatus\":{\"lastUpdatedTime\":\"2024-01-01T0:00:00Z\"}}",
     "{\"trainerStatus\":{\"lastUpdatedTime\":\"2024-01-01T00:00:00Z\"}}\n"},
    {"{\"trainerStatus\":{\"lastUpdatedTime\":\"2024-01-01T00:00:00+01:00:00\"}}", nullptr},
    {"{\"trainerStatus\":{\"lastUpdatedTime\":\"2024-01-01T00:00:00+1:00\"}}", nullptr},
    {"{\"trainerStatus\":{\"lastUpdatedTime\":\"2024-01-01T00:00:00.123456789+00:00\"}}",
     "{\"trainerStatus\":{\"lastUpdatedTime\":\"2024-01-01T00:00:00Z\"}}\n"},
    {"{\"trainerStatus\":{\"lastUpdatedTime\":\"2024-01-01T00:00:00+00:61\"}}", nullptr},
    {"{\"trainerStatus\":{\"lastUpdatedTime\":\"2024-01-01T00:00:00+00:60\"}}",
     "{\"trainerStatus\":{\"lastUpdatedTime\":\"2023-12-31T23:00:00Z\"}}\n"},
    {"{\"trainerStatus\":{\"lastUpdatedTime\":\"2024-01-01T9:00:00.5+00:00\"}}",
     "{\"trainerStatus\":{\"lastUpdatedTime\":\"2024-01-01T09:00:00Z\"}}\n"},
    {"{\"trainerStatus\":{\"lastUpdatedTime\":\"2024-01-01T000:00:00Z\"}}", nullptr},
};

TEST_CASE("decode and echo as Go's encoding/json", "[statusserver][request]") {
  for (const Row& row : kRows) {
    INFO("body: " << row.body);
    StatusOr<UpdateRequest> got = DecodeUpdateRequest(row.body);
    if (row.want == nullptr) {
      CHECK_FALSE(got.ok());
      continue;
    }
    REQUIRE(got.ok());
    CHECK(EncodeUpdateRequest(*got) == row.want);
  }
}

std::string Nested(int depth) {
  return "{\"a\":" + std::string(depth, '[') + std::string(depth, ']') + "}";
}

TEST_CASE("nesting up to Go's limit of 10000", "[statusserver][request]") {
  CHECK(DecodeUpdateRequest(Nested(9999)).ok());
  CHECK_FALSE(DecodeUpdateRequest(Nested(10000)).ok());
  // Objects count as levels too, and a deep value is skipped without recursion.
  std::string objects;
  for (int i = 0; i < 9999; ++i) objects += "{\"k\":";
  objects += "1" + std::string(9999, '}');
  CHECK(DecodeUpdateRequest("{\"x\":" + objects + "}").ok());
}

TEST_CASE("RFC 3339 parsing as time.Parse", "[statusserver][request]") {
  struct Case {
    const char* text;
    const char* want;  // nullptr: error
  };
  const Case cases[] = {
      {"2025-03-04T05:06:07Z", "2025-03-04T05:06:07Z"},
      {"2025-03-04T05:06:07.999999999Z", "2025-03-04T05:06:07Z"},
      {"2025-03-04T05:06:07-08:00", "2025-03-04T13:06:07Z"},
      {"2024-02-29T00:00:00Z", "2024-02-29T00:00:00Z"},
      {"2000-02-29T00:00:00Z", "2000-02-29T00:00:00Z"},
      {"1900-02-29T00:00:00Z", nullptr},
      {"2024-04-31T00:00:00Z", nullptr},
      {"2024-13-01T00:00:00Z", nullptr},
      {"2024-00-01T00:00:00Z", nullptr},
      {"2024-01-00T00:00:00Z", nullptr},
      {"1970-01-01T00:00:00Z", "1970-01-01T00:00:00Z"},
      {"1969-12-31T23:59:59Z", "1969-12-31T23:59:59Z"},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    std::optional<Time> t = ParseRfc3339(c.text);
    if (c.want == nullptr) {
      CHECK_FALSE(t.has_value());
    } else {
      REQUIRE(t.has_value());
      CHECK(t->Format() == c.want);
    }
  }
  CHECK(ParseRfc3339("1970-01-01T00:00:00Z")->unix_seconds == 0);
  CHECK(ParseRfc3339("0001-01-01T00:00:00Z")->IsZero());
  CHECK_FALSE(ParseRfc3339("0001-01-01T00:00:00.1Z")->IsZero());
}

TrainerStatus Valid() {
  TrainerStatus ts;
  ts.progress_percentage = 40;
  ts.estimated_remaining_seconds = 0;
  ts.metrics = {{"loss", "0.1"}};
  ts.last_updated_time = *ParseRfc3339("2025-01-02T03:04:05Z");
  return ts;
}

TEST_CASE("the apply configuration upstream's toApplyConfig builds", "[statusserver][request]") {
  CHECK(
      json::Write(StatusApplyConfiguration("ns", "job", Valid())) ==
      R"({"apiVersion":"trainer.kubeflow.org/v1alpha1","kind":"TrainJob","metadata":{"name":"job","namespace":"ns"},"status":{"trainerStatus":{"progressPercentage":40,"estimatedRemainingSeconds":0,"metrics":[{"name":"loss","value":"0.1"}],"lastUpdatedTime":"2025-01-02T03:04:05Z"}}})");
  TrainerStatus bare;
  bare.metrics = {{"", ""}};
  CHECK(
      json::Write(StatusApplyConfiguration("ns", "job", bare)) ==
      R"({"apiVersion":"trainer.kubeflow.org/v1alpha1","kind":"TrainJob","metadata":{"name":"job","namespace":"ns"},"status":{"trainerStatus":{"metrics":[{"name":"","value":""}],"lastUpdatedTime":null}}})");
}

TEST_CASE("ValidateAsCrd: the CRD's rules for status.trainerStatus", "[statusserver][request]") {
  CHECK(ValidateAsCrd(Valid()).ok());
  auto with = [](auto edit) {
    TrainerStatus ts = Valid();
    edit(ts);
    return ValidateAsCrd(ts);
  };
  CHECK(with([](TrainerStatus& t) { t.progress_percentage = 100; }).ok());
  CHECK(with([](TrainerStatus& t) { t.progress_percentage = 0; }).ok());
  CHECK(with([](TrainerStatus& t) { t.progress_percentage.reset(); }).ok());
  CHECK_FALSE(with([](TrainerStatus& t) { t.progress_percentage = 101; }).ok());
  CHECK_FALSE(with([](TrainerStatus& t) { t.progress_percentage = -1; }).ok());
  CHECK_FALSE(with([](TrainerStatus& t) { t.estimated_remaining_seconds = -1; }).ok());
  CHECK(with([](TrainerStatus& t) { t.metrics.assign(256, Metric{"a", "b"}); }).ok());
  CHECK_FALSE(with([](TrainerStatus& t) { t.metrics.assign(257, Metric{"a", "b"}); }).ok());
  CHECK_FALSE(with([](TrainerStatus& t) { t.metrics[0].name = ""; }).ok());
  CHECK_FALSE(with([](TrainerStatus& t) { t.metrics[0].value = ""; }).ok());
  CHECK(with([](TrainerStatus& t) { t.metrics[0].name = std::string(64, 'x'); }).ok());
  CHECK_FALSE(with([](TrainerStatus& t) { t.metrics[0].name = std::string(65, 'x'); }).ok());
  // Characters, not bytes: 64 two-byte characters fit.
  std::string e_acute;
  for (int i = 0; i < 64; ++i) e_acute += "\xC3\xA9";
  CHECK(with([&](TrainerStatus& t) { t.metrics[0].value = e_acute; }).ok());
  CHECK_FALSE(with([](TrainerStatus& t) { t.last_updated_time = Time::Zero(); }).ok());
  CHECK_FALSE(with([](TrainerStatus& t) {
                t.last_updated_time = *ParseRfc3339("0000-01-01T00:00:00+01:00");
              }).ok());
  CHECK_FALSE(with([](TrainerStatus& t) {
                t.last_updated_time = *ParseRfc3339("9999-12-31T23:00:00-01:00");
              }).ok());
}

TEST_CASE("GoJsonString", "[statusserver][request]") {
  CHECK(GoJsonString("plain") == "\"plain\"");
  CHECK(GoJsonString("a\"b\\c\x01\x7f<>&") == "\"a\\\"b\\\\c\\u0001\x7f\\u003c\\u003e\\u0026\"");
  CHECK(GoJsonString("\xff") == "\"\\ufffd\"");
}

}  // namespace
}  // namespace trainer::statusserver
