# Resolves BRAID_CUDA=AUTO|ON|OFF into BRAID_HAVE_CUDA.
# AUTO turns the CUDA backend on when nvcc, cuDNN and cuBLAS are found; ON
# fails the configure step when one is missing; OFF never looks.
set(BRAID_HAVE_CUDA OFF)
string(TOUPPER "${BRAID_CUDA}" _braid_cuda)
if(NOT _braid_cuda STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  find_package(CUDAToolkit QUIET)
  find_path(BRAID_CUDNN_INCLUDE_DIR cudnn.h
            HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include /usr/include)
  find_library(BRAID_CUDNN_LIBRARY cudnn
               HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64 /usr/lib/x86_64-linux-gnu
                     /usr/lib/aarch64-linux-gnu)
  if(CMAKE_CUDA_COMPILER AND CUDAToolkit_FOUND AND TARGET CUDA::cublas
     AND BRAID_CUDNN_INCLUDE_DIR AND BRAID_CUDNN_LIBRARY)
    set(BRAID_HAVE_CUDA ON)
  elseif(_braid_cuda STREQUAL "ON")
    message(FATAL_ERROR "BRAID_CUDA=ON but nvcc, cuBLAS or cuDNN was not found "
                        "(nvcc='${CMAKE_CUDA_COMPILER}', cudnn='${BRAID_CUDNN_LIBRARY}')")
  endif()
endif()
if(BRAID_HAVE_CUDA)
  # Jetson Orin is sm_87; add desktop targets with -DCMAKE_CUDA_ARCHITECTURES="87;89".
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 87)
  endif()
  enable_language(CUDA)
endif()

# braid_cuda_host_only_options(): call inside a directory that builds CUDA
# sources. Compile options inherited from parent directories (the
# BRAID_SANITIZE -fsanitize flags, ...) are GCC flags that nvcc rejects, so
# they are rewrapped to apply to C and C++ sources only. Device code is not
# sanitized (use compute-sanitizer: tests/cuda/run_gpu_checks.sh).
function(braid_cuda_host_only_options)
  get_directory_property(_inherited COMPILE_OPTIONS)
  set(_wrapped)
  foreach(_opt IN LISTS _inherited)
    if(_opt MATCHES "^\\$<")
      list(APPEND _wrapped "${_opt}")
    else()
      list(APPEND _wrapped "$<$<COMPILE_LANGUAGE:C,CXX>:${_opt}>")
    endif()
  endforeach()
  set_directory_properties(PROPERTIES COMPILE_OPTIONS "${_wrapped}")
endfunction()
