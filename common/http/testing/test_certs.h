// Test-only helpers: a throwaway CA and leaf certificates made with the OpenSSL API, and a cert
// directory laid out the way the kubelet writes a Secret volume (`..data` symlink swapped
// atomically), for tests of TLS serving and certificate rotation.
//
//   TestCa ca = TestCa::Create();
//   CertPair pair = ca.Issue("webhook-1");        // SAN localhost, 127.0.0.1
//   SecretDir dir;                                 // a fresh temp dir (files::testing::TempDir)
//   dir.Write(pair);                               // first version
//   dir.Write(ca.Issue("webhook-2"));              // rotation: one rename(2)
#pragma once

#include <string>

#include "common/files/testing/temp_dir.h"

namespace trainer::http::testing {

struct CertPair {
  std::string cert_pem;  // leaf (+ nothing else)
  std::string key_pem;
  std::string common_name;
};

class TestCa {
 public:
  static TestCa Create(const std::string& name = "trainer-test-ca");
  // A leaf for localhost / 127.0.0.1 / ::1 signed by this CA, valid for `days` (negative:
  // already expired).
  CertPair Issue(const std::string& common_name, int days = 1) const;
  const std::string& cert_pem() const { return pair_.cert_pem; }

 private:
  CertPair pair_;
};

// A temporary directory with tls.crt / tls.key as symlinks through `..data`, like a Secret
// volume. Removed on destruction.
class SecretDir {
 public:
  const std::string& path() const { return path_; }
  // Publishes a new version atomically (new timestamped dir, then rename of `..data`).
  void Write(const CertPair& pair);
  // Publishes arbitrary contents (e.g. garbage, a key of another certificate).
  void WriteRaw(const std::string& cert, const std::string& key);
  // Writes `ca.crt` (a plain file) for clients.
  std::string WriteCa(const std::string& ca_pem);

 private:
  files::testing::TempDir dir_;
  std::string path_ = dir_.path.string();
  int version_ = 0;
};

}  // namespace trainer::http::testing
