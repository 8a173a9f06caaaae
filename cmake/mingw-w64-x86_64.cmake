# mingw-w64-x86_64.cmake — CMake toolchain for the Windows x86_64 cross build
# with Debian's mingw-w64 (see ci/windows-deps.sh and ci/test-windows.sh).
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)

set(ZLINK_MINGW_TRIPLE x86_64-w64-mingw32)
set(CMAKE_C_COMPILER ${ZLINK_MINGW_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${ZLINK_MINGW_TRIPLE}-g++)
set(CMAKE_RC_COMPILER ${ZLINK_MINGW_TRIPLE}-windres)
# mingw's own C99 printf family instead of msvcrt's, which lacks %zu, %ju
# and %lld on older Windows; applies to the dependencies (Check formats its
# failure messages with it) as much as to zlink.
set(CMAKE_C_FLAGS_INIT "-D__USE_MINGW_ANSI_STDIO=1")

# Libraries and headers come from the mingw sysroot and, for libuv and
# Check, from the cross-built dependency cache; host programs from the host.
if(NOT ZLINK_DEPS_DIR AND DEFINED ENV{ZLINK_DEPS_DIR})
  set(ZLINK_DEPS_DIR $ENV{ZLINK_DEPS_DIR})
endif()
set(CMAKE_FIND_ROOT_PATH /usr/${ZLINK_MINGW_TRIPLE} ${ZLINK_DEPS_DIR})
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES ZLINK_DEPS_DIR)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
