// Reading a whole file: the one helper for certificates, kubeconfigs, tokens, manifests and
// configuration files.
//
//   ASSIGN_OR_RETURN(std::string pem, files::ReadFile(cert_path));
#pragma once

#include <string>

#include "common/status/status.h"

namespace trainer::files {

// The file's bytes. A file that cannot be opened, for whatever reason, is kNotFound with Go's
// os.ReadFile text ("open /etc/x: no such file or directory", "open /etc/x: permission
// denied"); a read failure after opening is kInternal.
StatusOr<std::string> ReadFile(const std::string& path);

}  // namespace trainer::files
