#pragma once
namespace stoker::tools {
// stoker bench pipeline: the naive baseline from the field against the engine.
int bench_pipeline_command(int argc, char** argv);
}  // namespace stoker::tools
