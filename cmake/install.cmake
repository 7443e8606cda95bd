# Install and export, so another CMake project can find_package(stoker) and
# link stoker::stoker (or one part: stoker::common, stoker::devices, stoker::alloc,
# stoker::kernels, stoker::engine, stoker::groth16). test/package is such a project;
# `tools/dev test` installs into a prefix under the build folder and builds
# and runs it there.
#
# Headers go to include/stoker/<folder>/, and consumers write
# #include <stoker/engine/engine.hpp>. The headers themselves include each
# other by folder ("engine/job.hpp", "devices/device.hpp"), as the sources
# do in the build tree, so the installed include path also holds
# include/stoker. Why not <stoker/...> inside the headers too: every source
# file of every layer would change its includes, and the build tree would
# need a stoker/ folder of links to itself. The cost of not doing it: a
# consumer that has an engine/, devices/, alloc/, kernels/ or common/ folder of its
# own on its include path ahead of ours may shadow one of our headers.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(stoker_libraries stoker_options stoker_common stoker_devices)
foreach(t stoker_alloc stoker_kernels stoker_engine stoker_groth16)
  if(TARGET ${t})
    list(APPEND stoker_libraries ${t})
  endif()
endforeach()
# One naming rule: stoker::<layer>, stoker::options, stoker::stoker.
foreach(t ${stoker_libraries})
  string(REGEX REPLACE "^stoker_" "" short ${t})
  set_target_properties(${t} PROPERTIES EXPORT_NAME ${short})
endforeach()
add_library(stoker_all INTERFACE)
set_target_properties(stoker_all PROPERTIES EXPORT_NAME stoker)
target_link_libraries(stoker_all INTERFACE ${stoker_libraries})
# C++20 is what the headers are written in; a consumer that sets no
# standard gets it from the target rather than failing inside job.hpp.
target_compile_features(stoker_all INTERFACE cxx_std_20)
add_library(stoker::stoker ALIAS stoker_all)

install(TARGETS ${stoker_libraries} stoker_all EXPORT stokerTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
foreach(dir common alloc devices kernels engine)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/ DESTINATION include/stoker/${dir}
    FILES_MATCHING PATTERN "*.hpp" PATTERN "*.cuh")
endforeach()
install(EXPORT stokerTargets NAMESPACE stoker:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/stoker)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/stokerConfig.cmake.in
  ${PROJECT_BINARY_DIR}/stokerConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/stoker)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/stokerConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/stokerConfig.cmake ${PROJECT_BINARY_DIR}/stokerConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/stokerNccl.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/stoker)
if(TARGET stoker)
  install(TARGETS stoker RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
