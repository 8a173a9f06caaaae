# FindWslay.cmake — finds wslay (WebSocket framing, for ws:// and wss://)
# as the imported target Wslay::Wslay: through pkg-config where it exists,
# else find_path/find_library (cross builds point CMAKE_PREFIX_PATH at their
# dependency cache). Sets Wslay_FOUND.
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND AND NOT CMAKE_CROSSCOMPILING)
  pkg_check_modules(Wslay_PC QUIET libwslay)
endif()
find_path(Wslay_INCLUDE_DIR wslay/wslay.h HINTS ${Wslay_PC_INCLUDE_DIRS})
find_library(Wslay_LIBRARY NAMES wslay libwslay HINTS ${Wslay_PC_LIBRARY_DIRS})
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Wslay
  REQUIRED_VARS Wslay_LIBRARY Wslay_INCLUDE_DIR)
if(Wslay_FOUND AND NOT TARGET Wslay::Wslay)
  add_library(Wslay::Wslay UNKNOWN IMPORTED)
  set_target_properties(Wslay::Wslay PROPERTIES
    IMPORTED_LOCATION "${Wslay_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${Wslay_INCLUDE_DIR}")
endif()
mark_as_advanced(Wslay_INCLUDE_DIR Wslay_LIBRARY)
