# zlink_warnings.cmake — the warning set every zlink target builds with.
function(zlink_set_warnings target)
  if(CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -Wall -Wextra -Werror
      -Wno-unused-parameter -Wno-missing-field-initializers)
  elseif(MSVC)
    target_compile_options(${target} PRIVATE /W3 /WX /wd4996)
  endif()
endfunction()
