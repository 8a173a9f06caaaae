# FindMbedTLS.cmake — mbedTLS (mbedtls, mbedx509, mbedcrypto) as the imported
# target MbedTLS::mbedtls; sets MbedTLS_FOUND and MbedTLS_VERSION. Uses
# mbedTLS's own CMake package where it exists (3.x: vcpkg, Homebrew), else
# the headers and libraries (Debian's 2.28 ships none); cross builds point
# CMAKE_PREFIX_PATH at their dependency cache. zlink builds against 2.28
# and 3.x; 4.x (Homebrew's plain `mbedtls` today) dropped the API zlink
# uses, so it is refused with a message rather than failing to compile.
if(TARGET MbedTLS::mbedtls)
  set(MbedTLS_FOUND TRUE)
  return()
endif()

# Homebrew's mbedtls@3 is keg-only (off the default search paths, beside a
# linked 4.x): look in its opt prefix before the system's.
set(_mbedtls_hints "")
if(APPLE)
  set(_mbedtls_hints /opt/homebrew/opt/mbedtls@3 /usr/local/opt/mbedtls@3)
endif()

function(_zlink_mbedtls_check_major version where)
  if(version VERSION_GREATER_EQUAL 4)
    message(FATAL_ERROR "zlink needs mbedTLS 2.28 or 3.x, found ${version} "
      "(${where}); on macOS: brew install mbedtls@3")
  endif()
endfunction()

find_package(MbedTLS CONFIG QUIET NAMES MbedTLS mbedtls HINTS ${_mbedtls_hints})
if(TARGET MbedTLS::mbedtls)
  _zlink_mbedtls_check_major("${MbedTLS_VERSION}" "${MbedTLS_DIR}")
  set(MbedTLS_FOUND TRUE)
  if(NOT MbedTLS_FIND_QUIETLY)
    message(STATUS "Found MbedTLS ${MbedTLS_VERSION}: ${MbedTLS_DIR}")
  endif()
  unset(_mbedtls_hints)
  return()
endif()

find_path(MbedTLS_INCLUDE_DIR mbedtls/ssl.h HINTS ${_mbedtls_hints}
  PATH_SUFFIXES include)
find_library(MbedTLS_TLS_LIBRARY NAMES mbedtls HINTS ${_mbedtls_hints}
  PATH_SUFFIXES lib)
find_library(MbedTLS_X509_LIBRARY NAMES mbedx509 HINTS ${_mbedtls_hints}
  PATH_SUFFIXES lib)
find_library(MbedTLS_CRYPTO_LIBRARY NAMES mbedcrypto HINTS ${_mbedtls_hints}
  PATH_SUFFIXES lib)
unset(_mbedtls_hints)

# 3.x and 4.x say their version in build_info.h, 2.x in version.h.
foreach(_mbedtls_header build_info.h version.h)
  set(_mbedtls_path ${MbedTLS_INCLUDE_DIR}/mbedtls/${_mbedtls_header})
  if(MbedTLS_INCLUDE_DIR AND NOT MbedTLS_VERSION AND EXISTS ${_mbedtls_path})
    file(STRINGS ${_mbedtls_path} _mbedtls_line
      REGEX "^#define MBEDTLS_VERSION_STRING +\"[0-9.]+\"")
    if(_mbedtls_line)
      string(REGEX REPLACE ".*\"([0-9.]+)\".*" "\\1" MbedTLS_VERSION
        "${_mbedtls_line}")
    endif()
  endif()
endforeach()
unset(_mbedtls_header)
unset(_mbedtls_path)
unset(_mbedtls_line)
if(MbedTLS_VERSION)
  _zlink_mbedtls_check_major("${MbedTLS_VERSION}" "${MbedTLS_INCLUDE_DIR}")
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(MbedTLS REQUIRED_VARS MbedTLS_INCLUDE_DIR
  MbedTLS_TLS_LIBRARY MbedTLS_X509_LIBRARY MbedTLS_CRYPTO_LIBRARY
  VERSION_VAR MbedTLS_VERSION)

if(MbedTLS_FOUND)
  add_library(MbedTLS::mbedtls INTERFACE IMPORTED GLOBAL)
  target_include_directories(MbedTLS::mbedtls INTERFACE ${MbedTLS_INCLUDE_DIR})
  # Order matters for static archives: tls needs x509 needs crypto.
  target_link_libraries(MbedTLS::mbedtls INTERFACE ${MbedTLS_TLS_LIBRARY}
    ${MbedTLS_X509_LIBRARY} ${MbedTLS_CRYPTO_LIBRARY})
  if(WIN32)
    # Entropy (CryptGenRandom / BCrypt) and the system trust store.
    target_link_libraries(MbedTLS::mbedtls INTERFACE bcrypt advapi32 crypt32)
  endif()
endif()
