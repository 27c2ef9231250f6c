// Base64 (RFC 4648, standard alphabet, with padding), on OpenSSL's EVP_EncodeBlock and
// EVP_DecodeBlock. The one encoder and decoder of trainer-cpp: Secret data, AdmissionReview
// patches, SSH public keys, kubeconfig `*-data` fields, YAML `!!binary` scalars and JWTs.
//
//   std::string b64 = encoding::Base64Encode("hello");       // "aGVsbG8="
//   StatusOr<std::string> raw = encoding::Base64Decode(b64);  // "hello"
#pragma once

#include <string>
#include <string_view>

#include "common/status/status.h"

namespace trainer::encoding {

// No line breaks.
std::string Base64Encode(std::string_view data);

// Decodes as Go's base64.StdEncoding does (what client-go and go-yaml use): padding required,
// ASCII white space (space, tab, CR, LF) anywhere is ignored. Anything else is kInvalidArgument.
StatusOr<std::string> Base64Decode(std::string_view text);

// Go's base64.RawURLEncoding (JWT segments): the URL alphabet ('-', '_'), no padding, nothing
// else.
StatusOr<std::string> Base64RawURLDecode(std::string_view text);

}  // namespace trainer::encoding
