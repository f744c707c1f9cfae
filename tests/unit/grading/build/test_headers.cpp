// The header policy (grading/src/build/headers.cpp): the compiler's dependency list, the folders a
// submission may read headers from, and the library each header belongs to.
#include <doctest/doctest.h>

#include <unistd.h>
#include <algorithm>
#include <filesystem>
#include <fstream>

#include "grading/build.hpp"

namespace fs = std::filesystem;
using namespace grading;

TEST_CASE("dependency lists: escaped spaces, continuations, several rules")
{
    const std::string nvcc_style =
        "submission.o : /submission/scan_kogge_stone.cu \\\n"
        "    /usr/include/stdc-predef.h \\\n"
        "    /tmp/dir\\ with\\ space/a\\ b.h \\\n"
        "    /tmp/we#ird$dir/x.h\n";
    const auto deps = parse_make_dependencies(nvcc_style);
    REQUIRE(deps.size() == 4);
    CHECK(deps[0] == "/submission/scan_kogge_stone.cu");
    CHECK(deps[1] == "/usr/include/stdc-predef.h");
    CHECK(deps[2] == "/tmp/dir with space/a b.h");
    CHECK(deps[3] == "/tmp/we#ird$dir/x.h");

    // gcc's style: the target with its colon attached, several names on a line, CRLF, a phony rule
    // per header (-MP), a target with a space (nvcc does not escape it), "$$" and "\#".
    const std::string gcc_style = "/work dir/submission.o: a.cu b.h \\\r\n c\\#1.h d$$.h\r\nb.h:\r\n\r\nc\\#1.h:\n";
    const auto more = parse_make_dependencies(gcc_style);
    REQUIRE(more.size() == 4);
    CHECK(more[0] == "a.cu");
    CHECK(more[1] == "b.h");
    CHECK(more[2] == "c#1.h");
    CHECK(more[3] == "d$.h");

    CHECK(parse_make_dependencies("").empty());
    CHECK(parse_make_dependencies("x.o:").empty());
    CHECK(parse_make_dependencies("x.o: \\\n").empty());
}

TEST_CASE("headers name their library, whatever the source called it")
{
    CHECK(library_of_header("cub/cub.cuh") == "CUB");
    CHECK(library_of_header("cccl/cub/device/device_scan.cuh") == "CUB");
    CHECK(library_of_header("cccl/thrust/scan.h") == "Thrust");
    CHECK(library_of_header("thrust/device_vector.h") == "Thrust");
    CHECK(library_of_header("cublas_v2.h") == "cuBLAS");
    CHECK(library_of_header("cublasLt.h") == "cuBLAS");
    CHECK(library_of_header("cudnn.h") == "cuDNN");
    CHECK(library_of_header("cufft.h") == "cuFFT");
    CHECK(library_of_header("curand_kernel.h") == "cuRAND");
    CHECK(library_of_header("cusparse.h") == "cuSPARSE");
    CHECK(library_of_header("cusolverDn.h") == "cuSOLVER");
    CHECK(library_of_header("nvrtc.h") == "NVRTC");
    CHECK(library_of_header("cccl/cuda/std/numeric") == "cuda::std algorithms");
    CHECK(library_of_header("cccl/cuda/std/__numeric/reduce.h") == "cuda::std algorithms");
    // What CUDA's own headers pull in by themselves is no library.
    CHECK(library_of_header("cccl/cuda/std/__algorithm/iter_swap.h").empty());
    CHECK(library_of_header("cccl/cuda/std/__limits/numeric_limits.h").empty());
    CHECK(library_of_header("cuda_runtime.h").empty());
    CHECK(library_of_header("crt/host_config.h").empty());
    CHECK(library_of_header("cooperative_groups.h").empty());
    CHECK(library_of_header("c++/12/numeric").empty());
}

TEST_CASE("dependencies: the source, the toolchain's and the system's headers; anything else is named")
{
    const fs::path dir = fs::temp_directory_path() / ("grader_test_deps_" + std::to_string(getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir / "cuda" / "include" / "cccl" / "cub");
    fs::create_directories(dir / "elsewhere");
    std::ofstream(dir / "elsewhere" / "secret.cu") << "//";
    fs::create_symlink(dir / "elsewhere" / "secret.cu", dir / "cuda" / "include" / "innocent.h");
    const std::string include = fs::canonical(dir / "cuda" / "include").string();
    const std::vector<std::string> roots = {include, "/usr/include"};

    const DependencyCheck clean = check_dependencies(
        {"/submission/x.cu", include + "/cuda_runtime.h", "/usr/include/stdio.h", include + "/crt/host_config.h"},
        "/submission/x.cu", roots);
    CHECK(clean.outside.empty());
    CHECK(clean.library_use.empty());

    const DependencyCheck libraries = check_dependencies({"/submission/x.cu", include + "/cccl/thrust/scan.h",
                                                          include + "/cccl/cub/cub.cuh", include + "/cccl/thrust/x.h"},
                                                         "/submission/x.cu", roots);
    CHECK(libraries.outside.empty());
    CHECK(libraries.library_use == std::vector<std::string>{"Thrust", "CUB"});  // in the order first read

    // A path made of "..": judged by where it leads. A link inside a root: by its target.
    const DependencyCheck escaped =
        check_dependencies({"/submission/x.cu", include + "/../../elsewhere/secret.cu", include + "/innocent.h",
                            "/usr/include/../../etc/passwd", "relative.h"},
                           "/submission/x.cu", roots);
    const std::string secret = fs::canonical(dir / "elsewhere" / "secret.cu").string();
    CHECK(escaped.outside == std::vector<std::string>{secret, "/etc/passwd", "relative.h"});

    // Below a root means below it: not the root itself, not a sibling that shares its prefix, and
    // an empty root (a folder that could not be resolved) holds nothing.
    fs::create_directories(dir / "cuda" / "include-extra");
    std::ofstream(dir / "cuda" / "include-extra" / "x.h") << "//";
    const std::string sibling = fs::canonical(dir / "cuda" / "include-extra" / "x.h").string();
    const DependencyCheck edges =
        check_dependencies({"/submission/x.cu", include, sibling, "/etc/hostname"}, "/submission/x.cu",
                           {"", include, "/usr/include"});
    CHECK(edges.outside == std::vector<std::string>{include, sibling, "/etc/hostname"});
    fs::remove_all(dir);
}

TEST_CASE("header roots: the toolchain's include folders (targets too, real paths) and the system's")
{
    const fs::path dir = fs::temp_directory_path() / ("grader_test_roots_" + std::to_string(getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir / "cuda" / "include");
    fs::create_directories(dir / "cuda" / "targets" / "x86_64-linux" / "include");
    fs::create_directories(dir / "cuda" / "targets" / "no-headers");
    fs::create_symlink(dir / "cuda", dir / "cuda-link");
    const auto roots = header_roots((dir / "cuda-link").string());
    REQUIRE(roots.size() >= 2);
    CHECK(roots[0] == fs::canonical(dir / "cuda" / "include").string());
    CHECK(roots[1] == fs::canonical(dir / "cuda" / "targets" / "x86_64-linux" / "include").string());
    if (fs::is_directory("/usr/include")) CHECK(std::find(roots.begin(), roots.end(), "/usr/include") != roots.end());
    // No toolchain: the system's alone.
    CHECK(header_roots("").size() == roots.size() - 2);
    fs::remove_all(dir);
}
