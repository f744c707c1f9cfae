// A device buffer with a guard zone of harness::guard_elements on each side. The launcher gets
// data(); the runner sends the whole thing back so the parent can see writes outside it, or only
// its checksum where the parent needs no more (an input after the run, a second run's output).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace harness::runner {

class GuardedBuffer {
public:
    GuardedBuffer(std::size_t elements, std::size_t element_bytes);
    ~GuardedBuffer();
    GuardedBuffer(const GuardedBuffer&) = delete;
    GuardedBuffer& operator=(const GuardedBuffer&) = delete;

    void* data() const { return base_ + guard_bytes(); }
    std::size_t data_bytes() const { return elements_ * element_bytes_; }
    std::size_t guard_bytes() const;
    std::size_t total_bytes() const { return data_bytes() + 2 * guard_bytes(); }

    // Every element, guards included, set to `pattern` (the low element_bytes of it).
    void fill(std::uint64_t pattern);
    // Guards set to `guard_pattern`, data copied from the host.
    void upload(const void* host, std::uint64_t guard_pattern);
    void download_all(void* host) const;  // total_bytes()
    void download_range(std::size_t byte_offset, std::size_t bytes, void* host) const;
    // Checksums of the data (guards excluded) as floats (f64: doubles), computed on the GPU;
    // `device_sum` is 8 bytes of device memory to add them up in. Of values: the sum of
    // harness::checksum_term (a repetition's output, compared with the golden one); of exact bits:
    // harness::bits_checksum (an input after the run, a second run's output).
    std::uint64_t values_checksum(bool f64, unsigned long long* device_sum) const;
    std::uint64_t bits_checksum(bool f64, unsigned long long* device_sum) const;

private:
    std::size_t elements_, element_bytes_;
    unsigned char* base_ = nullptr;
};

// Queues the checksum of values (harness::checksum_term) of `count` floats (f64: doubles) at
// `data` into `device_sum` on the default stream, without waiting: the timing server's checksums
// of a batch's outputs.
void queue_values_checksum(const void* data, std::size_t count, bool f64, unsigned long long* device_sum);

}  // namespace harness::runner
