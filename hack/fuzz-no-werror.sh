#!/usr/bin/env bash
# Compiler launcher for the fuzz build (hack/fuzz.sh): runs the compiler with -Wno-error appended,
# after the targets' own -Werror, so clang-only warnings print without failing the build. Through
# ccache when installed, so CI's fuzzing smoke run (hack/test.sh) rebuilds only what changed.
if command -v ccache >/dev/null; then
  CCACHE_NOHASHDIR=1 exec ccache "$@" -Wno-error
fi
exec "$@" -Wno-error
