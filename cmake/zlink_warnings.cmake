# zlink_warnings.cmake — the warning set every zlink target builds with.
function(zlink_set_warnings target)
  if(CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -Wall -Wextra -Werror
      -Wno-unused-parameter -Wno-missing-field-initializers)
  elseif(MSVC)
    # The GCC set has no -Wconversion: MSVC's narrowing (C4244, C4267) and
    # unsigned negation (C4146) warnings are off to match.
    target_compile_options(${target} PRIVATE /W3 /WX /wd4996 /wd4244 /wd4267
      /wd4146)
  endif()
endfunction()
