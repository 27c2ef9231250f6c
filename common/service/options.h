// The options every trainer-cpp service shares: the frame's flags (--config, probes, metrics,
// logging; upstream's spellings) and the Configuration file's fields that map to them. A
// service's FlagSet is ServiceFlags around its own flags; after parsing, LoadConfiguration reads
// --config, applies the frame's fields and returns the file for the service's own.
//
//   Options o;   // o.frame holds the service's defaults: they show in --help
//   flags::FlagSet fs("trainer-webhook", "...", ServiceFlags(o.frame, {
//       {"port", "Webhook HTTPS port.", flags::Int(&o.port, 1, 65535)}}));
//   RETURN_IF_ERROR(fs.Parse(args));
//   ASSIGN_OR_RETURN(std::optional<Configuration> cfg,
//                    LoadConfiguration(fs, {"webhook.port"}, o.frame));
//   if (cfg && cfg->Has("webhook.port") && !fs.Given("port")) o.port = cfg->webhook_port;
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/flags/flags.h"
#include "common/service/configuration.h"
#include "common/service/frame.h"

namespace trainer::service {

// --config, then `own`, then --health-probe-bind-address, --metrics-bind-address,
// --metrics-secure-serving, --metrics-cert-dir, -v, --log-format and upstream's --zap-* flags
// (o.zap); defaults are `o`'s values.
std::vector<flags::Flag> ServiceFlags(FrameOptions& o, std::vector<flags::Flag> own);

// Applies the --zap-* flags to `o` where -v and --log-format were not given. Then, without
// --config: nullopt. Otherwise the loaded file, having applied to `o` the frame's fields
// it sets whose flag `fs` was not given (a flag wins over the file, the file over the default),
// and listed in o.ignored_config_fields what neither the frame nor `applicable` covers.
StatusOr<std::optional<Configuration>> LoadConfiguration(
    const flags::FlagSet& fs, std::initializer_list<std::string_view> applicable, FrameOptions& o);

// A service's --help text: its FlagSet over a fresh Options, whose defaults it shows.
template <typename Options, typename MakeFlags>
std::string ServiceUsage(MakeFlags make_flags) {
  Options o;
  std::string gates;
  return make_flags(o, &gates).Usage();
}

// A service's ParseOptions: `make_flags(o, &gates)` builds its FlagSet (--feature-gates into
// `gates`); once the command line parses, `settle(fs, gates, o)` reads the Configuration file
// and checks the values together. Its errors exit 1, as upstream's main (flags::AfterFlags).
template <typename Options, typename MakeFlags, typename Settle>
StatusOr<Options> ParseServiceOptions(const std::vector<std::string>& args, MakeFlags make_flags,
                                      Settle settle) {
  Options o;
  std::string gates;
  flags::FlagSet fs = make_flags(o, &gates);
  RETURN_IF_ERROR(fs.Parse(args));
  o.help = fs.help();
  RETURN_IF_ERROR(flags::AfterFlags(settle(fs, gates, o)));
  return o;
}

}  // namespace trainer::service
