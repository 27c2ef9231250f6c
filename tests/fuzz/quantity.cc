// Fuzz target: Kubernetes quantities and IntOrString (common/quantity). The input is read as
// quantity text and, when it is JSON, as a JSON value (the Python SDK sends numbers). Properties:
//   - Parse (with its fast path for plain integers) agrees with ParseGeneral;
//   - ToString() is stable: it parses back to an equal quantity that prints the same text;
//   - arithmetic is exact: q - q is zero, q + 0 == q, q * 1 == q;
//   - FromJson of the JSON string equals Parse of the text with spaces trimmed (upstream's
//     UnmarshalJSON trims, ParseQuantity does not);
//   - IntOrString: FromJson -> ToJson -> FromJson gives the same value.
#include "common/quantity/quantity.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/json/json.h"
#include "tests/fuzz/fuzz_check.h"

namespace trainer::fuzz {
namespace {

using quantity::IntOrString;
using quantity::Quantity;

void CheckQuantity(const Quantity& q, const std::string& origin) {
  const std::string text = q.ToString();
  StatusOr<Quantity> again = Quantity::Parse(text);
  FUZZ_CHECK(again.ok(),
             origin + ": ToString() \"" + text + "\" does not parse: " + again.status().ToString());
  FUZZ_CHECK(*again == q, origin + ": \"" + text + "\" parses to a different value");
  FUZZ_CHECK(again->ToString() == text,
             origin + ": \"" + text + "\" prints as \"" + again->ToString() + "\"");
  FUZZ_CHECK((q - q).IsZero(), origin + ": q - q is " + (q - q).ToString());
  FUZZ_CHECK(q + Quantity() == q, origin + ": q + 0 is " + (q + Quantity()).ToString());
  FUZZ_CHECK(q * 1 == q, origin + ": q * 1 is " + (q * 1).ToString());
  FUZZ_CHECK((q <=> q) == 0, origin + ": q is not equal to itself");
}

}  // namespace
}  // namespace trainer::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainer;
  using quantity::IntOrString;
  using quantity::Quantity;
  std::string text(reinterpret_cast<const char*>(data), size);

  StatusOr<Quantity> q = Quantity::Parse(text);
  StatusOr<Quantity> general = Quantity::ParseGeneral(text);
  FUZZ_CHECK(q.ok() == general.ok(), "Parse and ParseGeneral disagree on \"" + text + "\"");
  if (q.ok()) {
    FUZZ_CHECK(*q == *general && q->format() == general->format() &&
                   q->ToString() == general->ToString(),
               "Parse and ParseGeneral differ on \"" + text + "\": " + q->ToString() + " and " +
                   general->ToString());
    fuzz::CheckQuantity(*q, "\"" + text + "\"");
  }
  constexpr std::string_view kSpace = " \t\n\v\f\r";
  std::string_view trimmed = text;
  trimmed.remove_prefix(std::min(trimmed.find_first_not_of(kSpace), trimmed.size()));
  trimmed.remove_suffix(trimmed.size() - (trimmed.find_last_not_of(kSpace) + 1));
  StatusOr<Quantity> from_string = Quantity::FromJson(json::Value(text));
  StatusOr<Quantity> trimmed_q = Quantity::Parse(trimmed);
  FUZZ_CHECK(trimmed_q.ok() == from_string.ok(),
             "FromJson(string) and Parse(trimmed) disagree on \"" + text + "\"");
  if (trimmed_q.ok()) {
    FUZZ_CHECK(*from_string == *trimmed_q,
               "FromJson(string) and Parse(trimmed) differ on \"" + text + "\"");
  }

  StatusOr<json::Value> v = json::Parse(text);
  if (!v.ok()) {
    return 0;
  }
  StatusOr<Quantity> from_json = Quantity::FromJson(*v);
  if (from_json.ok()) {
    fuzz::CheckQuantity(*from_json, "JSON " + text);
  }
  StatusOr<IntOrString> ios = IntOrString::FromJson(*v);
  if (ios.ok()) {
    json::Value out = ios->ToJson();
    StatusOr<IntOrString> again = IntOrString::FromJson(out);
    FUZZ_CHECK(again.ok() && *again == *ios,
               "IntOrString round trip changed " + text + " (written as " + json::Write(out) + ")");
  }
  return 0;
}
