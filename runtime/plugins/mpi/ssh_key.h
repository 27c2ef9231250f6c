// The SSH key pair of an MPI TrainJob: an ECDSA P-521 key as upstream generates it with Go's
// crypto/ecdsa, x509.MarshalECPrivateKey and ssh.MarshalAuthorizedKey (plugins/mpi/mpi.go),
// built here with OpenSSL 3.
//
//   ASSIGN_OR_RETURN(mpi::SSHKeyPair kp, mpi::GenerateSSHKeyPair());
//   kp.private_key_pem;     // "-----BEGIN EC PRIVATE KEY-----\n..." (SEC1 DER)
//   kp.authorized_key;      // "ecdsa-sha2-nistp521 AAAA...\n"
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "common/status/status.h"

namespace trainer::plugins::mpi {

struct SSHKeyPair {
  std::string private_key_pem;  // PEM block "EC PRIVATE KEY"
  std::string authorized_key;   // one authorized_keys line, newline-terminated
};

// Where a key pair comes from: fresh keys in production, a fixed key in tests and goldens.
using SSHKeyGenerator = std::function<StatusOr<SSHKeyPair>()>;

// A fresh ECDSA P-521 key from OpenSSL's default random source.
StatusOr<SSHKeyPair> GenerateSSHKeyPair();

// The pair of an existing P-521 private key given as PEM (SEC1 "EC PRIVATE KEY" or PKCS#8
// "PRIVATE KEY"); the private key is re-encoded as SEC1. Other curves and key types are an
// error.
StatusOr<SSHKeyPair> SSHKeyPairFromPrivateKeyPEM(std::string_view pem);

// A generator that always returns the pair of `pem` (validated once, here).
StatusOr<SSHKeyGenerator> FixedSSHKeyGenerator(std::string_view pem);

}  // namespace trainer::plugins::mpi
