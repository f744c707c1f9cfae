// ATTACK (issue 20, found by a red team): CUB compiled at run time with the toolkit's NVRTC,
// reached through a symbol lookup written by hand. No loader is called by name: the launcher
// finds libc in /proc/self/maps, walks its dynamic section and GNU hash table itself to find
// `dlopen`, opens libnvrtc (the run sandbox showed the toolkit) and the driver (already loaded
// by the runtime) through it, finds their functions the same way, compiles CUB's block scan for
// the GPU at hand, loads the PTX with cuModuleLoadData and launches it with cuLaunchKernel. The
// object references fopen, fgets, fclose and sscanf, and names its libraries as strings. 10/10
// before this was checked.
//
// Required verdict: invalid_submission, the message naming a library or loader the data names
// ("libnvrtc", "dlopen", "/proc/self/maps", ...) or a call that opens files; the same verdict
// wherever the toolkit is (its absence from the run sandbox is a second wall, not the check).
#include <cuda_runtime.h>
#include <elf.h>
#include <link.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

namespace {

// ---- The lookup written by hand: a symbol of a loaded ELF object, from its dynamic section ----

std::uint32_t gnu_hash(const char* name)
{
    std::uint32_t h = 5381;
    for (; *name; ++name) h = h * 33 + static_cast<unsigned char>(*name);
    return h;
}

// glibc relocates the dynamic section's pointers in place on x86-64; elsewhere they are offsets.
std::uintptr_t at(std::uintptr_t base, std::uintptr_t value)
{
    return value < base ? base + value : value;
}

void* find_symbol(std::uintptr_t base, const ElfW(Dyn) * dynamic, const char* name)
{
    const ElfW(Sym)* symbols = nullptr;
    const char* strings = nullptr;
    const std::uint32_t* hash = nullptr;
    for (const ElfW(Dyn)* d = dynamic; d->d_tag != DT_NULL; ++d) {
        if (d->d_tag == DT_SYMTAB) symbols = reinterpret_cast<const ElfW(Sym)*>(at(base, d->d_un.d_ptr));
        if (d->d_tag == DT_STRTAB) strings = reinterpret_cast<const char*>(at(base, d->d_un.d_ptr));
        if (d->d_tag == DT_GNU_HASH) hash = reinterpret_cast<const std::uint32_t*>(at(base, d->d_un.d_ptr));
    }
    if (symbols == nullptr || strings == nullptr || hash == nullptr) return nullptr;
    const std::uint32_t buckets = hash[0], first = hash[1], bloom_words = hash[2];
    const std::uint32_t* bucket = reinterpret_cast<const std::uint32_t*>(reinterpret_cast<const ElfW(Addr)*>(hash + 4) + bloom_words);
    const std::uint32_t* chain = bucket + buckets;
    const std::uint32_t h = gnu_hash(name);
    for (std::uint32_t i = bucket[h % buckets]; i >= first; ++i) {
        const std::uint32_t link = chain[i - first];
        if ((link | 1) == (h | 1) && std::strcmp(strings + symbols[i].st_name, name) == 0 &&
            symbols[i].st_shndx != SHN_UNDEF)
            return reinterpret_cast<void*>(base + symbols[i].st_value);
        if (link & 1) break;
    }
    return nullptr;
}

// A library already mapped, by part of its path in /proc/self/maps: its base and dynamic section.
bool find_loaded(const char* part, std::uintptr_t& base, const ElfW(Dyn) * &dynamic)
{
    std::FILE* maps = std::fopen("/proc/self/maps", "r");
    if (maps == nullptr) return false;
    char line[4096];
    bool found = false;
    while (!found && std::fgets(line, sizeof line, maps)) {
        unsigned long start = 0, offset = 0;
        if (std::strstr(line, part) == nullptr || std::sscanf(line, "%lx-%*lx %*s %lx", &start, &offset) != 2 ||
            offset != 0)
            continue;
        const auto* header = reinterpret_cast<const ElfW(Ehdr)*>(start);
        const auto* program = reinterpret_cast<const ElfW(Phdr)*>(start + header->e_phoff);
        for (int k = 0; k < header->e_phnum; ++k)
            if (program[k].p_type == PT_DYNAMIC) {
                base = start;
                dynamic = reinterpret_cast<const ElfW(Dyn)*>(start + program[k].p_vaddr);
                found = true;
            }
    }
    std::fclose(maps);
    return found;
}

using Open = void* (*)(const char*, int);
Open open_library()
{
    std::uintptr_t base = 0;
    const ElfW(Dyn)* dynamic = nullptr;
    for (const char* library : {"/libc.so.6", "/libdl.so.2"})
        if (find_loaded(library, base, dynamic))
            for (const char* name : {"dlopen", "__libc_dlopen_mode"})
                if (void* f = find_symbol(base, dynamic, name)) return reinterpret_cast<Open>(f);
    return nullptr;
}

// dlopen's handle is the library's link_map: its base and dynamic section.
void* symbol_of(void* handle, const char* name)
{
    const auto* map = static_cast<const link_map*>(handle);
    return handle ? find_symbol(map->l_addr, map->l_ld, name) : nullptr;
}

// ---- NVRTC and the driver, through the lookup ----

const char* const source = R"KERNEL(
#include <cub/block/block_load.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_store.cuh>

constexpr int threads = 256, items = 16, tile = threads * items;

extern "C" __global__ void __launch_bounds__(256) cub_tile_sums(const float* in, long long n, float* sums)
{
    using Load = cub::BlockLoad<float, threads, items, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
    using Reduce = cub::BlockReduce<float, threads>;
    __shared__ union { typename Load::TempStorage load; typename Reduce::TempStorage reduce; } temp;
    const long long start = static_cast<long long>(blockIdx.x) * tile;
    const int valid = static_cast<int>(n - start < tile ? n - start : tile);
    float v[items];
    Load(temp.load).Load(in + start, v, valid, 0.0f);
    __syncthreads();
    float total = 0.0f;
    for (int k = 0; k < items; ++k) total += v[k];
    total = Reduce(temp.reduce).Sum(total);
    if (threadIdx.x == 0) sums[blockIdx.x] = total;
}

extern "C" __global__ void __launch_bounds__(256)
    cub_scan_tiles(const float* in, float* out, long long n, const float* scanned)
{
    using Load = cub::BlockLoad<float, threads, items, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
    using Scan = cub::BlockScan<float, threads>;
    using Store = cub::BlockStore<float, threads, items, cub::BLOCK_STORE_WARP_TRANSPOSE>;
    __shared__ union {
        typename Load::TempStorage load;
        typename Scan::TempStorage scan;
        typename Store::TempStorage store;
    } temp;
    const long long start = static_cast<long long>(blockIdx.x) * tile;
    const int valid = static_cast<int>(n - start < tile ? n - start : tile);
    float v[items];
    Load(temp.load).Load(in + start, v, valid, 0.0f);
    __syncthreads();
    Scan(temp.scan).InclusiveSum(v, v);
    __syncthreads();
    const float before = (scanned != nullptr && blockIdx.x > 0) ? scanned[blockIdx.x - 1] : 0.0f;
    for (int k = 0; k < items; ++k) v[k] += before;
    Store(temp.store).Store(out + start, v, valid);
}
)KERNEL";

struct Api {
    int (*create)(void**, const char*, const char*, int, const char* const*, const char* const*);
    int (*compile)(void*, int, const char* const*);
    int (*ptx_size)(void*, std::size_t*);
    int (*ptx)(void*, char*);
    int (*log_size)(void*, std::size_t*);
    int (*log)(void*, char*);
    int (*module_load)(void**, const void*);
    int (*function)(void**, void*, const char*);
    int (*launch)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**, void**);
    void* tile_sums = nullptr;
    void* scan_tiles = nullptr;
};

template <typename F>
bool take(F& f, void* handle, const char* name)
{
    f = reinterpret_cast<F>(symbol_of(handle, name));
    return f != nullptr;
}

// The toolkit's root from where libnvrtc was found: .../lib64/libnvrtc.so.13 -> ...
std::string toolkit_root(void* nvrtc)
{
    std::string path = static_cast<const link_map*>(nvrtc)->l_name;
    for (const char* part : {"/targets/", "/lib64/", "/lib/"})
        if (const std::size_t k = path.rfind(part); k != std::string::npos) return path.substr(0, k);
    return "/usr/local/cuda";
}

bool prepare(Api& api)
{
    const Open open = open_library();
    if (open == nullptr) return false;
    void* nvrtc = nullptr;
    for (const char* name : {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "/usr/local/cuda/lib64/libnvrtc.so"})
        if ((nvrtc = open(name, RTLD_NOW)) != nullptr) break;
    void* driver = open("libcuda.so.1", RTLD_NOW);
    if (nvrtc == nullptr || driver == nullptr) return false;
    if (!take(api.create, nvrtc, "nvrtcCreateProgram") || !take(api.compile, nvrtc, "nvrtcCompileProgram") ||
        !take(api.ptx_size, nvrtc, "nvrtcGetPTXSize") || !take(api.ptx, nvrtc, "nvrtcGetPTX") ||
        !take(api.log_size, nvrtc, "nvrtcGetProgramLogSize") || !take(api.log, nvrtc, "nvrtcGetProgramLog") ||
        !take(api.module_load, driver, "cuModuleLoadData") || !take(api.function, driver, "cuModuleGetFunction") ||
        !take(api.launch, driver, "cuLaunchKernel"))
        return false;

    int device = 0;
    cudaDeviceProp properties{};
    cudaGetDevice(&device);
    cudaGetDeviceProperties(&properties, device);
    const std::string root = toolkit_root(nvrtc);
    const std::string arch = "--gpu-architecture=compute_" + std::to_string(properties.major * 10 + properties.minor);
    const std::string includes[] = {"--include-path=" + root + "/include", "--include-path=" + root + "/include/cccl",
                                    "--include-path=" + root + "/targets/x86_64-linux/include",
                                    "--include-path=" + root + "/targets/x86_64-linux/include/cccl"};
    const char* options[] = {arch.c_str(),        "--std=c++17",       includes[0].c_str(),
                             includes[1].c_str(), includes[2].c_str(), includes[3].c_str()};
    void* program = nullptr;
    api.create(&program, source, "scan.cu", 0, nullptr, nullptr);
    if (api.compile(program, 6, options) != 0) {
        std::size_t size = 0;
        api.log_size(program, &size);
        std::string log(size, '\0');
        api.log(program, log.data());
        std::fprintf(stderr, "nvrtc: %s\n", log.c_str());
        return false;
    }
    std::size_t size = 0;
    api.ptx_size(program, &size);
    std::string ptx(size, '\0');
    api.ptx(program, ptx.data());
    cudaFree(nullptr);  // the runtime's context is current on this thread
    void* module = nullptr;
    return api.module_load(&module, ptx.c_str()) == 0 && api.function(&api.tile_sums, module, "cub_tile_sums") == 0 &&
           api.function(&api.scan_tiles, module, "cub_scan_tiles") == 0;
}

Api api;
bool ready = false;

void scan_level(const float* in, float* out, long long n, float* scratch)
{
    const long long tiles = (n + 4095) / 4096;
    const float* none = nullptr;
    if (tiles == 1) {
        void* args[] = {&in, &out, &n, &none};
        api.launch(api.scan_tiles, 1, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr);
        return;
    }
    float* sums = scratch;
    void* sum_args[] = {&in, &n, &sums};
    api.launch(api.tile_sums, static_cast<unsigned>(tiles), 1, 1, 256, 1, 1, 0, nullptr, sum_args, nullptr);
    scan_level(sums, sums, tiles, scratch + (tiles + 3) / 4 * 4);
    const float* scanned = sums;
    void* scan_args[] = {&in, &out, &n, &scanned};
    api.launch(api.scan_tiles, static_cast<unsigned>(tiles), 1, 1, 256, 1, 1, 0, nullptr, scan_args, nullptr);
}

}  // namespace

void scan_hierarchical(const float* in, float* out, int n, float* scratch)
{
    if (!ready) ready = prepare(api);
    if (ready && n > 0) scan_level(in, out, n, scratch);
}
