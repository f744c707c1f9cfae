// The symbol policy (grading/src/build/symbols.cpp): nm's output, what a submission may define,
// and the calls that load GPU code at run time.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "grading/build.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using namespace grading;

namespace {

using test_support::contains;

}  // namespace

TEST_CASE("nm -P output: definitions, references, archive members, names with spaces")
{
    const auto symbols = parse_nm(
        "libcudart_static.a[cudart.o]:\n"
        "_Unwind_Resume U         \n"
        "_Z16scan_kogge_stonePKfPfi T 240 85\n"
        "DW.ref.__gxx_personality_v0 V 0 8\n"
        "fatbinData r 0 \n"
        "_Z16scan_brent_kungPKfPfi w         \n"
        "odd name 12 T 16 4\n"
        "nm: /out/submission.o: no symbols\n");
    REQUIRE(symbols.size() == 6);
    CHECK(symbols[0].name == "_Unwind_Resume");
    CHECK(symbols[0].type == 'U');
    CHECK(symbols[1].name == "_Z16scan_kogge_stonePKfPfi");
    CHECK(symbols[1].type == 'T');
    CHECK(symbols[2].type == 'V');
    CHECK(symbols[3].name == "fatbinData");
    CHECK(symbols[3].type == 'r');
    CHECK(symbols[4].type == 'w');
    CHECK(symbols[5].name == "odd name 12");
}

TEST_CASE("forbidden definitions: main, CUDA entry points, the runner's and the runtime's symbols")
{
    ForbiddenSymbols f;
    f.referenced = {{"write", "the grader's runner"},
                    {"_Z16scan_kogge_stonePKfPfi", "the grader's runner"},
                    {"dlsym", "the CUDA runtime"}};
    f.defined = {{"_ZN7harness13ChannelWriter4sendEv", {false, "the grader's runner"}},
                 {"_ZNSt6vectorIfSaIfEE7reserveEm", {true, "the grader's runner"}},
                 {"DW.ref.__gxx_personality_v0", {true, "the grader's runner"}},
                 {"malloc", {false, "the C/C++ runtime (libc.so.6)"}},
                 {"open", {true, "the C/C++ runtime (libc.so.6)"}}};
    f.launcher_prefixes = {"_Z16scan_kogge_stone"};
    auto verdict = [&](std::vector<Symbol> symbols) { return forbidden_definition(symbols, f); };

    // What nvcc emits for an honest file, its launcher (the runner references it), its own helpers,
    // weak copies of inline functions the runner also has, and every undefined reference.
    CHECK(verdict(
              {{"_Z16scan_kogge_stonePKfPfi", 'T'},
               {"_Z90__device_stub__ZN39_GLOBAL__N__b79260f0_7_stub_cu_adaca45423kogge_stone_scan_kernelEPKfPfi", 'T'},
               {"_ZNSt6vectorIfSaIfEE7reserveEm", 'W'},
               {"DW.ref.__gxx_personality_v0", 'V'},
               {"_ZL20__cudaFatCubinHandle", 'b'},
               {"__cudaRegisterFatBinary", 'U'},
               {"write", 'U'},
               {"_Z6helperv", 'T'}})
              .empty());
    // A launcher of the wrong signature is the student's own mistake, reported at run time.
    CHECK(verdict({{"_Z16scan_kogge_stonePfS_i", 'T'}}).empty());

    CHECK(contains(verdict({{"main", 'T'}}), "defines `main`"));
    CHECK(contains(verdict({{"main", 'W'}}), "defines `main`"));
    CHECK(contains(verdict({{"cudaEventElapsedTime", 'T'}}),
                   "`cudaEventElapsedTime`, a CUDA runtime or driver entry point"));
    CHECK(contains(verdict({{"cuEventElapsedTime", 'W'}}), "`cuEventElapsedTime`"));
    CHECK(contains(verdict({{"write", 'T'}}), "`write`, which the grader's runner calls"));
    CHECK(contains(verdict({{"write@@GLIBC_2.2.5", 'T'}}), "`write`"));
    CHECK(contains(verdict({{"dlsym", 'W'}}), "`dlsym`, which the CUDA runtime calls"));
    CHECK(contains(verdict({{"_ZN7harness13ChannelWriter4sendEv", 'W'}}),
                   "`harness::ChannelWriter::send()`, which the grader's runner defines"));
    // A strong definition of what the runner has only weakly would win the link: not allowed.
    CHECK(contains(verdict({{"_ZNSt6vectorIfSaIfEE7reserveEm", 'T'}}),
                   "std::vector<float, std::allocator<float> >::reserve"));
    CHECK(contains(verdict({{"malloc", 'T'}}), "`malloc`, which the C/C++ runtime (libc.so.6) defines"));
    CHECK(contains(verdict({{"open", 'W'}}), "`open`"));  // a weak C name: no template instantiation
    const std::string several = verdict({{"main", 'T'}, {"write", 'T'}, {"_Z6helperv", 'T'}});
    CHECK(contains(several, "(and 1 more such symbols)"));
    CHECK(contains(several, "a submission defines only its launcher and its own kernels and helpers"));
}

TEST_CASE("loading GPU code at run time: the runtime's and the driver's loaders, the dynamic loader")
{
    // What nvcc's own registration of the file's kernels references is fine.
    CHECK(loads_code_at_run_time({{"__cudaRegisterFatBinary", 'U'},
                                  {"__cudaLaunchKernel", 'U'},
                                  {"cudaMemcpyToSymbol", 'U'},
                                  {"cudaLaunchKernel", 'U'}},
                                 false)
              .empty());
    for (const char* loader : {"cudaLibraryLoadData", "cudaGetDriverEntryPoint", "cuModuleLoadData", "dlsym"})
        CHECK(contains(loads_code_at_run_time({{loader, 'U'}}, false), std::string("calls `") + loader + "`"));
    CHECK(contains(loads_code_at_run_time({{"dlopen@GLIBC_2.34", 'U'}}, false), "calls `dlopen`"));
    // Defining one is forbidden_definition's business; a local symbol of that name calls nothing.
    CHECK(loads_code_at_run_time({{"dlsym", 't'}}, false).empty());
    // CUB's headers call the dynamic loader themselves: that file is library use, judged as such.
    CHECK(loads_code_at_run_time({{"dlopen", 'U'}, {"dlsym", 'U'}}, true).empty());
    CHECK(contains(loads_code_at_run_time({{"dlopen", 'U'}, {"cuModuleLoadData", 'U'}}, true), "`cuModuleLoadData`"));
}

TEST_CASE("the forbidden set is read from the runner object in use; without one, the grading environment is at fault")
{
    const Toolchain toolchain = default_toolchain(fs::read_symlink("/proc/self/exe").string());
    REQUIRE_MESSAGE(fs::is_regular_file(toolchain.runner_object),
                    "the runner object " << toolchain.runner_object << " was not built (target grader_runner_object)");
    const ForbiddenSymbols f = forbidden_symbols(toolchain.runner_object, "");
    CHECK(f.defined.count("main") == 1);
    CHECK(f.defined.at("main").owner == "the grader's runner");
    CHECK(f.launcher_prefixes.size() >= 10);
    CHECK(std::find(f.launcher_prefixes.begin(), f.launcher_prefixes.end(), "_Z16scan_kogge_stone") !=
          f.launcher_prefixes.end());
    // The runner calls the launchers (weakly declared): referenced, and still the student's to define.
    CHECK(forbidden_definition({{"_Z16scan_kogge_stonePKfPfi", 'T'}}, f).empty());
    // The C library the link uses, as g++ finds it.
    CHECK(contains(forbidden_definition({{"malloc", 'T'}}, f), "`malloc`"));

    CHECK_THROWS_WITH_AS(forbidden_symbols("/nonexistent/grader_runner.o", ""),
                         doctest::Contains("build the grader_runner_object target"), std::runtime_error);
}
