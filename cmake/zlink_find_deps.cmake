# zlink_find_deps.cmake — the dependency finders shared by zlink's build and
# its installed zlinkConfig.cmake (a static zlink's users must find libuv
# the way zlink did): CMake packages under MSVC and vcpkg, elsewhere
# pkg-config where it exists, else find_path/find_library (cross builds
# point CMAKE_PREFIX_PATH at their dependency cache).
find_package(PkgConfig QUIET)

# vcpkg installs CMake packages, which keep the debug and release libraries
# apart. The first of the targets that exists becomes ${target}.
function(zlink_find_config_dep target package)
  if(TARGET ${target} OR NOT (MSVC OR VCPKG_TOOLCHAIN))
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

# Stops the configure when nothing is found, unless ZLINK_FIND_DEPS_SOFT
# is set (zlinkConfig.cmake reports a missing dependency as not found).
function(zlink_find_dep target pcname header libnames)
  if(TARGET ${target})
    return()
  endif()
  if(PKG_CONFIG_FOUND AND NOT CMAKE_CROSSCOMPILING)
    pkg_check_modules(${target}_PC QUIET GLOBAL IMPORTED_TARGET ${pcname})
    if(${target}_PC_FOUND)
      add_library(${target} INTERFACE IMPORTED GLOBAL)
      target_link_libraries(${target} INTERFACE PkgConfig::${target}_PC)
      return()
    endif()
  endif()
  find_path(${target}_INCLUDE ${header})
  find_library(${target}_LIB NAMES ${libnames})
  if(NOT ${target}_INCLUDE OR NOT ${target}_LIB)
    if(ZLINK_FIND_DEPS_SOFT)
      return()
    endif()
    message(FATAL_ERROR "zlink needs ${pcname} (${header}); install it (Debian: see ci/test.sh)")
  endif()
  add_library(${target} INTERFACE IMPORTED GLOBAL)
  target_include_directories(${target} INTERFACE ${${target}_INCLUDE})
  target_link_libraries(${target} INTERFACE ${${target}_LIB})
endfunction()

zlink_find_config_dep(zlink_dep_uv libuv libuv::uv libuv::uv_a uv uv_a)
zlink_find_config_dep(zlink_dep_uv unofficial-libuv unofficial::libuv::libuv)
zlink_find_dep(zlink_dep_uv libuv uv.h "uv;uv_a;libuv;libuv_a")
