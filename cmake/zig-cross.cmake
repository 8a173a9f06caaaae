# zig-cross.cmake — CMake toolchain for compiling and linking (not running)
# zlink's kqueue build for macOS and the BSDs with zig's clang and libc
# stubs (ci/kqueue-cross.sh). ZLINK_ZIG_TARGET is zig's target triple
# (aarch64-macos, x86_64-freebsd, …); ZLINK_ZIG_BIN holds the zig-cc,
# zig-ar and zig-ranlib wrappers for it; ZLINK_DEPS_DIR the cross-built
# libuv and Check. Each may come from the environment.
foreach(var ZLINK_ZIG_TARGET ZLINK_ZIG_BIN ZLINK_DEPS_DIR)
  if(NOT ${var} AND DEFINED ENV{${var}})
    set(${var} $ENV{${var}})
  endif()
  if(NOT ${var})
    message(FATAL_ERROR "zig-cross.cmake needs ${var}")
  endif()
endforeach()
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES
  ZLINK_ZIG_TARGET ZLINK_ZIG_BIN ZLINK_DEPS_DIR)

if(ZLINK_ZIG_TARGET MATCHES "macos")
  set(CMAKE_SYSTEM_NAME Darwin)
elseif(ZLINK_ZIG_TARGET MATCHES "freebsd")
  set(CMAKE_SYSTEM_NAME FreeBSD)
elseif(ZLINK_ZIG_TARGET MATCHES "netbsd")
  set(CMAKE_SYSTEM_NAME NetBSD)
else()
  message(FATAL_ERROR "zig-cross.cmake: no system for ${ZLINK_ZIG_TARGET}")
endif()
string(REGEX REPLACE "-.*" "" CMAKE_SYSTEM_PROCESSOR ${ZLINK_ZIG_TARGET})

set(CMAKE_C_COMPILER ${ZLINK_ZIG_BIN}/zig-cc)
set(CMAKE_AR ${ZLINK_ZIG_BIN}/zig-ar CACHE FILEPATH "")
set(CMAKE_RANLIB ${ZLINK_ZIG_BIN}/zig-ranlib CACHE FILEPATH "")
# No SDK here: zig brings the headers and libSystem stubs itself.
set(CMAKE_OSX_SYSROOT "" CACHE PATH "")
set(CMAKE_OSX_DEPLOYMENT_TARGET "" CACHE STRING "")

set(CMAKE_FIND_ROOT_PATH ${ZLINK_DEPS_DIR})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
