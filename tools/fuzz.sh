#!/usr/bin/env bash
# Builds kernelc's fuzz targets (compiler/fuzz, with Clang's libFuzzer, ASan
# and UBSan: --config=fuzz) and runs each for SECONDS (default 20) over its
# seed corpus in compiler/fuzz/corpus/, plus the bad inputs and golden cases
# of the repository. New inputs go to a scratch corpus, never into the
# repository; a crash, a sanitizer finding or a broken round trip fails the
# run and leaves the input that caused it in ARTIFACTS (default
# fuzz-artifacts/).
#
#   tools/fuzz.sh              # what tools/test.sh does: 20 s each
#   tools/fuzz.sh 3600         # a longer run: an hour each
#   tools/fuzz.sh 600 expr     # one target
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-20}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(expr json annotation)
artifacts="${ARTIFACTS:-$PWD/fuzz-artifacts}"
mkdir -p "$artifacts"

labels=()
for t in "${targets[@]}"; do labels+=("//compiler/fuzz:${t%_fuzzer}_fuzzer"); done
bazel build --config=fuzz "${labels[@]}"
bin="$(bazel info --config=fuzz bazel-bin)/compiler/fuzz"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

for t in "${targets[@]}"; do
  t="${t%_fuzzer}"
  seeds=("compiler/fuzz/corpus/$t")
  case "$t" in
    json) seeds+=($(find tests/bad_inputs/cases tests/golden -maxdepth 2 -name '*.json' -not -path '*/expected/*' -printf '%h\n' | sort -u)) ;;
    # A few executions a second (each parses kernelc.h): the goldens only,
    # so that the seeds take a few seconds of the time.
    annotation) seeds+=($(find tests/golden -maxdepth 2 -name '*.cu' -printf '%h\n' | sort -u)) ;;
  esac
  mkdir -p "$work/$t"
  echo "== ${t}_fuzzer: ${seconds} s"
  # The first corpus directory is the one libFuzzer writes to.
  "$bin/${t}_fuzzer" -max_total_time="$seconds" -timeout=30 \
    -rss_limit_mb=4096 -max_len=8192 -print_final_stats=1 \
    -artifact_prefix="$artifacts/${t}-" "$work/$t" "${seeds[@]}"
done
