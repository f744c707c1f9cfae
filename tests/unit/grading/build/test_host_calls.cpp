// The host-call allowlist (grading/src/build/host_calls.cpp): what honest launchers call is
// allowed; loading, finding or compiling code, memory protection, files and descriptors, threads
// and processes, raw system calls and the grader's own code are refused; anything else is named.
// By name, by nm's symbol lists, and on objects compiled by the real nvcc.
#include <doctest/doctest.h>

#include <tuple>

#include "foreign_code_sources.hpp"
#include "grading/build.hpp"
#include "support/test_support.hpp"

using namespace grading;

namespace {

using test_support::contains;

}  // namespace

TEST_CASE("the allowlist: the CUDA runtime, printing, host math, the C and C++ libraries, nvcc's own calls")
{
    for (const char* name :
         {"cudaMalloc", "cudaMallocAsync", "cudaFree", "cudaMemcpy", "cudaMemcpyAsync", "cudaMemcpyToSymbol",
          "cudaMemset", "cudaMemGetInfo", "cudaGetSymbolAddress", "cudaStreamCreateWithFlags", "cudaStreamSynchronize",
          "cudaEventCreate", "cudaEventRecord", "cudaEventElapsedTime", "cudaLaunchKernel", "cudaGetLastError",
          "cudaPeekAtLastError", "cudaGetErrorString", "cudaGetDevice", "cudaGetDeviceProperties_v2",
          "cudaDeviceSynchronize", "cudaDeviceGetAttribute", "cudaFuncSetAttribute",
          "cudaOccupancyMaxActiveBlocksPerMultiprocessor", "cudaGraphLaunch", "cudaHostAlloc",
          "__cudaRegisterFatBinary", "__cudaRegisterFunction", "__cudaPushCallConfiguration", "__cudaLaunchKernel",
          "__cudaGetKernel", "printf", "puts", "fprintf", "fflush", "stderr", "stdout", "snprintf", "__printf_chk",
          "sqrtf", "expf", "log2", "fmaxf", "__isnan", "malloc", "free", "memcpy", "memset", "strlen", "strtol", "qsort",
          "exit", "abort", "atexit", "__assert_fail", "__stack_chk_fail", "clock_gettime", "_Znwm", "_ZdlPvm",
          "_ZdaPv", "__cxa_throw", "__cxa_guard_acquire", "__cxa_atexit", "__gxx_personality_v0", "_Unwind_Resume",
          "_ZSt20__throw_length_errorPKc", "_ZSt28_Rb_tree_insert_and_rebalancebPSt18_Rb_tree_node_baseS0_RS_",
          "_ZNSo9_M_insertIdEERSoT_", "_ZTVN10__cxxabiv117__class_type_infoE", "_ZTISt13runtime_error", "_ZTIi",
          "_ZNSt6chrono3_V212steady_clock3nowEv", "pthread_mutex_lock", "pthread_once", "_GLOBAL_OFFSET_TABLE_",
          "__dso_handle", "__tls_get_addr", "memcpy@GLIBC_2.14", "printf@@GLIBC_2.2.5"}) {
        CAPTURE(name);
        CHECK(classify_host_call(name) == HostCallKind::allowed);
    }
}

TEST_CASE("refused: loading, compiling and finding code, memory protection, files, threads, processes, syscall()")
{
    const std::vector<std::pair<const char*, HostCallKind>> refused = {
        {"dlopen", HostCallKind::loads_code},
        {"dlmopen", HostCallKind::loads_code},
        {"cuModuleLoadData", HostCallKind::loads_code},
        {"cuModuleLoadFatBinary", HostCallKind::loads_code},
        {"cuLibraryLoadData", HostCallKind::loads_code},
        {"cudaLibraryLoadData", HostCallKind::loads_code},
        {"cuLinkCreate_v2", HostCallKind::loads_code},
        {"nvrtcCompileProgram", HostCallKind::loads_code},
        {"nvJitLinkCreate", HostCallKind::loads_code},
        {"nvPTXCompilerCompile", HostCallKind::loads_code},
        {"cudaGetDriverEntryPoint", HostCallKind::loads_code},
        {"cudaGetDriverEntryPointByVersion", HostCallKind::loads_code},
        {"cuGetProcAddress_v2", HostCallKind::loads_code},
        {"cudaGetExportTable", HostCallKind::loads_code},
        {"dlsym", HostCallKind::finds_symbols},
        {"dlvsym", HostCallKind::finds_symbols},
        {"dladdr", HostCallKind::finds_symbols},
        {"dl_iterate_phdr", HostCallKind::finds_symbols},
        {"getauxval", HostCallKind::finds_symbols},
        {"_r_debug", HostCallKind::finds_symbols},
        {"__ehdr_start", HostCallKind::finds_symbols},
        {"mprotect", HostCallKind::protects_memory},
        {"mmap", HostCallKind::protects_memory},
        {"pkey_mprotect", HostCallKind::protects_memory},
        {"open", HostCallKind::opens_files},
        {"openat", HostCallKind::opens_files},
        {"__open_2", HostCallKind::opens_files},
        {"fopen", HostCallKind::opens_files},
        {"fopen64", HostCallKind::opens_files},
        {"socket", HostCallKind::opens_files},
        {"pipe2", HostCallKind::opens_files},
        {"dup2", HostCallKind::opens_files},
        {"ioctl", HostCallKind::opens_files},
        {"read", HostCallKind::opens_files},
        {"write", HostCallKind::opens_files},
        {"memfd_create", HostCallKind::opens_files},
        {"opendir", HostCallKind::opens_files},
        {"readlink", HostCallKind::opens_files},
        {"_ZNSt14basic_ifstreamIcSt11char_traitsIcEEC1EPKcSt13_Ios_Openmode", HostCallKind::opens_files},
        {"_ZNSt10filesystem6statusERKNS_7__cxx114pathE", HostCallKind::opens_files},
        {"pthread_create", HostCallKind::starts_threads},
        {"_ZNSt6thread15_M_start_threadESt10unique_ptrINS_6_StateESt14default_deleteIS1_EEPFvvE",
         HostCallKind::starts_threads},
        {"fork", HostCallKind::starts_threads},
        {"vfork", HostCallKind::starts_threads},
        {"clone", HostCallKind::starts_threads},
        {"execve", HostCallKind::starts_threads},
        {"execvp", HostCallKind::starts_threads},
        {"system", HostCallKind::starts_threads},
        {"popen", HostCallKind::starts_threads},
        {"posix_spawn", HostCallKind::starts_threads},
        {"kill", HostCallKind::starts_threads},
        // signal handlers and timers: code that runs after a batch (red team 15)
        {"sigaction", HostCallKind::starts_threads},
        {"signal", HostCallKind::starts_threads},
        {"setitimer", HostCallKind::starts_threads},
        {"alarm", HostCallKind::starts_threads},
        {"timer_create", HostCallKind::starts_threads},
        {"syscall", HostCallKind::raw_system_call},
    };
    for (const auto& [name, kind] : refused) {
        CAPTURE(name);
        CHECK(classify_host_call(name) == kind);
    }
    // Anything else is named, never refused: an honest launcher may need a call the list lacks.
    for (const char* name : {"getenv", "prctl", "usleep", "cuCtxGetCurrent", "_ZN5other6helperEv", "rand_s"}) {
        CAPTURE(name);
        CHECK(classify_host_call(name) == HostCallKind::unknown);
    }
}

TEST_CASE("nm's lists: each reference once, definitions ignored, the refused apart from the named, in order")
{
    ForbiddenSymbols forbidden;
    forbidden.defined = {{"_ZN7harness13ChannelWriter4sendEv", {false, "the grader's runner"}},
                         {"write", {false, "the C/C++ runtime (libc.so.6)"}}};
    const HostCallCheck check = check_host_calls({{"cudaMalloc", 'U'},
                                                  {"fork", 'U'},
                                                  {"fork@GLIBC_2.2.5", 'U'},
                                                  {"dlopen", 'w'},
                                                  {"getenv", 'U'},
                                                  {"mprotect", 'T'},  // a definition: forbidden_definition's business
                                                  {"_ZN7harness13ChannelWriter4sendEv", 'U'},
                                                  {"_ZNSt6thread15_M_start_threadESt10unique_ptrINS_6_StateESt14"
                                                   "default_deleteIS1_EEPFvvE",
                                                   'U'}},
                                                 forbidden, false);
    REQUIRE(check.refused.size() == 4);
    CHECK(check.refused[0].name == "fork");
    CHECK(check.refused[0].message ==
          "calls `fork`, which starts or signals a thread or a process: a launcher runs on the thread that calls it");
    CHECK(check.refused[1].kind == HostCallKind::loads_code);
    CHECK(contains(check.refused[1].message, "calls `dlopen`, which loads or compiles code at run time"));
    CHECK(check.refused[2].kind == HostCallKind::grader_internal);
    CHECK(contains(check.refused[2].message, "`harness::ChannelWriter::send()`, which belongs to the grader's runner"));
    // A long C++ name without its parameter list.
    CHECK(contains(check.refused[3].message, "calls `std::thread::_M_start_thread`, which starts"));
    REQUIRE(check.named.size() == 1);
    CHECK(check.named[0].message ==
          "calls `getenv`, which is not among the calls of honest launchers (named for course staff, not refused)");

    // A file that reads CUB's or Thrust's headers (library use, priced by the rubric) may open the
    // driver through the dynamic loader itself: named, not refused. A module loader is refused still.
    const HostCallCheck library =
        check_host_calls({{"dlopen", 'U'}, {"dlsym", 'U'}, {"cuModuleLoadData", 'U'}}, forbidden, true);
    REQUIRE(library.refused.size() == 1);
    CHECK(library.refused[0].name == "cuModuleLoadData");
    CHECK(library.named.size() == 2);
}

TEST_CASE("real nvcc: a launcher with temporaries, vectors, math and printing passes with nothing named")
{
    const BuildResult* b = foreign_code::result("honest_temporaries");
    if (!b) return;
    INFO(foreign_code::findings(*b));
    CHECK(b->ok);
    CHECK(b->code_findings.empty());
}

TEST_CASE("real nvcc: threads, dlsym, mprotect, fopen and syscall() are refused, each with its reason")
{
    // The message names the first refused call (by class, then in nm's order); the findings all.
    for (const auto& [name, call, reason] : std::vector<std::tuple<std::string, std::string, std::string>>{
             {"calls_thread", "std::thread::_M_start_thread", "which starts or signals a thread"},
             {"calls_dlsym", "dlsym", "which looks up functions or the program's own image by hand"},
             {"calls_mprotect", "mprotect", "which maps memory or changes its protection"},
             {"calls_fopen", "fopen", "which opens or uses a file or a file descriptor"},
             {"calls_syscall", "syscall", "which makes a system call directly"}}) {
        const BuildResult* b = foreign_code::result(name);
        if (!b) return;
        CAPTURE(name);
        INFO(foreign_code::findings(*b));
        CHECK_FALSE(b->ok);
        CHECK(contains(b->invalid, "scan_kogge_stone.cu calls `"));
        CHECK(contains(b->invalid, reason));
        CHECK(foreign_code::any_finding(*b, "calls `" + call + "`, " + reason));
    }
}

TEST_CASE("real nvcc: a call off the list is named for course staff and the file is built")
{
    const BuildResult* b = foreign_code::result("calls_getenv");
    if (!b) return;
    INFO(foreign_code::findings(*b));
    CHECK(b->ok);
    CHECK(b->invalid.empty());
    CHECK(foreign_code::any_finding(*b, "calls `getenv`, which is not among the calls of honest launchers"));
}

TEST_CASE("real nvcc: with the rubric's code_checks \"name\", what is refused is named and the file built")
{
    const BuildResult* b = foreign_code::result("calls_thread_named");
    if (!b) return;
    INFO(foreign_code::findings(*b));
    CHECK(b->ok);
    CHECK(b->invalid.empty());
    CHECK(foreign_code::any_finding(*b, "which starts or signals a thread"));
}
