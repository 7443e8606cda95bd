// `stoker msm`: sum_i s_i P_i over G1 or G2 of BLS12-381 from two files.
//
// Points: the uncompressed encoding of their group (--group g1, the
// default: 96 bytes, kernels/g1_encoding.hpp; --group g2: 192 bytes,
// kernels/g2_encoding.hpp), one after another. Scalars: 32-byte
// little-endian integers below r (the `stoker ntt` format). Output: the sum
// in the points' encoding.
//
// Before any arithmetic every input is checked, and the first problem is
// reported with the file and the element's index: a size that is not a
// whole number of elements, counts that differ, a scalar >= r, bad flag
// bits or a coordinate >= q, and (unless --trust-points) a point off the
// curve or outside the order-r subgroup. A G2 point off E' is refused even
// with --trust-points: decoding it checks the curve. G1 points are checked
// on the GPU when one is used; G2 points, which the kernels cannot check on
// a GPU, on every CPU thread, before they are uploaded. On any error the
// exit status is non-zero and no output file is left
// (tools/cli/output_file.hpp). Both groups run the same code, a template
// over the point type.
#pragma once

namespace stoker::tools {

// stoker msm --points FILE --scalars FILE --out FILE [--group g1|g2]
//            [--cpu | --device N] [--trust-points]
int msm_command(int argc, char** argv);

}  // namespace stoker::tools
