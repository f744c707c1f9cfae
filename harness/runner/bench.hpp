// `grader_reference_runner --bench`: the hidden references beside their ceilings on this GPU, the
// measurement behind `grade bench` (grading/bench.hpp), which turns it into the table instructors
// show. For each exercise and size it times
//   - the reference's launcher (reference/<exercise>.cu),
//   - CUB's version of the operation where CUB has one: cub::DeviceScan::InclusiveSum of the whole
//     array for the three scans, cub::DeviceReduce::Sum for the five reductions (none for the
//     convolutions),
//   - cudaMemcpyAsync of the input's bytes, device to device: the copy ceiling,
// each with CUDA events, warm-up calls first, the L2 flushed and the output poisoned before every
// call, and reports the median. Before timing, the reference's output is checked once against CUB
// (scans, reductions) or a direct convolution, on integer-valued data where every correct order of
// additions gives the same bits: a broken reference stops the bench instead of making a table.
//
//   grader_reference_runner --bench [--sizes N[,N...]] [--reps R] [--exercise A[,B...]]
//
// Sizes are elements (conv2d: a square image of at least that many pixels); default 10000000 and
// 2^26, 30 repetitions, all ten exercises. The JSON goes to stdout as the last line (grade bench
// reads that line): {"device": {...calibration.hpp's, "name" for "device"}, "reps", "warmups",
// "rows": [one per exercise and size, see measure_row in bench.cu]}. Exit code 0; 2 for a usage
// error, 1 for any other failure (a CUDA error, a reference whose output is wrong), with the reason
// on stderr and no JSON.
//
// Only the reference runner links this (grader_bench in CMakeLists.txt): a submission's runner,
// lib/grader_runner.o, has neither --bench nor any CUB code.
#pragma once

namespace harness::runner {

// argv[0] is "--bench"; the options follow.
int bench_main(int argc, char** argv);

}  // namespace harness::runner
