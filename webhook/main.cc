// trainer-webhook: the admission webhook server of trainer-cpp (webhook/service.h says what it
// serves). This file only wires: options, the service frame, the service.
#include <iostream>
#include <string>
#include <vector>

#include "common/service/frame.h"
#include "webhook/options.h"
#include "webhook/service.h"

int main(int argc, char** argv) {
  using namespace trainer;
  StatusOr<webhook::Options> options = webhook::ParseOptions({argv + 1, argv + argc});
  if (!options.ok()) {
    std::cerr << "trainer-webhook: " << options.status().message() << "\n" << webhook::Usage();
    return 2;
  }
  if (options->help) {
    std::cout << webhook::Usage();
    return 0;
  }
  service::Frame frame({.program = "trainer-webhook",
                        .health_probe_bind_address = options->health_probe_bind_address,
                        .metrics_bind_address = options->metrics_bind_address,
                        .verbosity = options->verbosity,
                        .log_format = options->log_format});
  return frame.Run([&](service::Frame& f) { return webhook::WebhookService::New(*options, f); });
}
