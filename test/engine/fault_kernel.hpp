// Test helper: a kernel that faults (illegal address), leaving its device in
// a sticky error state, as a buggy kernel would.
#pragma once

#include <system_error>

#include "common/error.hpp"

namespace stoker::test {
std::error_code launch_faulting_kernel(void* cuda_stream);
}
