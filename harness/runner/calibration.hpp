// What the grader records about the GPU it grades on, measured by the reference runner (the
// grader's own program, never a submission's): the device's identity and the device-to-device copy
// bandwidth, which is the ceiling no honest timing of these memory-bound exercises can beat.
#pragma once

#include <nlohmann/json.hpp>

namespace harness::runner {

nlohmann::json calibrate_device();

}  // namespace harness::runner
