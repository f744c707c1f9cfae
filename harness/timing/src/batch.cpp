#include "harness/timing/batch.hpp"

#include <unistd.h>

#include <chrono>
#include <random>
#include <thread>

#include "harness/family.hpp"

namespace harness::timing {
namespace {

// The bytes over the host link while `work` runs; nullopt where the link is not counted.
template <typename Work>
std::optional<std::uint64_t> link_bytes_over(const HostLinkBytes& host_link, Work&& work)
{
    const std::optional<std::uint64_t> before = host_link ? host_link() : std::nullopt;
    work();
    const std::optional<std::uint64_t> after = host_link ? host_link() : std::nullopt;
    if (before && after && *after >= *before) return *after - *before;
    return std::nullopt;
}

double ms_since(std::chrono::steady_clock::time_point started)
{
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
}

}  // namespace

BatchSpec batch_spec(const Exercise& exercise, const Case& c, int reps)
{
    const ExerciseFamily& family = family_of(exercise);
    BatchSpec spec;
    spec.shape.elements = c.n;
    spec.shape.out_elements = family.output_elements(c);
    spec.shape.scratch_elements = family.uses_scratch() ? c.n + 4096 : 0;
    spec.shape.f64 = family.element_type() == ElementType::f64;
    spec.shape.reps = reps;
    spec.args = {{"shape", family.shape_json(c)}, {"mask", family.mask(c)}};
    spec.values = family.timed_values();
    return spec;
}

std::uint64_t draw_seed()
{
    static thread_local std::random_device random;
    return (static_cast<std::uint64_t>(random()) << 32) ^ random();
}

Batches::~Batches()
{
    for (auto& [side, worker] : sides_) {
        try {
            worker->unmap();
        } catch (...) {  // a runner that failed or broke its protocol: its supervisor deals with it
        }
        try {
            server_.free(side);
        } catch (...) {
        }
    }
}

void Batches::add(const std::string& side, TimedWorker& worker)
{
    const TimingServer::Allocation allocation = server_.allocate(side, spec_.shape);
    struct Close {
        int fd;
        ~Close() { ::close(fd); }
    } close_descriptor{allocation.descriptor};
    sides_.emplace_back(side, &worker);
    worker.map(allocation.descriptor, allocation.layout, spec_.args);
}

Window Batches::run(const std::string& side, std::uint64_t seed, bool launch, bool warmup)
{
    TimedWorker* worker = nullptr;
    for (auto& [name, w] : sides_)
        if (name == side) worker = w;
    if (worker == nullptr) throw std::logic_error("no such side of the timing: " + side);
    Window window;
    window.seed = seed;
    window.launched = launch;
    window.warmup = warmup;
    std::chrono::steady_clock::time_point started;
    Checksummed read;
    window.host_link_bytes = link_bytes_over(host_link_, [&] {
        started = std::chrono::steady_clock::now();
        server_.generate(side, seed, spec_.values);
        worker->run_batch(launch);
        read = server_.checksum(side);
    });
    window.grader_ms = ms_since(started);
    window.window_ms = read.window_ms;
    window.generate_gpu_ms = read.generate_gpu_ms;
    window.checksum_gpu_ms = read.checksum_gpu_ms;
    window.checksums = read.checksums;
    if (window.checksums.size() != static_cast<std::size_t>(spec_.shape.reps) || window.window_ms > window.grader_ms)
        throw TimingServerFailure("the grader's timing server reported a batch it cannot have timed");
    return window;
}

Window Batches::idle(double ms)
{
    Window window;
    window.launched = false;
    const auto started = std::chrono::steady_clock::now();
    window.host_link_bytes = link_bytes_over(host_link_, [&] {
        std::this_thread::sleep_until(started + std::chrono::duration<double, std::milli>(ms));
    });
    window.grader_ms = window.window_ms = ms_since(started);
    return window;
}

}  // namespace harness::timing
