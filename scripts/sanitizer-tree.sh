# Sourced by scripts/fuzz.sh and scripts/sanitize.sh: one clang-14 build tree with ASan + UBSan
# everywhere and libFuzzer coverage hooks, holding both the fuzz targets and the unit tests, so
# the libraries compile once for both. -O0 with line tables only: ASan + coverage make -O1/-O2
# builds of this tree cost ~19 CPU-minutes (measured), and single files compile in ~0.5-0.6 of
# the time at -O0; the unit tests are short, and reports still name file:line. The libraries build
# as unity batches, as the Release tree of scripts/test.sh does (the tests stay one file per
# object, tests/CMakeLists.txt): fewer, larger translation units parse the shared headers once.
#   configure_sanitizer_tree SOURCE_DIR BUILD_DIR
configure_sanitizer_tree() {
  if ! command -v clang++-14 >/dev/null; then
    echo "$(basename "$0"): clang++-14 not found; install it with scripts/setup.sh --test (Debian package clang-14)" >&2
    exit 2
  fi
  # -fsanitize=fuzzer-no-link instruments everything for coverage (the fuzz targets add the
  # libFuzzer main, tests/fuzz/CMakeLists.txt); PLANCK_SANITIZE adds ASan + UBSan everywhere.
  # -UPLANCK_TEST_AREAS: every test area, whatever an older configure cached.
  cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=None \
    -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
    -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link -O0 -gline-tables-only" \
    -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16 -DPLANCK_FUZZ=ON -DPLANCK_SANITIZE=ON -DPLANCK_BUILD_BENCH=OFF -UPLANCK_TEST_AREAS >/dev/null
}
