# Install and export, so another CMake project can find_package(stoker) and
# link stoker::stoker.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(stoker_libraries stoker_options stoker_devices)
foreach(t stoker_alloc stoker_kernels stoker_engine)
  if(TARGET ${t})
    list(APPEND stoker_libraries ${t})
  endif()
endforeach()
add_library(stoker_all INTERFACE)
set_target_properties(stoker_all PROPERTIES EXPORT_NAME stoker)
target_link_libraries(stoker_all INTERFACE ${stoker_libraries})
add_library(stoker::stoker ALIAS stoker_all)
set_target_properties(stoker_options PROPERTIES EXPORT_NAME options)

install(TARGETS ${stoker_libraries} stoker_all EXPORT stokerTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
foreach(dir alloc devices kernels engine)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/ DESTINATION include/stoker/${dir}
    FILES_MATCHING PATTERN "*.hpp" PATTERN "*.cuh")
endforeach()
install(EXPORT stokerTargets NAMESPACE stoker:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/stoker)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/stokerConfig.cmake.in
  ${PROJECT_BINARY_DIR}/stokerConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/stoker)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/stokerConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/stokerConfig.cmake ${PROJECT_BINARY_DIR}/stokerConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/stoker)
if(TARGET stoker)
  install(TARGETS stoker RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
