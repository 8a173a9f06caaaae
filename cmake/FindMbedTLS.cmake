# FindMbedTLS.cmake — mbedTLS (mbedtls, mbedx509, mbedcrypto) as the imported
# target MbedTLS::mbedtls. Uses mbedTLS's own CMake package where it exists
# (3.x, vcpkg), else the headers and libraries (Debian's 2.28 ships none);
# cross builds point CMAKE_PREFIX_PATH at their dependency cache.
if(TARGET MbedTLS::mbedtls)
  set(MbedTLS_FOUND TRUE)
  return()
endif()

find_package(MbedTLS CONFIG QUIET NAMES MbedTLS mbedtls)
if(TARGET MbedTLS::mbedtls)
  set(MbedTLS_FOUND TRUE)
  return()
endif()

find_path(MbedTLS_INCLUDE_DIR mbedtls/ssl.h)
find_library(MbedTLS_TLS_LIBRARY NAMES mbedtls)
find_library(MbedTLS_X509_LIBRARY NAMES mbedx509)
find_library(MbedTLS_CRYPTO_LIBRARY NAMES mbedcrypto)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(MbedTLS REQUIRED_VARS MbedTLS_INCLUDE_DIR
  MbedTLS_TLS_LIBRARY MbedTLS_X509_LIBRARY MbedTLS_CRYPTO_LIBRARY)

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
