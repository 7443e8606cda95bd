// `stoker serve`: one daemon per node that owns every device through one
// engine and proves for every client (tools/serve/, docs/SERVE.md).
#pragma once

namespace stoker::tools {

int serve_command(int argc, char** argv);

}  // namespace stoker::tools
