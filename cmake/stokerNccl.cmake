# NCCL, which ships with the CUDA Toolkit (nccl.h, libnccl.so) but has no
# imported target of CMake's own: NCCL::nccl, defined once. The build uses
# it, and stokerConfig.cmake includes this file too, because the static
# stoker::devices carries NCCL to whatever links it. Call after
# find_package(CUDAToolkit): its folders are the hints.
if(NOT TARGET NCCL::nccl)
  find_path(STOKER_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  find_library(STOKER_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR})
  if(NOT STOKER_NCCL_INCLUDE_DIR OR NOT STOKER_NCCL_LIBRARY)
    message(FATAL_ERROR "NCCL not found beside the CUDA Toolkit in ${CUDAToolkit_LIBRARY_DIR} "
                        "(nccl.h: ${STOKER_NCCL_INCLUDE_DIR}, libnccl: ${STOKER_NCCL_LIBRARY}); "
                        "set STOKER_NCCL_INCLUDE_DIR and STOKER_NCCL_LIBRARY")
  endif()
  add_library(NCCL::nccl UNKNOWN IMPORTED)
  set_target_properties(NCCL::nccl PROPERTIES
    IMPORTED_LOCATION "${STOKER_NCCL_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${STOKER_NCCL_INCLUDE_DIR}")
endif()
