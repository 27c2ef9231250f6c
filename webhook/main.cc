// trainer-webhook: the admission webhook server of trainer-cpp (webhook/service.h says what it
// serves). This file only wires: options, the service frame, the service.
#include "common/flags/flags.h"
#include "common/service/frame.h"
#include "webhook/options.h"
#include "webhook/service.h"

int main(int argc, char** argv) {
  using namespace trainer;
  StatusOr<webhook::Options> options = webhook::ParseOptions({argv + 1, argv + argc});
  if (std::optional<int> code = flags::ExitEarly("trainer-webhook", options, webhook::Usage)) {
    return *code;
  }
  service::Frame frame(options->frame);
  return frame.Run([&](service::Frame& f) { return webhook::WebhookService::New(*options, f); });
}
