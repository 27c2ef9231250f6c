// MPI SSH keys: P-521 generation, SEC1 PEM, and the authorized_keys line, checked against
// `ssh-keygen -y` of a fixed key (testdata/p521.pem).
#include "runtime/plugins/mpi/ssh_key.h"

#include <catch2/catch.hpp>

#include "common/files/files.h"

namespace trainer::plugins::mpi {
namespace {

std::string ReadFile(const std::string& path) {
  StatusOr<std::string> text = files::ReadFile(path);
  REQUIRE(text.ok());
  return *text;
}

constexpr char kTestdata[] = "tests/unit/runtime/plugins/mpi/testdata/";
// `ssh-keygen -y -f testdata/p521.pem`.
constexpr char kWantAuthorizedKey[] =
    "ecdsa-sha2-nistp521 "
    "AAAAE2VjZHNhLXNoYTItbmlzdHA1MjEAAAAIbmlzdHA1MjEAAACFBAFfY5Mns4AOpHOeXiGeQerz3PtTLkp0Z88dAYlP"
    "QIJdZeVUI6mSHmCabho0PxiQ0B6OWLX9xfA+m/AxG3b1rpu5ZAAhT2Ppqi8FSFsWBk9vMvD13OMoJy5vxmj0m5nQO7zV"
    "kLEgFo2eRh9oTSQ3e/flrW0cYrdb/kXq3WT/1wm6jK9bEQ==\n";

TEST_CASE("SSHKeyPairFromPrivateKeyPEM", "[mpi]") {
  SECTION("public key matches ssh-keygen") {
    std::string pem = ReadFile(std::string(kTestdata) + "p521.pem");
    StatusOr<SSHKeyPair> kp = SSHKeyPairFromPrivateKeyPEM(pem);
    REQUIRE(kp.ok());
    CHECK(kp->authorized_key == kWantAuthorizedKey);
    CHECK(kp->private_key_pem == pem);  // SEC1 in, identical SEC1 out
  }
  SECTION("other curves are rejected") {
    StatusOr<SSHKeyPair> kp =
        SSHKeyPairFromPrivateKeyPEM(ReadFile(std::string(kTestdata) + "p256.pem"));
    REQUIRE_FALSE(kp.ok());
    CHECK(kp.status().message() == "ssh key: want an ECDSA P-521 private key");
  }
  SECTION("garbage is rejected") { CHECK_FALSE(SSHKeyPairFromPrivateKeyPEM("not a key").ok()); }
}

TEST_CASE("GenerateSSHKeyPair", "[mpi]") {
  StatusOr<SSHKeyPair> a = GenerateSSHKeyPair();
  StatusOr<SSHKeyPair> b = GenerateSSHKeyPair();
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->private_key_pem.rfind("-----BEGIN EC PRIVATE KEY-----\n", 0) == 0);
  CHECK(a->authorized_key.rfind("ecdsa-sha2-nistp521 AAAAE2VjZHNhLXNoYTItbmlzdHA1MjE", 0) == 0);
  CHECK(a->authorized_key.back() == '\n');
  CHECK(a->private_key_pem != b->private_key_pem);
  // The private key round-trips to the same public key.
  StatusOr<SSHKeyPair> again = SSHKeyPairFromPrivateKeyPEM(a->private_key_pem);
  REQUIRE(again.ok());
  CHECK(again->authorized_key == a->authorized_key);
}

}  // namespace
}  // namespace trainer::plugins::mpi
