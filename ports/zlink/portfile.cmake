# portfile.cmake — builds zlink for vcpkg. ci/vcpkg-stage.sh runs the same
# configure and install (keep its ZLINK_PORT_OPTIONS in step with the
# options below), since vcpkg itself does not run in zlink's CI.

# From a zlink checkout (vcpkg install zlink --overlay-ports=<checkout>/ports)
# the port builds that checkout; in a registry it downloads the release.
if(EXISTS "${CMAKE_CURRENT_LIST_DIR}/../../include/zlink.h")
    get_filename_component(SOURCE_PATH "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
else()
    # Filled in when a release is published: its repository and the
    # SHA512 of the v${VERSION} source archive.
    set(ZLINK_GITHUB_REPO "")
    set(ZLINK_RELEASE_SHA512 "")
    if(NOT ZLINK_GITHUB_REPO)
        message(FATAL_ERROR "zlink ${VERSION} is not published yet: install "
            "it from a checkout with --overlay-ports=<checkout>/ports")
    endif()
    vcpkg_from_github(
        OUT_SOURCE_PATH SOURCE_PATH
        REPO "${ZLINK_GITHUB_REPO}"
        REF "v${VERSION}"
        SHA512 "${ZLINK_RELEASE_SHA512}"
        HEAD_REF main
    )
endif()

vcpkg_check_features(OUT_FEATURE_OPTIONS FEATURE_OPTIONS
    FEATURES
        curve ZLINK_WITH_CURVE
        tls   ZLINK_WITH_TLS
        ws    ZLINK_WITH_WS
)

string(COMPARE EQUAL "${VCPKG_LIBRARY_LINKAGE}" "dynamic" ZLINK_SHARED)

# Tests, examples, benches and fuzzers are zlink's own: the port builds the
# library only, so Check and libzmq are not needed.
vcpkg_cmake_configure(
    SOURCE_PATH "${SOURCE_PATH}"
    OPTIONS
        ${FEATURE_OPTIONS}
        -DBUILD_SHARED_LIBS=${ZLINK_SHARED}
        -DZLINK_BUILD_TESTS=OFF
        -DZLINK_BUILD_EXAMPLES=OFF
        -DZLINK_BUILD_BENCH=OFF
        -DZLINK_BUILD_FUZZ=OFF
)
vcpkg_cmake_install()
vcpkg_copy_pdbs()
vcpkg_cmake_config_fixup(CONFIG_PATH "lib/cmake/zlink")
vcpkg_fixup_pkgconfig()

file(REMOVE_RECURSE
    "${CURRENT_PACKAGES_DIR}/debug/include"
    "${CURRENT_PACKAGES_DIR}/debug/share"
    # LICENSE goes to share/zlink/copyright below.
    "${CURRENT_PACKAGES_DIR}/share/doc"
)

file(INSTALL "${CMAKE_CURRENT_LIST_DIR}/usage" DESTINATION "${CURRENT_PACKAGES_DIR}/share/${PORT}")
vcpkg_install_copyright(FILE_LIST "${SOURCE_PATH}/LICENSE")
