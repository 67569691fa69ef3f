# braid_target_warnings(target): -Wall -Wextra -Werror on braid's own code only
# (generated FlatBuffers / protobuf headers are included as SYSTEM).
function(braid_target_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Werror -Wno-missing-field-initializers>)
endfunction()
