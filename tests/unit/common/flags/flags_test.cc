// The flags library every binary parses its command line with: Go's flag syntax, one error
// wording, one --help layout.
#include "common/flags/flags.h"

#include <catch2/catch.hpp>
#include <sstream>

namespace trainer::flags {
namespace {

struct Opts {
  int port = 9443;
  std::string dir = "/certs";
  bool elect = false;
  std::string format = "text";
  std::vector<std::string> files;
  double qps = 0;
  std::optional<std::string> key;
};

FlagSet Set(Opts& o) {
  return FlagSet("prog", "Does things.",
                 {
                     {"port", "The port.", Int(&o.port, 1, 65535)},
                     {"cert-dir", "Certificates.", String(&o.dir, "DIR")},
                     {"leader-elect", "Elect.", Bool(&o.elect)},
                     {"log-format", "Format.", OneOf(&o.format, {"text", "json"})},
                     {"filename", "Files; repeatable.", Append(&o.files, "FILE"), "f"},
                     {"qps", "Rate.", Double(&o.qps, 0, 1000)},
                     {"key", "A key.", OptionalString(&o.key, "PEM")},
                 });
}

TEST_CASE("Go's flag syntax: one or two dashes, =value or a separate value, bare bools") {
  Opts o;
  FlagSet fs = Set(o);
  REQUIRE(fs.Parse({"-port=1", "--cert-dir", "/d", "--leader-elect", "-f", "a", "--filename=b",
                    "-qps", "2.5", "--key=k.pem"})
              .ok());
  CHECK(o.port == 1);
  CHECK(o.dir == "/d");
  CHECK(o.elect);
  CHECK(o.files == std::vector<std::string>{"a", "b"});
  CHECK(o.qps == 2.5);
  CHECK(o.key == "k.pem");
  CHECK(fs.Given("port"));
  CHECK(fs.Given("filename"));  // by its name, whichever spelling was used
  CHECK_FALSE(fs.Given("log-format"));
  CHECK_FALSE(fs.help());

  // A flag with a value takes the next argument, whatever it looks like.
  Opts p;
  CHECK(Set(p).Parse({"--port", "-1"}).message() ==
        "flag \"--port\": -1 is out of range [1, 65535]");
  REQUIRE(Set(p).Parse({"--leader-elect", "--leader-elect=false", "--"}).ok());
  CHECK_FALSE(p.elect);
}

TEST_CASE("errors name the flag as written") {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  std::vector<Case> cases = {
      {{"--port=x"}, "flag \"--port\": expected an integer, got \"x\""},
      {{"-port", "70000"}, "flag \"-port\": 70000 is out of range [1, 65535]"},
      {{"--log-format=xml"}, "flag \"--log-format\": expected text or json, got \"xml\""},
      {{"--leader-elect=maybe"}, "flag \"--leader-elect\": expected true or false, got \"maybe\""},
      {{"--qps=fast"}, "flag \"--qps\": expected a number, got \"fast\""},
      {{"--nope=1"}, "unknown flag \"--nope\""},
      {{"-nope"}, "unknown flag \"-nope\""},
      {{"--port"}, "flag \"--port\" needs a value"},
      {{"stray"}, "unexpected argument \"stray\""},
      {{"--", "stray"}, "unexpected argument \"stray\""},
  };
  for (const Case& c : cases) {
    Opts o;
    Status s = Set(o).Parse(c.args);
    CHECK(s.message() == c.message);
  }
}

TEST_CASE("help: -h, -help and --help; the layout every binary shares") {
  for (const char* h : {"-h", "-help", "--help", "--h"}) {
    Opts o;
    FlagSet fs = Set(o);
    REQUIRE(fs.Parse({h}).ok());
    CHECK(fs.help());
  }
  Opts o;
  CHECK(Set(o).Usage() ==
        "Usage: prog [flags]\n"
        "\n"
        "Does things.\n"
        "\n"
        "Flags (-name and --name are the same; --name=value or --name value):\n"
        "  --port=N\n"
        "      The port. (default 9443)\n"
        "  --cert-dir=DIR\n"
        "      Certificates. (default /certs)\n"
        "  --leader-elect\n"
        "      Elect.\n"
        "  --log-format=text|json\n"
        "      Format. (default text)\n"
        "  -f, --filename=FILE\n"
        "      Files; repeatable.\n"
        "  --qps=NUMBER\n"
        "      Rate.\n"
        "  --key=PEM\n"
        "      A key.\n"
        "  -h, --help\n"
        "      Print this help and exit.\n");
}

TEST_CASE("ExitEarly: usage on stdout and 0, one error line on stderr and 2 or 1") {
  std::ostringstream out, err;
  CHECK(ExitEarly("prog", OkStatus(), false, "", out, err) == std::nullopt);
  CHECK(ExitEarly("prog", OkStatus(), true, "usage\n", out, err) == 0);
  CHECK(ExitEarly("prog", InvalidArgumentError("unknown flag \"-x\""), false, "", out, err) == 2);
  CHECK(out.str() == "usage\n");
  CHECK(err.str() == "prog: unknown flag \"-x\"\n");
  // An error found after the flags parsed (a Configuration file) exits 1, as upstream's main.
  std::ostringstream later;
  CHECK(ExitEarly("prog", AfterFlags(InvalidArgumentError("failed to read config file")), false,
                  "", out, later) == 1);
  CHECK(later.str() == "prog: failed to read config file\n");
  CHECK(AfterFlags(OkStatus()).ok());
}

TEST_CASE("ParseMain: flags, required ones, exit codes as ExitEarly's") {
  std::string file;
  int count = 1000;
  auto run = [&](std::vector<const char*> argv, std::string* out_text, std::string* err_text) {
    file.clear();
    count = 1000;
    FlagSet fs("prog", "Does things.",
               {{"file", "Input.", String(&file, "FILE")}, {"count", "N.", Int(&count, 0, 10)}});
    std::ostringstream out, err;
    argv.insert(argv.begin(), "prog");
    std::optional<int> code =
        ParseMain(fs, static_cast<int>(argv.size()), argv.data(), {"file"}, out, err);
    *out_text = out.str();
    *err_text = err.str();
    return code;
  };
  std::string out, err;
  CHECK(run({"--file", "f", "--count=3"}, &out, &err) == std::nullopt);
  CHECK(file == "f");
  CHECK(count == 3);
  CHECK(out + err == "");
  CHECK(run({"--count", "3"}, &out, &err) == 2);
  CHECK(err == "prog: flag \"--file\" is required\n");
  CHECK(run({"--file", "f", "--nope", "x"}, &out, &err) == 2);
  CHECK(err == "prog: unknown flag \"--nope\"\n");
  CHECK(run({"--file"}, &out, &err) == 2);
  CHECK(err == "prog: flag \"--file\" needs a value\n");
  CHECK(run({"--file", "f", "--count", "11"}, &out, &err) == 2);
  CHECK(run({"-h"}, &out, &err) == 0);  // help needs no required flag
  CHECK(out.rfind("Usage: prog [flags]", 0) == 0);
  CHECK(err == "");
}

TEST_CASE("Go durations") {
  CHECK(*ParseGoDuration("15s") == std::chrono::seconds(15));
  CHECK(*ParseGoDuration("1m30s") == std::chrono::seconds(90));
  CHECK(*ParseGoDuration("500ms") == std::chrono::milliseconds(500));
  CHECK(*ParseGoDuration("1.5h") == std::chrono::minutes(90));
  CHECK(*ParseGoDuration("0") == std::chrono::milliseconds(0));
  CHECK_FALSE(ParseGoDuration("10").ok());
  CHECK_FALSE(ParseGoDuration("").ok());
  // Go's time.ParseDuration, message for message.
  CHECK(ParseGoDuration("15x").status().message() == "time: unknown unit \"x\" in duration \"15x\"");
  CHECK(ParseGoDuration("10").status().message() == "time: missing unit in duration \"10\"");
  CHECK(ParseGoDuration("1.2.3s").status().message() == "time: missing unit in duration \"1.2.3s\"");
  CHECK(ParseGoDuration("").status().message() == "time: invalid duration \"\"");
  CHECK(ParseGoDuration("abc").status().message() == "time: invalid duration \"abc\"");
  CHECK(ParseGoDuration(".s").status().message() == "time: invalid duration \".s\"");
  CHECK(ParseGoDuration("-").status().message() == "time: invalid duration \"-\"");
  CHECK(*ParseGoDuration("-1.5s") == std::chrono::milliseconds(-1500));
  CHECK(*ParseGoDuration("+2m") == std::chrono::minutes(2));
  CHECK(*ParseGoDuration(".5s") == std::chrono::milliseconds(500));
  CHECK(*ParseGoDuration("1.s") == std::chrono::seconds(1));
  CHECK(*ParseGoDuration("-0") == std::chrono::milliseconds(0));
  CHECK(ParseGoDuration("3000000h").status().message() ==
        "time: invalid duration \"3000000h\"");  // beyond an int64 of nanoseconds
}

TEST_CASE("Duration flags: Go syntax, a lower bound, Go's form in --help") {
  std::chrono::milliseconds d{90000};
  FlagSet fs("prog", "Does things.",
             {{"wait", "How long.", Duration(&d, std::chrono::seconds(1))}});
  CHECK(fs.Usage().find("--wait=DURATION") != std::string::npos);
  CHECK(fs.Usage().find("(default 1m30s)") != std::string::npos);
  REQUIRE(fs.Parse({"--wait=2m500ms"}).ok());
  CHECK(d == std::chrono::milliseconds(120500));
  CHECK(fs.Parse({"--wait=500ms"}).message() == "flag \"--wait\": 500ms is shorter than 1s");
  CHECK(fs.Parse({"--wait=5"}).message() ==
        "flag \"--wait\": time: missing unit in duration \"5\"");
  CHECK(fs.Parse({"--wait=-2s"}).message() == "flag \"--wait\": -2s is shorter than 1s");
  std::chrono::milliseconds h{3723500};
  FlagSet hs("prog", "", {{"h", "", Duration(&h)}});
  CHECK(hs.Usage().find("(default 1h2m3.5s)") != std::string::npos);
}

TEST_CASE("microsecond Duration flags: kept to the microsecond, bounded both ways") {
  using std::chrono::microseconds;
  CHECK(*ParseGoDurationMicros("50us") == microseconds(50));
  CHECK(*ParseGoDurationMicros("50µs") == microseconds(50));
  CHECK(*ParseGoDurationMicros("1.5ms") == microseconds(1500));
  CHECK(*ParseGoDurationMicros("0") == microseconds(0));
  CHECK(*ParseGoDuration("50us") == std::chrono::milliseconds(0));  // why the µs variant exists
  CHECK(ParseGoDurationMicros("50").status().message() ==
        "time: missing unit in duration \"50\"");
  microseconds d{25};
  FlagSet fs("prog", "",
             {{"spin", "How long.", Duration(&d, microseconds(0), microseconds(10000))}});
  CHECK(fs.Usage().find("(default 25µs)") != std::string::npos);
  REQUIRE(fs.Parse({"--spin=100us"}).ok());
  CHECK(d == microseconds(100));
  REQUIRE(fs.Parse({"--spin=0"}).ok());
  CHECK(d == microseconds(0));
  CHECK(fs.Parse({"--spin=11ms"}).message() == "flag \"--spin\": 11ms is out of range [0s, 10ms]");
  microseconds whole{2000};
  FlagSet ws("prog", "", {{"w", "", Duration(&whole, microseconds(0), microseconds(5000))}});
  CHECK(ws.Usage().find("(default 2ms)") != std::string::npos);
}

TEST_CASE("Go booleans") {
  for (const char* t : {"1", "t", "T", "TRUE", "true", "True"}) CHECK(*ParseBool(t));
  for (const char* f : {"0", "f", "F", "FALSE", "false", "False"}) CHECK_FALSE(*ParseBool(f));
  CHECK_FALSE(ParseBool("yes").ok());
}

}  // namespace
}  // namespace trainer::flags
