// trainer-controller: reconciles TrainJobs into JobSets and back into status (controller/manager.h
// says what it runs). This file only wires: options, the service frame, the service.
#include "common/flags/flags.h"
#include "common/service/frame.h"
#include "controller/manager.h"
#include "controller/options.h"

int main(int argc, char** argv) {
  using namespace trainer;
  StatusOr<controller::Options> options = controller::ParseOptions({argv + 1, argv + argc});
  if (std::optional<int> code =
          flags::ExitEarly("trainer-controller", options, controller::Usage)) {
    return *code;
  }
  service::Frame frame(options->frame);
  return frame.Run([&](service::Frame& f) { return controller::Manager::New(*options, f); });
}
