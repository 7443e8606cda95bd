// `stoker msm`: sum_i s_i P_i over G1 of BLS12-381 from two files.
//
// Points: the 96-byte uncompressed G1 encoding (kernels/g1_encoding.hpp),
// one after another. Scalars: 32-byte little-endian integers below r (the
// `stoker ntt` format). Output: the sum in the point encoding.
//
// Before any arithmetic every input is checked, and the first problem is
// reported with the file and the element's index: a size that is not a
// whole number of elements, counts that differ, a scalar >= r, bad flag
// bits or a coordinate >= q, and (unless --trust-points) a point off the
// curve or outside the order-r subgroup. The points are checked on the GPU
// when one is used, else on every CPU thread. On any error the exit status
// is non-zero and no output file is left (tools/cli/output_file.hpp).
#pragma once

namespace stoker::tools {

// stoker msm --points FILE --scalars FILE --out FILE [--cpu | --device N] [--trust-points]
int msm_command(int argc, char** argv);

}  // namespace stoker::tools
