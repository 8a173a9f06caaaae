# zlink_deps.cmake — finds libuv (and Check for tests) as imported targets,
# with the finders of zlink_find_deps.cmake, and the OS libraries.
include(${CMAKE_CURRENT_LIST_DIR}/zlink_find_deps.cmake)
if(ZLINK_BUILD_TESTS)
  zlink_find_config_dep(zlink_dep_check check Check::check Check::checkShared)
endif()

if(WIN32)
  set(ZLINK_OS_LIBS ws2_32 mswsock iphlpapi userenv)
else()
  find_package(Threads REQUIRED)
  set(ZLINK_OS_LIBS Threads::Threads)
endif()
