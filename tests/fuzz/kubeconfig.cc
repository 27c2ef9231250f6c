// Fuzz target: kubeconfig parsing (common/kube/curl/config.h ParseKubeconfig), with relative
// file references resolved against an empty directory. Properties of an accepted kubeconfig: a
// non-empty server URL without a trailing slash, a non-empty namespace, and the same result when
// parsed again (parsing is deterministic and keeps no state).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "common/kube/curl/config.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainer;
  static const std::string* base_dir = [] {
    auto* dir = new std::string(
        (std::filesystem::temp_directory_path() / "trainer-fuzz-kubeconfig-empty").string());
    std::filesystem::create_directories(*dir);
    return dir;
  }();
  std::string_view text(reinterpret_cast<const char*>(data), size);
  StatusOr<kube::RestConfig> cfg = kube::ParseKubeconfig(text, *base_dir);
  StatusOr<kube::RestConfig> again = kube::ParseKubeconfig(text, *base_dir);
  FUZZ_CHECK(cfg.ok() == again.ok(), "parsing the same kubeconfig twice gave different outcomes");
  if (!cfg.ok()) {
    FUZZ_CHECK(cfg.status().ToString() == again.status().ToString(),
               "different errors: " + cfg.status().ToString() + " / " + again.status().ToString());
    return 0;
  }
  FUZZ_CHECK(!cfg->server.empty() && cfg->server.back() != '/',
             "server keeps a trailing slash: " + cfg->server);
  FUZZ_CHECK(!cfg->default_namespace.empty(), "empty namespace");
  FUZZ_CHECK(cfg->server == again->server && cfg->bearer_token == again->bearer_token &&
                 cfg->ca_pem == again->ca_pem && cfg->default_namespace == again->default_namespace,
             "parsing the same kubeconfig twice gave different configs");
  return 0;
}
