#!/usr/bin/env bash
# ci/test.sh — installs what is missing (Debian 12), then builds and tests
# zlink: gcc, ASan+UBSan, libFuzzer on the wire parsing, TSan on the
# "threads" tests, Windows if present, and jszmq in headless Chromium.
#
# Environment:
#   ZLINK_BUILD_ROOT    where the build dirs go (default: build)
#   ZLINK_CI_STAGES     stages to run
#                       (default: "gcc asan fuzz tsan windows browser")
#   ZLINK_SKIP_WINDOWS  1 skips the Windows stage
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD_ROOT=${ZLINK_BUILD_ROOT:-build}
export ZLINK_BUILD_ROOT=$BUILD_ROOT
STAGES=${ZLINK_CI_STAGES:-gcc asan fuzz tsan windows browser}

DEPS=(build-essential cmake ninja-build pkg-config libuv1-dev check
      libzmq3-dev clang libclang-rt-14-dev git ca-certificates)

installed() {
    dpkg -s "$1" 2>/dev/null | grep -q '^Status: install ok installed'
}

install_missing() {
    if ! command -v dpkg >/dev/null; then
        echo "ci: no dpkg here; assuming the dependencies are installed"
        return
    fi
    local missing=() pkg
    for pkg in "$@"; do
        installed "$pkg" || missing+=("$pkg")
    done
    if ((${#missing[@]} == 0)); then
        echo "ci: dependencies already installed"
        return
    fi
    echo "ci: installing ${missing[*]}"
    local sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        sudo=(sudo)
    fi
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update
    "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
}

banner() {
    echo
    echo "=================================================================="
    echo "== $*"
    echo "=================================================================="
}

# Configures and builds everything, or only $BUILD_TARGET when it is set.
configure_build() {
    local dir=$1
    shift
    cmake -G Ninja -S . -B "$dir" -DZLINK_BUILD_TESTS=ON "$@"
    cmake --build "$dir" ${BUILD_TARGET:+--target "$BUILD_TARGET"}
}

stage_gcc() {
    local dir=$BUILD_ROOT/gcc
    # A libzmq with ws, built once and cached, for the ws interop tests.
    local libzmq_ws
    libzmq_ws=$(ci/libzmq-ws.sh)
    configure_build "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_C_COMPILER=gcc -DZLINK_LIBZMQ_WS_DIR="$libzmq_ws"
    (cd "$dir" && ctest --output-on-failure -j2)
}

# Sanitizer builds: flags go to the compiler and to every link, so the
# shared library and each test carry the runtime. Further arguments go to
# cmake.
sanitizer_build() {
    local dir=$1 flags=$2
    shift 2
    configure_build "$dir" -DCMAKE_BUILD_TYPE=Debug \
        -DCMAKE_C_COMPILER=clang \
        -DCMAKE_C_FLAGS="$flags -O1" \
        -DCMAKE_EXE_LINKER_FLAGS="$flags" \
        -DCMAKE_SHARED_LINKER_FLAGS="$flags" \
        -DCMAKE_MODULE_LINKER_FLAGS="$flags" "$@"
}

stage_asan() {
    local dir=$BUILD_ROOT/asan
    sanitizer_build "$dir" "-fsanitize=address,undefined \
-fno-omit-frame-pointer -fno-sanitize-recover=undefined"
    (cd "$dir" &&
        ASAN_OPTIONS=detect_leaks=1 \
        UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        ctest --output-on-failure -j2)
}

# libFuzzer over the parsing that faces the network (tests/fuzz), under
# ASan and UBSan. The library is built with the coverage the fuzzer steers
# by; each target runs a fixed number of inputs from a fixed seed.
stage_fuzz() {
    local dir=$BUILD_ROOT/fuzz
    BUILD_TARGET=fuzz_zmtp sanitizer_build "$dir" "-fsanitize=address,undefined \
-fsanitize=fuzzer-no-link -fno-omit-frame-pointer \
-fno-sanitize-recover=undefined" -DZLINK_BUILD_FUZZ=ON
    (cd "$dir" &&
        ASAN_OPTIONS=detect_leaks=1 \
        UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        ctest --output-on-failure -L fuzz)
}

stage_tsan() {
    local dir=$BUILD_ROOT/tsan
    sanitizer_build "$dir" "-fsanitize=thread -fno-omit-frame-pointer"
    # clang 14's TSan cannot map its shadow under more than 28 bits of
    # mmap randomisation; run without ASLR where the kernel uses more.
    local run=()
    local bits
    bits=$(cat /proc/sys/vm/mmap_rnd_bits 2>/dev/null || echo 0)
    if [ "$bits" -gt 28 ] && command -v setarch >/dev/null; then
        run=(setarch "$(uname -m)" -R)
    fi
    # Only tests labelled "threads" (tests/CMakeLists.txt); none labelled
    # yet is not a failure.
    (cd "$dir" &&
        TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
        "${run[@]}" ctest --output-on-failure -j2 -L threads)
}

stage_browser() {
    ci/test-browser.sh
}

stage_windows() {
    ci/test-windows.sh
}

windows_skip_reason() {
    if [ "${ZLINK_SKIP_WINDOWS:-0}" = 1 ]; then
        echo "ZLINK_SKIP_WINDOWS=1"
    elif [ ! -x ci/test-windows.sh ]; then
        echo "ci/test-windows.sh is missing or not executable"
    fi
}

passed=0
failed=0
skipped=0
results=()

# Runs one stage in a subshell with errexit on, so a failing stage ends
# itself but not the run: every stage reports.
run_stage() {
    local name=$1 title=$2
    banner "stage $name: $title ($BUILD_ROOT/$name)"
    local start=$SECONDS rc=0
    set +e
    (set -e; "stage_$name")
    rc=$?
    set -e
    local elapsed=$((SECONDS - start))
    if [ "$rc" -eq 0 ]; then
        passed=$((passed + 1))
        results+=("stage $name: passed in ${elapsed}s")
    else
        failed=$((failed + 1))
        results+=("stage $name: FAILED (exit $rc) in ${elapsed}s")
    fi
    echo "== stage $name: $([ "$rc" -eq 0 ] && echo passed || echo FAILED)" \
        "in ${elapsed}s"
}

skip_stage() {
    skipped=$((skipped + 1))
    results+=("stage $1: skipped ($2)")
    banner "stage $1: skipped ($2)"
}

banner "dependencies"
install_missing "${DEPS[@]}"

for stage in $STAGES; do
    case $stage in
    gcc) run_stage gcc "gcc RelWithDebInfo, all tests" ;;
    asan) run_stage asan "clang ASan+UBSan, all tests" ;;
    fuzz) run_stage fuzz "clang libFuzzer + ASan+UBSan, tests/fuzz" ;;
    tsan) run_stage tsan "clang TSan, tests labelled threads" ;;
    browser) run_stage browser "headless Chromium + jszmq over ws:// (ci/test-browser.sh)" ;;
    windows)
        reason=$(windows_skip_reason)
        if [ -n "$reason" ]; then
            skip_stage windows "$reason"
        else
            run_stage windows "ci/test-windows.sh"
        fi
        ;;
    *)
        echo "ci: unknown stage '$stage'" >&2
        exit 2
        ;;
    esac
done

banner "summary"
for line in "${results[@]}"; do
    echo "$line"
done
echo "stages: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
