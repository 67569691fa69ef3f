# The installed package (docs/install.md): libbraid (a static archive always;
# with BUILD_SHARED_LIBS also a shared library exporting include/braid/ only),
# the headers, the `braid` CLI, the CUDA plugin when built, the profiles,
# braidConfig.cmake (find_package(braid 0.2) -> braid::braid) and braid.pc.
# The internal libraries (braid_graph, ...) stay what the tree's own targets
# link; libbraid is made of their objects, so it costs an archive step and,
# when shared, one link.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# A CUDA backend linked into braid_kernels (BRAID_CUDA_PLUGIN=OFF, what
# scripts/test.sh builds) would add its object library and the NVIDIA
# libraries to libbraid's link; the installed package ships the plugin only.
if(BRAID_HAVE_CUDA AND NOT BRAID_CUDA_PLUGIN)
  message(STATUS "braid: no libbraid / install rules with BRAID_CUDA_PLUGIN=OFF "
                 "(the package ships the CUDA backend as the plugin)")
  return()
endif()

set(BRAID_LIBRARY_OBJECTS
    $<TARGET_OBJECTS:braid_api> $<TARGET_OBJECTS:braid_runtime> $<TARGET_OBJECTS:braid_scheduler>
    $<TARGET_OBJECTS:braid_kernels> $<TARGET_OBJECTS:braid_models>
    $<TARGET_OBJECTS:braid_graph>)
# What the internal libraries link from outside braid (their CMakeLists);
# Eigen is header-only and the FlatBuffers code generated, both compile-time.
# kernels/ and runtime/ found these in their own scope.
find_package(OpenMP REQUIRED)
find_package(dnnl REQUIRED)
set(BRAID_LIBRARY_DEPS Threads::Threads OpenMP::OpenMP_CXX DNNL::dnnl onnx_proto
    protobuf::libprotobuf flatbuffers::flatbuffers ${CMAKE_DL_LIBS})
set(BRAID_PUBLIC_INCLUDE $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)

# libbraid.a: one archive for users to link; its dependencies are theirs to
# link too (braidConfig.cmake finds them, braid.pc lists them in Libs.private).
add_library(braid_static STATIC ${BRAID_LIBRARY_OBJECTS})
target_link_libraries(braid_static PRIVATE ${BRAID_LIBRARY_DEPS})
target_include_directories(braid_static INTERFACE ${BRAID_PUBLIC_INCLUDE})
target_compile_features(braid_static INTERFACE cxx_std_20)
set_target_properties(braid_static PROPERTIES OUTPUT_NAME braid LINKER_LANGUAGE CXX
                      ARCHIVE_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/lib)
set(BRAID_PACKAGE_TARGETS braid_static)

if(BUILD_SHARED_LIBS)
  # libbraid.so.0.2: before 1.0 a minor version may break the ABI, so the
  # SONAME carries major.minor. The version script exports include/braid/'s
  # API only; --exclude-libs hides what static archives bring (FlatBuffers).
  add_library(braid_shared SHARED ${BRAID_LIBRARY_OBJECTS})
  target_link_libraries(braid_shared PRIVATE ${BRAID_LIBRARY_DEPS})
  target_include_directories(braid_shared INTERFACE ${BRAID_PUBLIC_INCLUDE})
  target_compile_features(braid_shared INTERFACE cxx_std_20)
  target_link_options(braid_shared PRIVATE
    -Wl,--version-script=${CMAKE_CURRENT_LIST_DIR}/libbraid.map
    -Wl,--exclude-libs,ALL -Wl,--no-undefined)
  set_target_properties(braid_shared PROPERTIES
    OUTPUT_NAME braid EXPORT_NAME braid LINKER_LANGUAGE CXX
    VERSION ${PROJECT_VERSION}
    SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}
    LINK_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/libbraid.map
    LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/lib)
  list(APPEND BRAID_PACKAGE_TARGETS braid_shared)
else()
  set_target_properties(braid_static PROPERTIES EXPORT_NAME braid)
endif()

install(TARGETS ${BRAID_PACKAGE_TARGETS} EXPORT braidTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
# The CLI as braid::cli too, e.g. to convert models while building.
set_target_properties(braid PROPERTIES EXPORT_NAME cli)
install(TARGETS braid EXPORT braidTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/braid
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")

set(BRAID_CONFIG_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/braid)
install(EXPORT braidTargets NAMESPACE braid:: DESTINATION ${BRAID_CONFIG_DIR})
# Filled into braidConfig.cmake: what this build installs.
if(TARGET braid_cuda)
  set(BRAID_PACKAGE_CUDA TRUE)
else()
  set(BRAID_PACKAGE_CUDA FALSE)
endif()
if(BUILD_SHARED_LIBS)
  set(BRAID_PACKAGE_SHARED TRUE)
else()
  set(BRAID_PACKAGE_SHARED FALSE)
endif()
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/braidConfig.cmake.in
  ${PROJECT_BINARY_DIR}/package/braidConfig.cmake INSTALL_DESTINATION ${BRAID_CONFIG_DIR}
  PATH_VARS CMAKE_INSTALL_LIBDIR)
# Before 1.0 only the same minor version is compatible (the SONAME's rule).
write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/braidConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/package/braidConfig.cmake
        ${PROJECT_BINARY_DIR}/package/braidConfigVersion.cmake DESTINATION ${BRAID_CONFIG_DIR})

# braid.pc: Libs.private is what a static link (`pkg-config --static`) adds.
set(BRAID_PC_LIBS_PRIVATE "-ldnnl -lonnx_proto -lprotobuf -lflatbuffers")
foreach(_lib IN LISTS OpenMP_CXX_LIB_NAMES)
  string(APPEND BRAID_PC_LIBS_PRIVATE " -l${_lib}")
endforeach()
foreach(_lib IN LISTS CMAKE_DL_LIBS)
  string(APPEND BRAID_PC_LIBS_PRIVATE " -l${_lib}")
endforeach()
string(APPEND BRAID_PC_LIBS_PRIVATE " -lstdc++ -lm")
# Paths relative to the .pc file, like braidConfig.cmake's: a prefix installed
# elsewhere (cmake --install --prefix DIR, a copied tree) still works.
set(_pc_dir ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig)
file(RELATIVE_PATH BRAID_PC_PREFIX ${_pc_dir} ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" BRAID_PC_PREFIX "${BRAID_PC_PREFIX}")
file(RELATIVE_PATH BRAID_PC_LIBDIR ${CMAKE_INSTALL_PREFIX} ${CMAKE_INSTALL_FULL_LIBDIR})
file(RELATIVE_PATH BRAID_PC_INCLUDEDIR ${CMAKE_INSTALL_PREFIX} ${CMAKE_INSTALL_FULL_INCLUDEDIR})
configure_file(${CMAKE_CURRENT_LIST_DIR}/braid.pc.in ${PROJECT_BINARY_DIR}/package/braid.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/package/braid.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
