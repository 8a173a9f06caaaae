# mingw-w64-x86_64-clang.cmake — the Windows cross build of
# mingw-w64-x86_64.cmake with clang instead of gcc, and atomics.h's MSVC
# half (ZL_ATOMICS_INTERLOCKED, MS intrinsics from -fms-extensions) instead
# of <stdatomic.h>: no MSVC runs here, so this is how its atomics are built
# and run (ci/test.sh's pedantic and interlocked stages).
include(${CMAKE_CURRENT_LIST_DIR}/mingw-w64-x86_64.cmake)

set(CMAKE_C_COMPILER clang)
set(CMAKE_C_COMPILER_TARGET ${ZLINK_MINGW_TRIPLE})
string(APPEND CMAKE_C_FLAGS_INIT
  " -fms-extensions -DZL_ATOMICS_INTERLOCKED -Wno-unused-command-line-argument")
# clang does not find Debian's mingw libgcc (in a directory named 12-win32
# or 12-posix): ask the gcc that owns it.
execute_process(COMMAND ${ZLINK_MINGW_TRIPLE}-gcc -print-libgcc-file-name
  OUTPUT_VARIABLE ZLINK_MINGW_LIBGCC OUTPUT_STRIP_TRAILING_WHITESPACE)
get_filename_component(ZLINK_MINGW_LIBGCC_DIR "${ZLINK_MINGW_LIBGCC}" DIRECTORY)
foreach(kind EXE SHARED MODULE)
  set(CMAKE_${kind}_LINKER_FLAGS_INIT "-L${ZLINK_MINGW_LIBGCC_DIR}")
endforeach()
