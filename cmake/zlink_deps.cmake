# zlink_deps.cmake — finds libuv (and Check for tests) as imported targets:
# on MSVC through the CMake packages vcpkg installs, elsewhere through
# pkg-config where it exists, else find_path/find_library (cross builds
# point CMAKE_PREFIX_PATH at their dependency cache).
find_package(PkgConfig QUIET)

# vcpkg installs CMake packages, not .pc files; their targets also keep the
# debug and release libraries apart. The first of the targets that exists
# becomes ${target}.
function(zlink_find_config_dep target package)
  if(TARGET ${target} OR NOT MSVC)
    return()
  endif()
  find_package(${package} CONFIG QUIET)
  foreach(candidate ${ARGN})
    if(TARGET ${candidate})
      add_library(${target} INTERFACE IMPORTED GLOBAL)
      target_link_libraries(${target} INTERFACE ${candidate})
      return()
    endif()
  endforeach()
endfunction()

function(zlink_find_dep target pcname header libnames)
  if(TARGET ${target})
    return()
  endif()
  if(PKG_CONFIG_FOUND AND NOT CMAKE_CROSSCOMPILING)
    pkg_check_modules(${target}_PC QUIET IMPORTED_TARGET ${pcname})
    if(${target}_PC_FOUND)
      add_library(${target} INTERFACE IMPORTED GLOBAL)
      target_link_libraries(${target} INTERFACE PkgConfig::${target}_PC)
      return()
    endif()
  endif()
  find_path(${target}_INCLUDE ${header})
  find_library(${target}_LIB NAMES ${libnames})
  if(NOT ${target}_INCLUDE OR NOT ${target}_LIB)
    message(FATAL_ERROR "zlink needs ${pcname} (${header}); install it (Debian: see ci/test.sh)")
  endif()
  add_library(${target} INTERFACE IMPORTED GLOBAL)
  target_include_directories(${target} INTERFACE ${${target}_INCLUDE})
  target_link_libraries(${target} INTERFACE ${${target}_LIB})
endfunction()

zlink_find_config_dep(zlink_dep_uv libuv libuv::uv libuv::uv_a uv uv_a)
zlink_find_config_dep(zlink_dep_uv unofficial-libuv unofficial::libuv::libuv)
zlink_find_dep(zlink_dep_uv libuv uv.h "uv;uv_a;libuv;libuv_a")
if(ZLINK_BUILD_TESTS)
  zlink_find_config_dep(zlink_dep_check check Check::check Check::checkShared)
endif()

if(WIN32)
  set(ZLINK_OS_LIBS ws2_32 mswsock iphlpapi userenv)
else()
  find_package(Threads REQUIRED)
  set(ZLINK_OS_LIBS Threads::Threads)
endif()
