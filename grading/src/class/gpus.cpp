// Which GPUs `grade class` grades on (class_grading.hpp, choose_gpus).
#include <regex>
#include <sstream>

#include "grading/class_grading.hpp"

namespace grading {
namespace {

std::vector<std::string> split_list(const std::string& text)
{
    std::vector<std::string> items;
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ',')) {
        const auto begin = item.find_first_not_of(" \t");
        const auto end = item.find_last_not_of(" \t");
        if (begin != std::string::npos) items.push_back(item.substr(begin, end - begin + 1));
    }
    return items;
}

bool all_digits(const std::string& text)
{
    return !text.empty() && text.size() < 6 && text.find_first_not_of("0123456789") == std::string::npos;
}

}  // namespace

std::vector<ClassGpu> parse_nvidia_smi_list(const std::string& text)
{
    // "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-...)", and under a GPU in MIG mode its instances,
    // "  MIG 3g.40gb     Device  0: (UUID: MIG-...)", which CUDA then sees instead of the GPU.
    static const std::regex gpu_line(R"(^GPU ([0-9]+): (.*) \(UUID: (GPU-[0-9A-Za-z-]+)\)\s*$)");
    static const std::regex mig_line(R"(^\s+MIG (\S+)\s+Device\s+([0-9]+): \(UUID: (MIG-[0-9A-Za-z/-]+)\)\s*$)");
    std::vector<ClassGpu> gpus;
    std::istringstream in(text);
    std::string line, gpu_index, gpu_name;
    bool gpu_has_mig = false;
    while (std::getline(in, line)) {
        std::smatch m;
        if (std::regex_match(line, m, gpu_line)) {
            gpu_index = m[1], gpu_name = m[2], gpu_has_mig = false;
            gpus.push_back({m[3], gpu_index + " (" + gpu_name + ")"});
        } else if (!gpus.empty() && std::regex_match(line, m, mig_line)) {
            if (!gpu_has_mig) gpus.pop_back();
            gpu_has_mig = true;
            gpus.push_back({m[3], gpu_index + "/" + std::string(m[2]) + " (" + gpu_name + ", MIG " + std::string(m[1]) + ")"});
        }
    }
    return gpus;
}

GpuChoice choose_gpus(const std::vector<std::string>& asked, const Toolchain& toolchain, const DeviceProbe& probe,
                      const std::optional<std::string>& visible_env, const std::optional<std::string>& nvidia_smi)
{
    GpuChoice choice;
    const std::vector<std::string> visible = visible_env ? split_list(*visible_env) : std::vector<std::string>{};
    if (!asked.empty()) {
        for (const auto& gpu : asked) {
            // Like CUDA's device numbers: an index counts in the class's own CUDA_VISIBLE_DEVICES.
            if (visible_env && all_digits(gpu)) {
                const std::size_t k = std::stoul(gpu);
                if (k >= visible.size()) {
                    choice.error = "--gpus " + gpu + ": this process sees " + std::to_string(visible.size()) +
                                   " GPU(s) (CUDA_VISIBLE_DEVICES=" + *visible_env + ")";
                    return choice;
                }
                choice.gpus.push_back({visible[k], gpu + " (" + visible[k] + ")"});
            } else {
                choice.gpus.push_back({gpu, gpu});
            }
        }
        choice.note = "the GPUs of --gpus";
        bool asked_cuda = false;
        grading_device(toolchain, [&] {
            asked_cuda = true;
            return DeviceState{};
        });
        choice.fake = !asked_cuda;
        return choice;
    }
    bool asked_cuda = false;
    const DeviceState device = grading_device(toolchain, [&] {
        asked_cuda = true;
        return probe();
    });
    if (!asked_cuda) {  // the tests' fake toolchain: its runners compute on the CPU
        if (!device.error.empty()) {
            choice.error = "no usable GPU: " + device.error;
            return choice;
        }
        choice.gpus.push_back({"0", "0 (" + device.name + ")"});
        choice.note = "the toolchain's fake device, no GPU needed: one virtual GPU";
        choice.fake = true;
        return choice;
    }
    if (visible_env) {
        for (const auto& entry : visible)
            if (entry != "NoDevFiles" && entry.rfind("-", 0) != 0) choice.gpus.push_back({entry, entry});
        if (choice.gpus.empty())
            choice.error = "no GPU: CUDA_VISIBLE_DEVICES is '" + *visible_env +
                           "'\n  (ask the scheduler for a GPU, e.g. sbatch --gpus=1, or unset it)";
        else
            choice.note = "the GPUs of CUDA_VISIBLE_DEVICES";
        return choice;
    }
    if (nvidia_smi) {
        choice.gpus = parse_nvidia_smi_list(*nvidia_smi);
        if (!choice.gpus.empty()) {
            choice.note = "the GPUs nvidia-smi -L lists";
            return choice;
        }
    }
    if (!device.error.empty()) {
        choice.error = "no usable GPU: " + device.error +
                       "\n  (grade class grades on NVIDIA GPUs; nvidia-smi should list them, or name them with --gpus)";
        return choice;
    }
    choice.gpus.push_back({"0", "0 (" + device.name + ")"});
    choice.note = "CUDA's device 0 only (nvidia-smi -L listed none: name more GPUs with --gpus)";
    return choice;
}

}  // namespace grading
