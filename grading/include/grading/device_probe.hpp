// The GPU as the CUDA runtime sees it, for grade's preflight (preflight.hpp). Only `grade` links
// this, with the CUDA runtime; everything else takes a DeviceProbe, so that the tests can pose as
// any machine.
#pragma once

#include "grading/preflight.hpp"

namespace grading {

// Device 0 (the runners' device, after CUDA_VISIBLE_DEVICES), queried without creating a context:
// no GPU memory is taken and nothing is left running on the device.
DeviceState probe_cuda_device();

}  // namespace grading
