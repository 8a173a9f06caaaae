# FindWslay.cmake — finds wslay (WebSocket framing for ws:// and wss://) as
# the imported target Wslay::Wslay; sets Wslay_FOUND and Wslay_VERSION.
#
# Linux: Debian's libwslay-dev (/usr/include/wslay, libwslay.so). Windows
# cross build: the static libwslay.a that ci/windows-deps.sh builds into the
# dependency cache, which the mingw toolchain file puts on the find root.
# A plain header and library search serves both; Debian's wslay-config.cmake
# is not used, as the cross build has none.
find_path(Wslay_INCLUDE_DIR wslay/wslay.h)
find_library(Wslay_LIBRARY NAMES wslay libwslay)

if(Wslay_INCLUDE_DIR AND EXISTS ${Wslay_INCLUDE_DIR}/wslay/wslayver.h)
  file(STRINGS ${Wslay_INCLUDE_DIR}/wslay/wslayver.h _wslay_version_line
       REGEX "^#define WSLAY_VERSION \"[^\"]*\"")
  string(REGEX REPLACE "^#define WSLAY_VERSION \"([^\"]*)\".*" "\\1"
         Wslay_VERSION "${_wslay_version_line}")
  unset(_wslay_version_line)
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Wslay
  REQUIRED_VARS Wslay_LIBRARY Wslay_INCLUDE_DIR
  VERSION_VAR Wslay_VERSION)
mark_as_advanced(Wslay_INCLUDE_DIR Wslay_LIBRARY)

if(Wslay_FOUND AND NOT TARGET Wslay::Wslay)
  add_library(Wslay::Wslay UNKNOWN IMPORTED)
  set_target_properties(Wslay::Wslay PROPERTIES
    IMPORTED_LOCATION ${Wslay_LIBRARY}
    INTERFACE_INCLUDE_DIRECTORIES ${Wslay_INCLUDE_DIR})
  # A static wslay on Windows calls htons & co. from winsock.
  if(WIN32)
    set_property(TARGET Wslay::Wslay APPEND PROPERTY
      INTERFACE_LINK_LIBRARIES ws2_32)
  endif()
endif()
