// The Flux script templates (templates.cc says where they come from).
#pragma once

namespace trainer::plugins::flux {

// broker.toml: default_bind, default_connect, hosts, queue-policy.
extern const char kBrokerTemplate[];
// entrypoint.sh: the `flux R encode` resource spec, the main host, the `flux run` flags.
extern const char kEntrypointTemplate[];
// init.sh: flux root, main host, host list, broker.toml.
extern const char kInitTemplate[];

}  // namespace trainer::plugins::flux
