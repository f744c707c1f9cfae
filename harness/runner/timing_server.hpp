// The grader's timing server: the reference runner started as `--timing-server`, by the grader,
// outside any sandbox and never linked with submitted code. It owns the device memory of every
// timed batch and is the only process that writes a batch's inputs or reads its outputs:
//
//   allocate_timing {set, shape}  one side's buffers (harness/batch_layout.hpp), exported as a
//                                 descriptor on the handles socket; answers timing_allocated {layout}
//   generate {set, seed, values}  the clock starts; every repetition's input written from the seed
//                                 (harness/timed_data.hpp), the L2 flushed; answers generated
//   checksum {set}                the L2 flushed, every output checksummed on the GPU; the clock
//                                 stops; answers checksummed {checksums, window_ms, gpu_ms}
//   free_timing {set}, calibrate {}, quit {}
//
// Between generate and checksum the grader tells the side's runner to run the batch; whatever that
// runner does on the GPU, on any stream, has to fit between the two, since its inputs do not exist
// before the first and its outputs are read by the second. The window is this process's clock.
#pragma once

namespace harness::runner {

// The server's command loop on the grader's pipes (harness/channel.hpp). Returns the exit code.
int timing_server_main();

}  // namespace harness::runner
