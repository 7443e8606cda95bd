#pragma once
namespace stoker::tools {
// stoker run: the main job through the engine (see --help).
int run_command(int argc, char** argv);
}  // namespace stoker::tools
