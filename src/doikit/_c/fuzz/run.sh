#!/usr/bin/env bash
# Build the C reader's libFuzzer target with AddressSanitizer and UBSan, and fuzz it:
#   bash src/doikit/_c/fuzz/run.sh [SECONDS] [libFuzzer options...]
# Needs clang with libFuzzer (Debian: apt-get install clang); not a CI step. Builds into
# build/fuzz/, grows a working corpus there from the seeds in corpus/, and leaves any
# crashing input there too (check_reader FILE replays one with any compiler).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
out="$root/build/fuzz"
seconds="${1:-60}"
shift || true
mkdir -p "$out/corpus"
"${CLANG:-clang}" -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I"$here/../lib" "$here/../lib/reader.c" "$here/oracle.c" "$here/fuzz_reader.c" \
  -o "$out/fuzz_reader"
cd "$out"
exec ./fuzz_reader -max_total_time="$seconds" -max_len=256 -print_final_stats=1 \
  -dict="$here/reader.dict" \
  -artifact_prefix="$out/" "$@" "$out/corpus" "$here/corpus"
