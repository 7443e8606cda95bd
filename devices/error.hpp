// The errors (Errc, Error, Result, the stoker and cuda categories) under
// the name that users of the installed package include,
// <stoker/devices/error.hpp>. They live in common/error.hpp, the base layer
// under devices/; code in this repository includes that header.
#pragma once

#include "common/error.hpp"
