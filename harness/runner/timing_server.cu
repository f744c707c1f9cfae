#include "timing_server.hpp"

#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "calibration.hpp"
#include "guarded_buffer.hpp"
#include "harness/batch_layout.hpp"
#include "harness/cases.hpp"
#include "harness/channel.hpp"
#include "harness/cuda_check.hpp"
#include "harness/timed_data.hpp"
#include "shareable_memory.hpp"

namespace harness::runner {
namespace {

using Clock = std::chrono::steady_clock;

// input[i] = timed_value(seed, rep, i): one element a thread, grid-stride.
template <typename T>
__global__ void write_timed_input(T* input, std::size_t n, std::uint64_t seed, std::uint32_t rep, TimedValues values)
{
    const std::uint64_t stream = timed_stream(seed, rep);
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
         i += std::size_t(gridDim.x) * blockDim.x)
        input[i] = static_cast<T>(timed_value_of_stream(stream, i, values));
}

// Milliseconds between two events already passed.
float elapsed_ms(cudaEvent_t from, cudaEvent_t to)
{
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, from, to));
    return ms;
}

// One side's batches: its allocation, the device sums of its outputs, when its clock started.
struct Side {
    std::unique_ptr<ShareableAllocation> memory;
    BatchLayout layout;
    unsigned long long* sums = nullptr;  // one per repetition
    Clock::time_point started{};
    bool generated = false;
    float generate_ms = 0;
    ~Side() { cudaFree(sums); }
};

class TimingServer {
public:
    TimingServer() : channel_(child_channel_fd)
    {
        CUDA_CHECK(cudaSetDeviceFlags(cudaDeviceScheduleSpin));  // its waits are inside the window
        CUDA_CHECK(cudaFree(nullptr));
        cudaDeviceProp props{};
        CUDA_CHECK(cudaGetDeviceProperties(&props, 0));
        // Written after the inputs and before the checksums: nothing of them is in the L2 then.
        flush_bytes_ = std::max<std::size_t>(2 * static_cast<std::size_t>(props.l2CacheSize), std::size_t(64) << 20);
        CUDA_CHECK(cudaMalloc(&flush_, flush_bytes_));
        CUDA_CHECK(cudaEventCreate(&from_));
        CUDA_CHECK(cudaEventCreate(&to_));
    }
    ~TimingServer()
    {
        cudaFree(flush_);
        cudaEventDestroy(from_);
        cudaEventDestroy(to_);
    }

    // Answers one command; false after quit.
    bool answer(const Message& command)
    {
        switch (command.type) {
            case MessageType::calibrate:
                channel_.send(MessageType::calibration, calibrate_device());
                return true;
            case MessageType::allocate_timing:
                allocate(command.meta.at("set").get<std::string>(), shape_from_json(command.meta.at("shape")));
                return true;
            case MessageType::generate:
                generate(side(command), std::stoull(command.meta.at("seed").get<std::string>(), nullptr, 16),
                         {command.meta.at("values").at("lo").get<int>(), command.meta.at("values").at("hi").get<int>()});
                channel_.send(MessageType::generated, nlohmann::json::object());
                return true;
            case MessageType::checksum:
                channel_.send(MessageType::checksummed, checksum(side(command)));
                return true;
            case MessageType::free_timing:
                sides_.erase(command.meta.at("set").get<std::string>());
                channel_.send(MessageType::timing_freed, nlohmann::json::object());
                return true;
            case MessageType::quit:
                sides_.clear();
                channel_.send(MessageType::done, nlohmann::json::object());
                return false;
            default:
                throw std::logic_error("not a timing server's command");
        }
    }

private:
    Side& side(const Message& command)
    {
        const auto found = sides_.find(command.meta.at("set").get<std::string>());
        if (found == sides_.end()) throw std::logic_error("no such set of timing buffers");
        return *found->second;
    }

    void allocate(const std::string& name, const BatchShape& shape)
    {
        sides_.erase(name);  // its memory first
        auto side = std::make_unique<Side>();
        side->layout = lay_out(shape, allocation_granularity());
        if (!fits(side->layout)) throw std::invalid_argument("a batch shape out of range");
        side->memory = std::make_unique<ShareableAllocation>(side->layout.bytes);
        side->layout.bytes = side->memory->bytes();
        CUDA_CHECK(cudaMalloc(&side->sums, sizeof(unsigned long long) * static_cast<std::size_t>(shape.reps)));
        const int descriptor = side->memory->export_descriptor();
        struct Close {
            int fd;
            ~Close() { ::close(fd); }
        } close_descriptor{descriptor};
        channel_.send(MessageType::timing_allocated, {{"layout", to_json(side->layout)}});
        send_descriptor(child_handles_fd, descriptor);
        sides_[name] = std::move(side);
    }

    void flush_l2()
    {
        CUDA_CHECK(cudaMemsetAsync(flush_, static_cast<int>(++flushes_ & 0xff), flush_bytes_));
    }

    void generate(Side& side, std::uint64_t seed, TimedValues values)
    {
        side.started = Clock::now();
        const BatchShape& shape = side.layout.shape;
        const auto n = static_cast<std::size_t>(shape.elements);
        const unsigned threads = 256;
        const auto blocks = static_cast<unsigned>(std::min<std::size_t>((n + threads - 1) / threads, 8192));
        CUDA_CHECK(cudaEventRecord(from_));
        for (int k = 0; k < shape.reps; ++k) {
            char* input = side.memory->data() + side.layout.reps[static_cast<std::size_t>(k)].in;
            if (shape.f64)
                write_timed_input<<<blocks, threads>>>(reinterpret_cast<double*>(input), n, seed,
                                                       static_cast<std::uint32_t>(k), values);
            else
                write_timed_input<<<blocks, threads>>>(reinterpret_cast<float*>(input), n, seed,
                                                       static_cast<std::uint32_t>(k), values);
            CUDA_CHECK(cudaGetLastError());
        }
        flush_l2();
        CUDA_CHECK(cudaEventRecord(to_));
        CUDA_CHECK(cudaDeviceSynchronize());
        side.generate_ms = elapsed_ms(from_, to_);
        side.generated = true;
    }

    nlohmann::json checksum(Side& side)
    {
        if (!side.generated) throw std::logic_error("checksum before generate");
        side.generated = false;
        const BatchShape& shape = side.layout.shape;
        CUDA_CHECK(cudaEventRecord(from_));
        flush_l2();
        for (int k = 0; k < shape.reps; ++k)
            queue_values_checksum(side.memory->data() + side.layout.reps[static_cast<std::size_t>(k)].out,
                                  static_cast<std::size_t>(shape.out_elements), shape.f64, side.sums + k);
        CUDA_CHECK(cudaEventRecord(to_));
        std::vector<unsigned long long> sums(static_cast<std::size_t>(shape.reps));
        CUDA_CHECK(cudaMemcpy(sums.data(), side.sums, sums.size() * sizeof sums[0], cudaMemcpyDeviceToHost));
        const double window_ms = std::chrono::duration<double, std::milli>(Clock::now() - side.started).count();
        nlohmann::json checksums = nlohmann::json::array();
        for (auto sum : sums) checksums.push_back(hex64(sum));
        return {{"checksums", checksums},
                {"window_ms", window_ms},
                {"gpu_ms", {{"generate", side.generate_ms}, {"checksum", elapsed_ms(from_, to_)}}}};
    }

    ChannelWriter channel_;
    std::map<std::string, std::unique_ptr<Side>> sides_;
    void* flush_ = nullptr;
    std::size_t flush_bytes_ = 0;
    unsigned flushes_ = 0;
    cudaEvent_t from_ = nullptr, to_ = nullptr;
};

}  // namespace

int timing_server_main()
{
    ChannelReader commands(child_command_fd);
    commands.spin_while_waiting(batch_spin);  // its waits for checksum are inside the window
    ChannelWriter errors(child_channel_fd);
    try {
        TimingServer server;
        for (;;) {
            Message command;
            const auto got = commands.receive(command, Clock::time_point::max());
            if (got != ChannelReader::Result::message) return got == ChannelReader::Result::end_of_stream ? 0 : 2;
            if (!server.answer(command)) return 0;
        }
    } catch (const CudaError& error) {
        errors.send(MessageType::cuda_error, {{"case", -1}, {"phase", "timing server"}, {"error", error.name()},
                                              {"message", error.what()}});
        return 3;
    } catch (const std::exception& error) {
        errors.send(MessageType::exception,
                    {{"case", -1}, {"phase", "timing server"}, {"type", "std::exception"}, {"message", error.what()}});
        return 4;
    }
}

}  // namespace harness::runner
