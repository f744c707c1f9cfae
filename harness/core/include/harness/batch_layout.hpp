// Where a side's timed batch lives in the device memory the timing server allocates for it: one
// input and one output per repetition, each aligned, and one scratch buffer that the repetitions,
// run one after another, share. The server lays it out (it knows the allocation's granularity),
// the grader passes it on with the allocation's descriptor, and the runner maps it.
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

namespace harness {

struct BatchShape {
    std::int64_t elements = 0;          // input elements of one repetition
    std::int64_t out_elements = 0;      // output elements of one repetition
    std::int64_t scratch_elements = 0;  // 0: the launcher takes no scratch
    bool f64 = false;                   // doubles (reductions), else floats
    int reps = 0;                       // repetitions in a batch
    std::int64_t element_bytes() const { return f64 ? 8 : 4; }
};

struct BatchLayout {
    BatchShape shape;
    std::uint64_t bytes = 0;  // the whole allocation
    struct Rep {
        std::uint64_t in = 0, out = 0;  // byte offsets
    };
    std::vector<Rep> reps;
    std::int64_t scratch = -1;  // byte offset, or -1
};

// Buffers one after another, each starting at a multiple of `alignment` (a power of two).
BatchLayout lay_out(const BatchShape& shape, std::uint64_t alignment);
// Whether every buffer lies inside the allocation and the sizes are sane (a layout read back).
bool fits(const BatchLayout& layout);

nlohmann::json to_json(const BatchShape& shape);
BatchShape shape_from_json(const nlohmann::json& j);  // throws nlohmann::json::exception
nlohmann::json to_json(const BatchLayout& layout);
BatchLayout layout_from_json(const nlohmann::json& j);  // throws nlohmann::json::exception

}  // namespace harness
