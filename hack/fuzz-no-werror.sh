#!/usr/bin/env bash
# Compiler launcher for the fuzz build (hack/fuzz.sh): runs the compiler with -Wno-error appended,
# after the targets' own -Werror, so clang-only warnings print without failing the build.
exec "$@" -Wno-error
