#!/usr/bin/env bash
# ci/test.sh — installs what is missing (Debian 12), then builds and tests
# zlink: gcc, ASan+UBSan, the kqueue backend on a test-only emulation,
# kqueue cross builds for macOS and the BSDs (compile and link only),
# libFuzzer on the wire parsing, TSan on the "threads" tests, Windows if
# present, a strict ISO C11 compile, jszmq in headless Chromium, and the
# interop suite against pyzmq, JeroMQ and go-zeromq, and the vcpkg port's
# build with consumers of the installed package.
#
# Environment:
#   ZLINK_BUILD_ROOT    where the build dirs go (default: build)
#   ZLINK_CI_STAGES     stages to run (default: "gcc asan kqueue cross fuzz
#                       tsan windows pedantic browser stacks vcpkg
#                       mbedtls3";
#                       "interlocked"
#                       on request)
#   ZLINK_SKIP_WINDOWS  1 skips the Windows stage
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD_ROOT=${ZLINK_BUILD_ROOT:-build}
export ZLINK_BUILD_ROOT=$BUILD_ROOT
STAGES=${ZLINK_CI_STAGES:-gcc asan kqueue cross fuzz tsan windows pedantic browser stacks vcpkg mbedtls3}

DEPS=(build-essential cmake ninja-build pkg-config libuv1-dev check
      libzmq3-dev clang libclang-rt-14-dev git ca-certificates
      libwslay-dev libmbedtls-dev openssl stunnel4
      python3 python3-venv python3-pip file dpkg-dev)

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
    # Unquoted: BUILD_TARGET may name several targets.
    # shellcheck disable=SC2086
    cmake --build "$dir" ${BUILD_TARGET:+--target $BUILD_TARGET}
}

stage_gcc() {
    local dir=$BUILD_ROOT/gcc
    # A libzmq with ws, built once and cached, for the ws interop tests.
    local libzmq_ws
    libzmq_ws=$(ci/libzmq-ws.sh)
    configure_build "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_C_COMPILER=gcc -DZLINK_LIBZMQ_WS_DIR="$libzmq_ws" \
        -DZLINK_BUILD_BENCH=ON
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

# The kqueue backend on tests/kqueue_emu, a test-only kqueue over epoll,
# under ASan+UBSan: the whole suite, plus test_kqueue's cases for the
# emulation itself. It proves the backend's logic against kqueue's
# documented semantics, not against a BSD or macOS kernel.
stage_kqueue() {
    local dir=$BUILD_ROOT/kqueue
    local flags="-fsanitize=address,undefined -fno-omit-frame-pointer \
-fno-sanitize-recover=undefined"
    sanitizer_build "$dir" "$flags" \
        -DZLINK_BACKEND=kqueue -DZLINK_KQUEUE_EMULATION=ON
    (cd "$dir" &&
        ASAN_OPTIONS=detect_leaks=1 \
        UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        ctest --output-on-failure -j2)
    # Kqueues without EVFILT_USER (OpenBSD before 7.6, NetBSD before 10)
    # wake the loop through a pipe: the contract's cases again, with the
    # emulation hiding EVFILT_USER.
    dir=$BUILD_ROOT/kqueue-nouser
    BUILD_TARGET=test_backend sanitizer_build "$dir" \
        "$flags -DZLINK_KQUEUE_EMU_NO_EVFILT_USER" \
        -DZLINK_BACKEND=kqueue -DZLINK_KQUEUE_EMULATION=ON
    cmake --build "$dir" --target test_kqueue test_socket_pair
    (cd "$dir" &&
        ASAN_OPTIONS=detect_leaks=1 \
        UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        ctest --output-on-failure -j2 \
            -R '^test_(backend|kqueue|socket_pair)$')
}

# The kqueue build, tls and ws included, compiled for aarch64/x86_64 macOS,
# x86_64 FreeBSD and x86_64 NetBSD with zig, the library and every test
# linked (ci/kqueue-cross.sh; zig and the cross-built libuv, Check, mbedTLS
# 3.6 and wslay are cached outside the repo, in
# $HOME/.cache/zlink-kqueue-cross).
stage_cross() {
    ci/kqueue-cross.sh
}

# libFuzzer over the parsing that faces the network (tests/fuzz), under
# ASan and UBSan. The library is built with the coverage the fuzzer steers
# by; each target runs a fixed number of inputs from a fixed seed.
stage_fuzz() {
    local dir=$BUILD_ROOT/fuzz
    BUILD_TARGET="fuzz_zmtp fuzz_connection fuzz_ws fuzz_tls fuzz_socks" sanitizer_build "$dir" "-fsanitize=address,undefined \
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

# The library as ISO C11 with gcc and clang, and with mingw's gcc for the
# IOCP backend once the Windows stage has installed it and its libuv: every
# pedantic warning is an error, and so is a VLA (C11 allows them, MSVC does
# not), so what MSVC would reject as a GNU extension fails here first.
# Compiles only, unoptimised. clang's -Wstatic-in-inline is off: it flags
# an always-inline function that pipe.h declares without inline, which ISO
# C allows.
stage_pedantic() {
    local strict="-pedantic-errors -Wvla" cc flags
    for cc in gcc clang; do
        flags=$strict
        if [ "$cc" = clang ]; then
            flags+=" -Wno-static-in-inline"
        fi
        cmake -G Ninja -S . -B "$BUILD_ROOT/pedantic-$cc" -DCMAKE_BUILD_TYPE= \
            -DZLINK_BUILD_TESTS=OFF -DCMAKE_C_COMPILER="$cc" \
            -DCMAKE_C_FLAGS="$flags"
        cmake --build "$BUILD_ROOT/pedantic-$cc" --target zlink_objects
    done
    local deps=${ZLINK_DEPS_DIR:-$HOME/.cache/zlink-win-deps}
    if ! command -v x86_64-w64-mingw32-gcc >/dev/null ||
        [ ! -f "$deps/include/uv.h" ]; then
        echo "pedantic: no mingw-w64 or Windows libuv yet; IOCP not checked"
        return
    fi
    cmake -G Ninja -S . -B "$BUILD_ROOT/pedantic-mingw" -DCMAKE_BUILD_TYPE= \
        -DCMAKE_TOOLCHAIN_FILE=cmake/mingw-w64-x86_64.cmake \
        -DZLINK_DEPS_DIR="$deps" -DZLINK_BUILD_TESTS=OFF \
        -DCMAKE_C_FLAGS="-D__USE_MINGW_ANSI_STDIO=1 $strict"
    cmake --build "$BUILD_ROOT/pedantic-mingw" --target zlink_objects
    # atomics.h's MSVC half, which no other stage compiles by default.
    cmake -G Ninja -S . -B "$BUILD_ROOT/pedantic-interlocked" \
        -DCMAKE_BUILD_TYPE= -DZLINK_BUILD_TESTS=OFF \
        -DCMAKE_TOOLCHAIN_FILE=cmake/mingw-w64-x86_64-clang.cmake \
        -DZLINK_DEPS_DIR="$deps"
    cmake --build "$BUILD_ROOT/pedantic-interlocked" --target zlink_objects
}

# The Windows stage again, built by clang with atomics.h's MSVC half
# (Interlocked intrinsics) in place of <stdatomic.h>: without MSVC, the
# way its atomics run under every test. Not in the default set: it costs
# as much as the windows stage.
stage_interlocked() {
    local root=$BUILD_ROOT
    [[ $root == /* ]] || root=$PWD/$root
    ZLINK_WIN_TOOLCHAIN=$PWD/cmake/mingw-w64-x86_64-clang.cmake \
        ZLINK_WIN_BUILD_DIR=$root/interlocked ci/test-windows.sh
}

# The tls and ws code against mbedTLS 3.6 (vcpkg's and Homebrew's major
# version; the other stages use Debian 12's 2.28), built from Debian 13's
# source package and cached outside the repo (ci/mbedtls3.sh), under
# ASan+UBSan: what differs between the two APIs, and TLS 1.3, which 2.28
# lacks, with stunnel and openssl as peers.
stage_mbedtls3() {
    local dir=$BUILD_ROOT/mbedtls3 prefix
    prefix=$(ci/mbedtls3.sh)
    BUILD_TARGET="test_tls test_tls_resume test_ws test_wss tls_probe \
zlink_peer zmq_peer" sanitizer_build "$dir" "-fsanitize=address,undefined \
-fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
        -DCMAKE_PREFIX_PATH="$prefix" -DZLINK_WITH_TLS=ON -DZLINK_WITH_WS=ON
    grep -q "^MbedTLS_DIR:PATH=$prefix/" "$dir/CMakeCache.txt" || {
        echo "mbedtls3: the build did not take mbedTLS from $prefix" >&2
        return 1
    }
    (cd "$dir" &&
        ASAN_OPTIONS=detect_leaks=1 \
        UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        ctest --output-on-failure -j2 \
            -R '^(tls_certs|test_tls|test_tls_resume|test_ws|test_wss|tls_interop)$')
}

# jszmq in headless Chromium against a zlink ws:// server.
stage_browser() {
    ci/test-browser.sh
}

# ports/zlink's configure and install, static and shared, and projects
# that use the result: find_package, pkg-config, add_subdirectory
# (ci/vcpkg-stage.sh).
stage_vcpkg() {
    ci/vcpkg-stage.sh
}

stage_windows() {
    ci/test-windows.sh
}

# test_interop against pyzmq, JeroMQ and go-zeromq/zmq4 peers
# (ci/interop-stacks.sh), as against libzmq in the other stages.
# A JeroMQ connector now and then reads the greeting and never writes a byte
# or polls its socket again; it does the same against libzmq, so no answer
# from our side reaches it (DESIGN.md §4a, "Silent connectors"). The stage
# runs the stacks again, up to twice, when one of them failed, and says so;
# a real breakage fails all three.
stage_stacks() {
    local attempt
    for attempt in 1 2 3; do
        ci/interop-stacks.sh && return 0
        echo "== stacks: attempt $attempt failed (see above)"
    done
    return 1
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
failed_logs=()
LOG_DIR=$BUILD_ROOT/logs
mkdir -p "$LOG_DIR"

# Runs one stage in a subshell with errexit on, so a failing stage ends
# itself but not the run: every stage reports.
run_stage() {
    local name=$1 title=$2
    banner "stage $name: $title ($BUILD_ROOT/$name)"
    local start=$SECONDS rc=0 log=$LOG_DIR/$name.log
    set +e
    (set -e; "stage_$name") 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    set -e
    local elapsed=$((SECONDS - start))
    if [ "$rc" -eq 0 ]; then
        passed=$((passed + 1))
        results+=("stage $name: passed in ${elapsed}s")
    else
        failed=$((failed + 1))
        results+=("stage $name: FAILED (exit $rc) in ${elapsed}s")
        failed_logs+=("$log")
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
    kqueue) run_stage kqueue "kqueue backend on the epoll emulation, ASan+UBSan, all tests" ;;
    cross) run_stage cross "kqueue for macOS, FreeBSD, NetBSD with zig, compile and link" ;;
    fuzz) run_stage fuzz "clang libFuzzer + ASan+UBSan, tests/fuzz" ;;
    tsan) run_stage tsan "clang TSan, tests labelled threads" ;;
    pedantic) run_stage pedantic "library as ISO C11, gcc and clang" ;;
    interlocked) run_stage interlocked "Windows tests, MSVC atomics, Wine" ;;
    browser) run_stage browser "headless Chromium + jszmq over ws:// (ci/test-browser.sh)" ;;
    stacks) run_stage stacks "test_interop against pyzmq, JeroMQ, go-zeromq (ci/interop-stacks.sh)" ;;
    vcpkg) run_stage vcpkg "vcpkg port's build, installed-package consumers (ci/vcpkg-stage.sh)" ;;
    mbedtls3) run_stage mbedtls3 "tls and ws against mbedTLS 3.6 (ci/mbedtls3.sh), ASan+UBSan" ;;
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

# CI keeps only the end of the output, so a failed stage's own end is
# repeated here, just above the summary, where it survives.
for log in "${failed_logs[@]}"; do
    banner "the end of $log"
    tail -n 60 "$log"
done

banner "summary"
for line in "${results[@]}"; do
    echo "$line"
done
echo "stages: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
