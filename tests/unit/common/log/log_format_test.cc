// Record formats of common/log (logfmt quoting, JSON validity, hostile bytes) and the real
// stderr sink: one intact line per record under concurrent writers, verbosity gating.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/json/json.h"
#include "common/log/log.h"
#include "common/log/testing/stderr_capture.h"

namespace trainer::log {
namespace {

TEST_CASE("text values are quoted only when they must be", "[unit][log]") {
  const struct {
    const char* name;
    std::string value;
    const char* want;
  } cases[] = {
      {"plain", "ns/name", "k=ns/name"},
      {"empty", "", "k=\"\""},
      {"space", "a b", "k=\"a b\""},
      {"equals", "a=b", "k=\"a=b\""},
      {"quote", "say \"hi\"", "k=\"say \\\"hi\\\"\""},
      {"backslash", "a\\b", "k=\"a\\\\b\""},
      {"newline", "line1\nline2", "k=\"line1\\nline2\""},
      {"tab", "a\tb", "k=\"a\\tb\""},
      {"control byte", std::string("a\x01", 2), "k=\"a\\u0001\""},
      {"nul byte", std::string("a\0b", 3), "k=\"a\\u0000b\""},
      {"utf-8 stays bare", "héllo", "k=héllo"},
      {"invalid utf-8 is replaced", "a\xff", "k=\"a\xEF\xBF\xBD\""},
      {"truncated utf-8", "\xC3", "k=\"\xEF\xBF\xBD\""},
      {"overlong utf-8", "\xC0\xAF", "k=\"\xEF\xBF\xBD\xEF\xBF\xBD\""},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      std::string r = FormatRecord(Format::kText, Level::kInfo, "m", {{"k", c.value}}, "T");
      CHECK(r == std::string("ts=T level=info msg=m ") + c.want);
    }
  }
}

TEST_CASE("text keys cannot break the key=value grammar", "[unit][log]") {
  std::string r = FormatRecord(Format::kText, Level::kWarn, "m",
                               {{"a b", "1"}, {"x=y", "2"}, {"", "3"}, {"ok.key", "4"}}, "T");
  CHECK(r == "ts=T level=warn msg=m a_b=1 x_y=2 _=3 ok.key=4");
}

// zap's time encoders (zapcore.EpochTimeEncoder ... RFC3339NanoTimeEncoder) in UTC, for
// 2026-12-06T19:55:01.120450000Z; the numeric ones are JSON numbers.
TEST_CASE("timestamps in each of zap's time encodings", "[unit][log]") {
  using std::chrono::nanoseconds;
  const std::chrono::system_clock::time_point t{
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          nanoseconds(1796586901120450000))};
  const struct {
    const char* name;
    TimeEncoding encoding;
    const char* text;
    bool number;
  } cases[] = {
      {"default", TimeEncoding::kDefault, "2026-12-06T19:55:01.120450Z", false},
      {"epoch", TimeEncoding::kEpoch, "1796586901.12045", true},
      {"millis", TimeEncoding::kMillis, "1796586901120.45", true},
      {"nano", TimeEncoding::kNano, "1796586901120450000", true},
      {"iso8601", TimeEncoding::kIso8601, "2026-12-06T19:55:01.120Z", false},
      {"rfc3339", TimeEncoding::kRfc3339, "2026-12-06T19:55:01Z", false},
      {"rfc3339nano", TimeEncoding::kRfc3339Nano, "2026-12-06T19:55:01.12045Z", false},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      Timestamp ts = FormatTime(c.encoding, t);
      CHECK(ts.text == c.text);
      CHECK(ts.number == c.number);
      const std::string quoted = c.number ? ts.text : "\"" + ts.text + "\"";
      CHECK(FormatRecord(Format::kJson, Level::kInfo, "m", {}, ts) ==
            R"({"level":"info","ts":)" + quoted + R"(,"msg":"m"})");
      CHECK(FormatRecord(Format::kText, Level::kInfo, "m", {}, ts) ==
            "ts=" + ts.text + " level=info msg=m");
    }
  }
  // A whole second has no fraction in rfc3339nano, and the names are the flag's.
  const std::chrono::system_clock::time_point whole{std::chrono::seconds(1796586901)};
  CHECK(FormatTime(TimeEncoding::kRfc3339Nano, whole).text == "2026-12-06T19:55:01Z");
  CHECK(FormatTime(TimeEncoding::kEpoch, whole).text == "1796586901");
  CHECK(ParseTimeEncoding("rfc3339nano") == TimeEncoding::kRfc3339Nano);
  CHECK(ParseTimeEncoding("millis") == TimeEncoding::kMillis);
  CHECK_FALSE(ParseTimeEncoding("unix").has_value());
  CHECK_FALSE(ParseTimeEncoding("").has_value());
}

TEST_CASE("levels are named like zap's", "[unit][log]") {
  CHECK(FormatRecord(Format::kText, Level::kError, "m", {}, "T") == "ts=T level=error msg=m");
  CHECK(FormatRecord(Format::kText, Level::kDebug, "m", {}, "T") == "ts=T level=debug msg=m");
  CHECK(FormatRecord(Format::kJson, Level::kInfo, "m", {}, "T") ==
        R"({"level":"info","ts":"T","msg":"m"})");
  // logr's V(v) is zap level -v: "debug" for V(1), "Level(-v)" below; text keeps "debug".
  CHECK(FormatRecord(Format::kJson, Level::kDebug, "m", {}, "T", {.v = 1}) ==
        R"({"level":"debug","ts":"T","msg":"m"})");
  CHECK(FormatRecord(Format::kJson, Level::kDebug, "m", {}, "T", {.v = 2}) ==
        R"j({"level":"Level(-2)","ts":"T","msg":"m"})j");
  CHECK(FormatRecord(Format::kJson, Level::kDebug, "m", {}, "T", {.v = 10}) ==
        R"j({"level":"Level(-10)","ts":"T","msg":"m"})j");
  CHECK(FormatRecord(Format::kText, Level::kDebug, "m", {}, "T", {.v = 4}) ==
        "ts=T level=debug msg=m");
  // Other levels ignore v.
  CHECK(FormatRecord(Format::kJson, Level::kWarn, "m", {}, "T", {.v = 4}) ==
        R"({"level":"warn","ts":"T","msg":"m"})");
}

TEST_CASE("JSON records name their caller as zap does, text records do not", "[unit][log]") {
  CHECK(FormatRecord(Format::kJson, Level::kInfo, "m", {{"k", "v"}}, "T",
                     {.caller = "controller/manager.cc:12"}) ==
        R"({"level":"info","ts":"T","caller":"controller/manager.cc:12","msg":"m","k":"v"})");
  CHECK(FormatRecord(Format::kText, Level::kInfo, "m", {}, "T",
                     {.caller = "controller/manager.cc:12"}) == "ts=T level=info msg=m");
  // The last directory and the file name, then the line.
  const Where here;
  CHECK(ShortCaller(here) == "log/log_format_test.cc:" + std::to_string(here.line));
  CHECK(ShortCaller(Where("file.cc", 3)) == "file.cc:3");
  CHECK(ShortCaller(Where("/a/b/c/file.cc", 3)) == "c/file.cc:3");
}

TEST_CASE("JSON records are valid JSON for any bytes", "[unit][log]") {
  std::vector<std::string> nasty = {"",
                                    "plain",
                                    "quote\"",
                                    "back\\slash",
                                    "new\nline",
                                    std::string("nul\0x", 5),
                                    "\x7f",
                                    "\xff\xfe",
                                    "\xed\xa0\x80" /* surrogate */,
                                    "\xf4\x90\x80\x80" /* > U+10FFFF */,
                                    "emoji \xf0\x9f\x98\x80",
                                    "</script>",
                                    "\xe2\x80\xa8"};
  for (const std::string& s : nasty) {
    std::string r = FormatRecord(Format::kJson, Level::kError, s, {{s, s}, {"k", s}}, "T");
    INFO(r);
    CHECK(r.find('\n') == std::string::npos);
    auto v = json::Parse(r);
    REQUIRE(v.ok());
    CHECK(v->Find("level")->AsString() == "error");
    CHECK(v->Find("k")->AsString() == v->Find("msg")->AsString());
  }
  // Valid UTF-8 passes through unchanged.
  auto v =
      json::Parse(FormatRecord(Format::kJson, Level::kInfo, "héllo \xf0\x9f\x98\x80", {}, "T"));
  REQUIRE(v.ok());
  CHECK(v->Find("msg")->AsString() == "héllo \xf0\x9f\x98\x80");
}

using testing::StderrCapture;

TEST_CASE("concurrent records come out as whole lines", "[unit][log]") {
  SetFormat(Format::kJson);
  SetVerbosity(4);
  constexpr int kThreads = 8;
  constexpr int kPerThread = 500;
  std::vector<std::string> lines;
  {
    StderrCapture capture;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([t] {
        std::string id = std::to_string(t);
        std::string big(200, static_cast<char>('a' + t));
        for (int i = 0; i < kPerThread; ++i) {
          std::string n = std::to_string(i);
          switch (i % 4) {
            case 0:
              Info("info", {{"t", id}, {"i", n}, {"pad", big}});
              break;
            case 1:
              Warn("warn", {{"t", id}, {"i", n}, {"pad", big}});
              break;
            case 2:
              Error("error", {{"t", id}, {"i", n}, {"pad", big}});
              break;
            default:
              Debug(4, "debug", {{"t", id}, {"i", n}, {"pad", big}});
              break;
          }
          Debug(5, "never printed", {{"t", id}});
        }
      });
    }
    for (auto& th : threads) th.join();
    lines = capture.Lines();
  }
  SetFormat(Format::kText);
  SetVerbosity(0);
  REQUIRE(lines.size() == static_cast<size_t>(kThreads * kPerThread));
  std::vector<int> per_thread(kThreads, 0);
  for (const std::string& line : lines) {
    auto v = json::Parse(line);
    REQUIRE(v.ok());
    CHECK(v->Find("msg")->AsString() != "never printed");
    CHECK(v->Find("pad")->AsString().size() == 200);
    // The record names the call above, and a V(4) record has zap's level for it.
    CHECK(v->Find("caller")->AsString().rfind("log/log_format_test.cc:", 0) == 0);
    const std::string& msg = v->Find("msg")->AsString();
    CHECK(v->Find("level")->AsString() == (msg == "debug" ? "Level(-4)" : msg));
    per_thread[std::stoi(v->Find("t")->AsString())]++;
  }
  for (int count : per_thread) CHECK(count == kPerThread);
}

TEST_CASE("a JSON record names the line that wrote it", "[unit][log]") {
  SetFormat(Format::kJson);
  SetVerbosity(2);
  std::vector<std::string> lines;
  int info_line = 0, debug_line = 0;
  {
    StderrCapture capture;
    info_line = __LINE__ + 1;
    Info("here");
    debug_line = __LINE__ + 1;
    Debug(2, "there", {{"k", "v"}});
    lines = capture.Lines();
  }
  SetFormat(Format::kText);
  SetVerbosity(0);
  REQUIRE(lines.size() == 2);
  auto info = json::Parse(lines[0]);
  auto debug = json::Parse(lines[1]);
  REQUIRE(info.ok());
  REQUIRE(debug.ok());
  CHECK(info->Find("caller")->AsString() ==
        "log/log_format_test.cc:" + std::to_string(info_line));
  CHECK(debug->Find("caller")->AsString() ==
        "log/log_format_test.cc:" + std::to_string(debug_line));
  CHECK(debug->Find("level")->AsString() == "Level(-2)");
  CHECK(debug->Find("k")->AsString() == "v");
}

TEST_CASE("verbosity gates debug records only", "[unit][log]") {
  SetVerbosity(2);
  CHECK(V(0));
  CHECK(V(2));
  CHECK_FALSE(V(3));
  std::vector<std::string> lines;
  {
    StderrCapture capture;
    Debug(2, "shown");
    Debug(3, "hidden");
    Info("always");
    lines = capture.Lines();
  }
  SetVerbosity(0);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].find("level=debug msg=shown") != std::string::npos);
  CHECK(lines[1].find("level=info msg=always") != std::string::npos);
  CHECK(lines[0].rfind("ts=", 0) == 0);
  CHECK(lines[0][3 + 4] == '-');                   // ts=YYYY-...
  CHECK(lines[0].find('Z') != std::string::npos);  // UTC RFC 3339
}

}  // namespace
}  // namespace trainer::log
