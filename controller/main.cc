// trainer-controller: reconciles TrainJobs into JobSets and back into status (controller/manager.h
// says what it runs). This file only wires: options, the service frame, the service.
#include <iostream>
#include <string>
#include <vector>

#include "common/service/frame.h"
#include "controller/manager.h"
#include "controller/options.h"

int main(int argc, char** argv) {
  using namespace trainer;
  StatusOr<controller::Options> options = controller::ParseOptions(argc, argv);
  if (!options.ok()) {
    std::cerr << "trainer-controller: " << options.status().message() << "\n";
    return 2;
  }
  if (options->help) {
    std::cout << controller::Usage();
    return 0;
  }
  service::Frame frame({.program = "trainer-controller",
                        .health_probe_bind_address = options->health_probe_bind_address,
                        .metrics_bind_address = options->metrics_bind_address,
                        .metrics_secure_serving = options->metrics_secure_serving,
                        .metrics_cert_dir = options->metrics_cert_dir,
                        .verbosity = options->verbosity,
                        .log_format = options->log_format});
  return frame.Run([&](service::Frame& f) { return controller::Manager::New(*options, f); });
}
