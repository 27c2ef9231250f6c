// UpdateTrainJobStatusRequest decoding and encoding with Go's encoding/json rules (request.h).
#include "webhook/statusserver/request.h"

#include <charconv>
#include <cstdio>

namespace trainer::statusserver {
namespace {

// encoding/json's maxNestingDepth: the scanner fails when a value opens its 10001st level.
constexpr int kMaxDepth = 10000;
constexpr int64_t kZeroTimeUnix = -62135596800;  // 0001-01-01T00:00:00Z
constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD

bool IsLeap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int DaysIn(int month, int64_t year) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && IsLeap(year) ? 29 : kDays[month - 1];
}

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

void CivilFromDays(int64_t z, int64_t* y, int* m, int* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  *d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  *m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  *y = yoe + era * 400 + (*m <= 2);
}

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Go's parseUint inside parseRFC3339: all digits and within [lo, hi].
bool Uint(std::string_view s, int lo, int hi, int* out) {
  int x = 0;
  for (char c : s) {
    if (!IsDigit(c)) return false;
    x = x * 10 + (c - '0');
  }
  *out = x;
  return x >= lo && x <= hi;
}

// ---- decoding ----

class Decoder {
 public:
  explicit Decoder(std::string_view s) : s_(s) {}

  Status Request(UpdateRequest* out) {
    SkipSpace();
    if (AtEnd()) return Error("EOF");
    if (ConsumeLiteral("null")) return OkStatus();
    if (Peek() != '{') return TypeMismatch("UpdateTrainJobStatusRequest");
    return Object([&](std::string_view key) -> Status {
      if (!KeyIs(key, "trainerStatus")) return SkipValue();
      if (ConsumeLiteral("null")) {
        out->trainer_status.reset();
        return OkStatus();
      }
      if (Peek() != '{') return TypeMismatch("TrainerStatus");
      if (!out->trainer_status) out->trainer_status.emplace();
      return TrainerStatusObject(&*out->trainer_status);
    });
  }

 private:
  Status TrainerStatusObject(TrainerStatus* ts) {
    return Object([&](std::string_view key) -> Status {
      if (KeyIs(key, "progressPercentage")) return Int32(&ts->progress_percentage);
      if (KeyIs(key, "estimatedRemainingSeconds")) return Int32(&ts->estimated_remaining_seconds);
      if (KeyIs(key, "metrics")) return Metrics(&ts->metrics);
      if (KeyIs(key, "lastUpdatedTime")) return TimeValue(&ts->last_updated_time);
      return SkipValue();
    });
  }

  // Go decodes an array into a slice element by element, into what the slice already held.
  Status Metrics(std::vector<Metric>* metrics) {
    if (ConsumeLiteral("null")) {
      metrics->clear();
      return OkStatus();
    }
    if (Peek() != '[') return TypeMismatch("[]Metric");
    Advance();
    RETURN_IF_ERROR(Push());
    size_t i = 0;
    SkipSpace();
    if (Peek() == ']') {
      Advance();
    } else {
      for (;;) {
        SkipSpace();
        if (i >= metrics->size()) metrics->emplace_back();
        if (!ConsumeLiteral("null")) {
          if (Peek() != '{') return TypeMismatch("Metric");
          RETURN_IF_ERROR(MetricObject(&(*metrics)[i]));
        }
        ++i;
        SkipSpace();
        if (Peek() == ',') {
          Advance();
          continue;
        }
        if (Peek() == ']') {
          Advance();
          break;
        }
        return Syntax("after array element");
      }
    }
    metrics->resize(i);
    --depth_;
    return OkStatus();
  }

  Status MetricObject(Metric* m) {
    return Object([&](std::string_view key) -> Status {
      if (KeyIs(key, "name")) return StringValue(&m->name);
      if (KeyIs(key, "value")) return StringValue(&m->value);
      return SkipValue();
    });
  }

  Status StringValue(std::string* out) {
    if (ConsumeLiteral("null")) return OkStatus();
    if (Peek() != '"') return TypeMismatch("string");
    return String(out);
  }

  // metav1.Time.UnmarshalJSON: null is the zero time, a string goes through time.Parse.
  Status TimeValue(Time* out) {
    if (ConsumeLiteral("null")) {
      *out = Time::Zero();
      return OkStatus();
    }
    if (Peek() != '"') return TypeMismatch("Time");
    std::string text;
    RETURN_IF_ERROR(String(&text));
    std::optional<Time> t = ParseRfc3339(text);
    if (!t) return InvalidArgumentError("parsing time \"" + text + "\" as RFC 3339: invalid");
    *out = *t;
    return OkStatus();
  }

  // strconv.ParseInt of the literal, then the int32 overflow check.
  Status Int32(std::optional<int32_t>* out) {
    if (ConsumeLiteral("null")) {
      out->reset();
      return OkStatus();
    }
    if (Peek() != '-' && !IsDigit(Peek())) return TypeMismatch("int32");
    std::string_view lit;
    RETURN_IF_ERROR(Number(&lit));
    int64_t v = 0;
    auto [p, ec] = std::from_chars(lit.data(), lit.data() + lit.size(), v);
    if (ec != std::errc() || p != lit.data() + lit.size() || v < INT32_MIN || v > INT32_MAX) {
      return InvalidArgumentError("json: cannot unmarshal number " + std::string(lit) +
                                  " into Go value of type int32");
    }
    *out = static_cast<int32_t>(v);
    return OkStatus();
  }

  // An object, calling `member` with the value's first byte next for every key.
  template <typename F>
  Status Object(F member) {
    Advance();  // '{'
    RETURN_IF_ERROR(Push());
    SkipSpace();
    if (Peek() == '}') {
      Advance();
      --depth_;
      return OkStatus();
    }
    for (;;) {
      SkipSpace();
      if (Peek() != '"') return Syntax("looking for beginning of object key string");
      std::string key;
      RETURN_IF_ERROR(String(&key));
      SkipSpace();
      if (Peek() != ':') return Syntax("after object key");
      Advance();
      SkipSpace();
      if (AtEnd()) return Error("unexpected EOF");
      RETURN_IF_ERROR(member(key));
      SkipSpace();
      if (Peek() == ',') {
        Advance();
        continue;
      }
      if (Peek() == '}') {
        Advance();
        --depth_;
        return OkStatus();
      }
      return Syntax("after object key:value pair");
    }
  }

  // Any value, checked for syntax and depth like Go's scanner, without recursion.
  Status SkipValue() {
    const int base = depth_;
    for (;;) {
      SkipSpace();
      if (AtEnd()) return Error("unexpected EOF");
      char c = Peek();
      if (c == '{' || c == '[') {
        Advance();
        RETURN_IF_ERROR(Push());
        closers_.push_back(c == '{' ? '}' : ']');
        SkipSpace();
        if (Peek() == closers_.back()) {  // empty
          Advance();
          closers_.pop_back();
          --depth_;
        } else {
          if (c == '{') RETURN_IF_ERROR(KeyColon());
          continue;  // the first element or member value
        }
      } else if (c == '"') {
        std::string ignored;
        RETURN_IF_ERROR(String(&ignored));
      } else if (c == '-' || IsDigit(c)) {
        std::string_view ignored;
        RETURN_IF_ERROR(Number(&ignored));
      } else if (!ConsumeLiteral("true") && !ConsumeLiteral("false") && !ConsumeLiteral("null")) {
        return Syntax("looking for beginning of value");
      } else {
        // a literal
      }
      // After a value: close containers or move to the next element.
      for (;;) {
        if (depth_ == base) return OkStatus();
        SkipSpace();
        if (Peek() == closers_.back()) {
          Advance();
          closers_.pop_back();
          --depth_;
          continue;
        }
        if (Peek() != ',') return Syntax("after value");
        Advance();
        if (closers_.back() == '}') RETURN_IF_ERROR(KeyColon());
        break;
      }
    }
  }

  Status KeyColon() {
    SkipSpace();
    if (Peek() != '"') return Syntax("looking for beginning of object key string");
    std::string ignored;
    RETURN_IF_ERROR(String(&ignored));
    SkipSpace();
    if (Peek() != ':') return Syntax("after object key");
    Advance();
    return OkStatus();
  }

  // A JSON number's literal (RFC 8259 grammar).
  Status Number(std::string_view* lit) {
    const size_t start = pos_;
    if (Peek() == '-') Advance();
    if (Peek() == '0') {
      Advance();
    } else if (IsDigit(Peek())) {
      while (IsDigit(Peek())) Advance();
    } else {
      return Syntax("in numeric literal");
    }
    if (Peek() == '.') {
      Advance();
      if (!IsDigit(Peek())) return Syntax("after decimal point in numeric literal");
      while (IsDigit(Peek())) Advance();
    }
    if (Peek() == 'e' || Peek() == 'E') {
      Advance();
      if (Peek() == '+' || Peek() == '-') Advance();
      if (!IsDigit(Peek())) return Syntax("in exponent of numeric literal");
      while (IsDigit(Peek())) Advance();
    }
    *lit = s_.substr(start, pos_ - start);
    return OkStatus();
  }

  static int Hex(char c) {
    if (IsDigit(c)) return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  // Four hex digits at pos_ (after "\u"), or -1.
  int U4(size_t at) const {
    if (at + 4 > s_.size()) return -1;
    int v = 0;
    for (size_t i = at; i < at + 4; ++i) {
      int h = Hex(s_[i]);
      if (h < 0) return -1;
      v = v * 16 + h;
    }
    return v;
  }

  static void AppendRune(std::string* out, uint32_t r) {
    if (r < 0x80) {
      out->push_back(static_cast<char>(r));
    } else if (r < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (r >> 6)));
      out->push_back(static_cast<char>(0x80 | (r & 0x3F)));
    } else if (r < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (r >> 12)));
      out->push_back(static_cast<char>(0x80 | ((r >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (r & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (r >> 18)));
      out->push_back(static_cast<char>(0x80 | ((r >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((r >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (r & 0x3F)));
    }
  }

  // A string literal, unquoted as Go's unquote: escapes decoded (unpaired surrogates become
  // U+FFFD), each byte of invalid UTF-8 becomes U+FFFD.
  Status String(std::string* out) {
    Advance();  // '"'
    out->clear();
    for (;;) {
      if (AtEnd()) return Error("unexpected EOF");
      const unsigned char c = static_cast<unsigned char>(s_[pos_]);
      if (c == '"') {
        Advance();
        return OkStatus();
      }
      if (c < 0x20) return Syntax("in string literal");
      if (c == '\\') {
        if (pos_ + 1 >= s_.size()) return Error("unexpected EOF");
        const char e = s_[pos_ + 1];
        pos_ += 2;
        switch (e) {
          case '"':
          case '\\':
          case '/':
            out->push_back(e);
            break;
          case 'b':
            out->push_back('\b');
            break;
          case 'f':
            out->push_back('\f');
            break;
          case 'n':
            out->push_back('\n');
            break;
          case 'r':
            out->push_back('\r');
            break;
          case 't':
            out->push_back('\t');
            break;
          case 'u': {
            int r = U4(pos_);
            if (r < 0) return Syntax("in \\u hexadecimal character escape");
            pos_ += 4;
            if (r >= 0xD800 && r < 0xE000) {
              // A high surrogate followed by an escaped low one is one rune; else U+FFFD.
              int r2 = pos_ + 1 < s_.size() && s_[pos_] == '\\' && s_[pos_ + 1] == 'u'
                           ? U4(pos_ + 2)
                           : -1;
              if (r < 0xDC00 && r2 >= 0xDC00 && r2 < 0xE000) {
                pos_ += 6;
                AppendRune(out, 0x10000 + ((static_cast<uint32_t>(r) - 0xD800) << 10) +
                                    (static_cast<uint32_t>(r2) - 0xDC00));
              } else {
                out->append(kReplacement);
              }
            } else {
              AppendRune(out, static_cast<uint32_t>(r));
            }
            break;
          }
          default:
            return Syntax("in string escape code");
        }
        continue;
      }
      if (c < 0x80) {
        out->push_back(static_cast<char>(c));
        Advance();
        continue;
      }
      size_t n = json::Utf8Length(s_, pos_);
      if (n == 0) {
        out->append(kReplacement);
        Advance();
      } else {
        out->append(s_.substr(pos_, n));
        pos_ += n;
      }
    }
  }

  // Go's field matching: the exact name, else a case-insensitive one (foldName: ASCII letters,
  // and the two non-ASCII runes that fold into them, U+017F to 'S' and U+212A to 'K').
  static bool KeyIs(std::string_view key, std::string_view field) {
    if (key == field) return true;
    auto upper = [](char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 32) : c; };
    size_t i = 0;
    for (char f : field) {
      char k = 0;
      if (key.substr(i, 2) == "\xC5\xBF") {
        k = 'S';
        i += 2;
      } else if (key.substr(i, 3) == "\xE2\x84\xAA") {
        k = 'K';
        i += 3;
      } else if (i < key.size()) {
        k = upper(key[i++]);
      }
      if (k != upper(f)) return false;
    }
    return i == key.size();
  }

  bool ConsumeLiteral(std::string_view lit) {
    if (s_.substr(pos_, lit.size()) != lit) return false;
    pos_ += lit.size();
    return true;
  }

  Status Push() {
    if (++depth_ > kMaxDepth) return Error("exceeded max depth");
    return OkStatus();
  }

  void SkipSpace() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool AtEnd() const { return pos_ >= s_.size(); }
  char Peek() const { return AtEnd() ? '\0' : s_[pos_]; }
  void Advance() { ++pos_; }

  Status Error(std::string what) const { return InvalidArgumentError(std::move(what)); }
  Status Syntax(std::string_view what) const {
    if (AtEnd()) return Error("unexpected EOF");
    return Error("invalid character at offset " + std::to_string(pos_) + " " + std::string(what));
  }
  Status TypeMismatch(std::string_view type) const {
    return Error("json: cannot unmarshal value at offset " + std::to_string(pos_) +
                 " into Go value of type " + std::string(type));
  }

  std::string_view s_;
  size_t pos_ = 0;
  int depth_ = 0;
  std::string closers_;  // SkipValue's open containers
};

void AppendGoInt(std::string* out, int64_t v) { out->append(std::to_string(v)); }

}  // namespace

Time Time::Zero() { return Time{kZeroTimeUnix, 0}; }

bool Time::IsZero() const { return unix_seconds == kZeroTimeUnix && nanos == 0; }

std::string Time::Format() const {
  const int64_t days = FloorDiv(unix_seconds, 86400);
  const int64_t secs = unix_seconds - days * 86400;
  int64_t y = 0;
  int m = 0, d = 0;
  CivilFromDays(days, &y, &m, &d);
  char buf[64];
  // Go's appendInt(year, width 4): a sign, then at least four digits.
  std::snprintf(buf, sizeof(buf), "%s%04lld-%02d-%02dT%02d:%02d:%02dZ", y < 0 ? "-" : "",
                static_cast<long long>(y < 0 ? -y : y), m, d, static_cast<int>(secs / 3600),
                static_cast<int>(secs / 60 % 60), static_cast<int>(secs % 60));
  return buf;
}

std::optional<Time> ParseRfc3339(std::string_view s) {
  // Go's general parser for the layout "2006-01-02T15:04:05Z07:00" (what its fast path takes
  // is a subset): a one-digit hour, ',' before the fraction and offsets up to 24:60 pass.
  int year = 0, month = 0, day = 0, hour = 0, min = 0, sec = 0;
  auto literal = [&s](char c) {
    if (s.empty() || s[0] != c) return false;
    s.remove_prefix(1);
    return true;
  };
  // getnum: two digits, or one when not `fixed`.
  auto num = [&s](bool fixed, int* out) {
    if (s.empty() || !IsDigit(s[0])) return false;
    if (s.size() < 2 || !IsDigit(s[1])) {
      if (fixed) return false;
      *out = s[0] - '0';
      s.remove_prefix(1);
      return true;
    }
    *out = (s[0] - '0') * 10 + (s[1] - '0');
    s.remove_prefix(2);
    return true;
  };
  if (s.size() < 4 || !Uint(s.substr(0, 4), 0, 9999, &year)) return std::nullopt;
  s.remove_prefix(4);
  if (!literal('-') || !num(true, &month) || month < 1 || month > 12 || !literal('-') ||
      !num(true, &day) || !literal('T') || !num(false, &hour) || hour >= 24 || !literal(':') ||
      !num(true, &min) || min >= 60 || !literal(':') || !num(true, &sec) || sec >= 60) {
    return std::nullopt;
  }
  int32_t nanos = 0;
  if (s.size() >= 2 && (s[0] == '.' || s[0] == ',') && IsDigit(s[1])) {
    size_t n = 1;
    int digits = 0;
    while (n < s.size() && IsDigit(s[n])) {
      if (digits < 9) {
        nanos = nanos * 10 + (s[n] - '0');
        ++digits;
      }
      ++n;
    }
    for (; digits < 9; ++digits) nanos *= 10;
    s.remove_prefix(n);
  }
  int64_t offset = 0;
  if (!literal('Z')) {
    int oh = 0, om = 0;
    if (s.size() < 6 || (s[0] != '+' && s[0] != '-') || s[3] != ':' ||
        !Uint(s.substr(1, 2), 0, 24, &oh) || !Uint(s.substr(4, 2), 0, 60, &om)) {
      return std::nullopt;
    }
    const int sign = s[0] == '-' ? -1 : 1;
    s.remove_prefix(6);
    offset = sign * (oh * 60 + om) * 60;
  }
  if (!s.empty() || day < 1 || day > DaysIn(month, year)) return std::nullopt;
  const int64_t unix = DaysFromCivil(year, month, day) * 86400 + hour * 3600 + min * 60 + sec;
  return Time{unix - offset, nanos};
}

StatusOr<UpdateRequest> DecodeUpdateRequest(std::string_view body) {
  UpdateRequest out;
  Decoder d(body);
  RETURN_IF_ERROR(d.Request(&out));
  return out;
}

std::string GoJsonString(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back('"');
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"':
          out.append("\\\"");
          break;
        case '\\':
          out.append("\\\\");
          break;
        case '\b':
          out.append("\\b");
          break;
        case '\f':
          out.append("\\f");
          break;
        case '\n':
          out.append("\\n");
          break;
        case '\r':
          out.append("\\r");
          break;
        case '\t':
          out.append("\\t");
          break;
        default:
          if (c < 0x20 || c == '<' || c == '>' || c == '&') {
            out.append("\\u00");
            out.push_back(kHex[c >> 4]);
            out.push_back(kHex[c & 0xF]);
          } else {
            out.push_back(static_cast<char>(c));
          }
      }
      ++i;
      continue;
    }
    const size_t n = json::Utf8Length(s, i);
    if (n == 0) {
      out.append("\\ufffd");
      ++i;
    } else if (s.substr(i, n) == "\xE2\x80\xA8") {
      out.append("\\u2028");
      i += n;
    } else if (s.substr(i, n) == "\xE2\x80\xA9") {
      out.append("\\u2029");
      i += n;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  out.push_back('"');
  return out;
}

std::string EncodeUpdateRequest(const UpdateRequest& request) {
  std::string out = "{";
  if (const std::optional<TrainerStatus>& ts = request.trainer_status) {
    out.append("\"trainerStatus\":{");
    if (ts->progress_percentage) {
      out.append("\"progressPercentage\":");
      AppendGoInt(&out, *ts->progress_percentage);
      out.push_back(',');
    }
    if (ts->estimated_remaining_seconds) {
      out.append("\"estimatedRemainingSeconds\":");
      AppendGoInt(&out, *ts->estimated_remaining_seconds);
      out.push_back(',');
    }
    if (!ts->metrics.empty()) {
      out.append("\"metrics\":[");
      for (size_t i = 0; i < ts->metrics.size(); ++i) {
        const Metric& m = ts->metrics[i];
        if (i > 0) out.push_back(',');
        out.push_back('{');
        if (!m.name.empty()) out.append("\"name\":" + GoJsonString(m.name));
        if (!m.value.empty()) {
          if (!m.name.empty()) out.push_back(',');
          out.append("\"value\":" + GoJsonString(m.value));
        }
        out.push_back('}');
      }
      out.append("],");
    }
    out.append("\"lastUpdatedTime\":");
    out.append(ts->last_updated_time.IsZero() ? "null"
                                              : "\"" + ts->last_updated_time.Format() + "\"");
    out.push_back('}');
  }
  out.append("}\n");
  return out;
}

json::Value StatusApplyConfiguration(std::string_view ns, std::string_view name,
                                     const TrainerStatus& status) {
  json::Value ts = json::Value::Object();
  if (status.progress_percentage) {
    ts.Set("progressPercentage", json::Value(*status.progress_percentage));
  }
  if (status.estimated_remaining_seconds) {
    ts.Set("estimatedRemainingSeconds", json::Value(*status.estimated_remaining_seconds));
  }
  if (!status.metrics.empty()) {
    json::Value metrics = json::Value::Array();
    for (const Metric& m : status.metrics) {
      json::Value item = json::Value::Object();
      item.Set("name", json::Value(m.name));
      item.Set("value", json::Value(m.value));
      metrics.PushBack(std::move(item));
    }
    ts.Set("metrics", std::move(metrics));
  }
  ts.Set("lastUpdatedTime", status.last_updated_time.IsZero()
                                ? json::Value()
                                : json::Value(status.last_updated_time.Format()));
  json::Value obj = json::Value::Object();
  obj.Set("apiVersion", "trainer.kubeflow.org/v1alpha1");
  obj.Set("kind", "TrainJob");
  json::Value& meta = obj.Set("metadata", json::Value::Object());
  meta.Set("name", json::Value(name));
  meta.Set("namespace", json::Value(ns));
  obj.Set("status", json::Value::Object()).Set("trainerStatus", std::move(ts));
  return obj;
}

Status ValidateAsCrd(const TrainerStatus& status) {
  if (status.progress_percentage &&
      (*status.progress_percentage < 0 || *status.progress_percentage > 100)) {
    return InvalidError("progressPercentage must be between 0 and 100");
  }
  if (status.estimated_remaining_seconds && *status.estimated_remaining_seconds < 0) {
    return InvalidError("estimatedRemainingSeconds must be at least 0");
  }
  if (status.metrics.size() > 256) {
    return InvalidError("metrics has more than 256 items");
  }
  auto chars = [](const std::string& s) {
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
  };
  for (const Metric& m : status.metrics) {
    for (const std::string* v : {&m.name, &m.value}) {
      if (size_t n = chars(*v); n < 1 || n > 64) {
        return InvalidError("metric names and values must have 1 to 64 characters");
      }
    }
  }
  if (status.last_updated_time.IsZero()) {
    return InvalidError("lastUpdatedTime is required when trainerStatus is present");
  }
  // The CRD's date-time format takes four-digit years only.
  const std::string t = status.last_updated_time.Format();
  if (t.size() != 20 || t[0] == '-') {
    return InvalidError("lastUpdatedTime is out of the date-time range");
  }
  return OkStatus();
}

}  // namespace trainer::statusserver
