// Libraries named in a source's text or a runner's bytes (grading/src/build/source_scan.cpp).
#include <doctest/doctest.h>

#include "grading/build.hpp"

using namespace grading;

TEST_CASE("library detection reads code, not comments")
{
    CHECK(detect_library_use("#include <cub/cub.cuh>\n").at(0) == "CUB");
    CHECK(detect_library_use("void f(){ thrust::inclusive_scan(a, b, c); }").at(0) == "Thrust");
    CHECK(detect_library_use("cublasDdot(h, n, x, 1, y, 1, &r);").at(0) == "cuBLAS");
    CHECK(detect_library_use("// do not use cub::DeviceScan here\n/* thrust:: */ int x;").empty());
    CHECK(detect_library_use("const char* s = \"cub::\";").empty());
    CHECK(detect_library_use("#include <cuda_runtime.h>\n#include <cstdio>\n__global__ void k(){}").empty());
    CHECK(detect_library_use("#include \"/opt/grader/reference/scan_kogge_stone.cu\"\n").size() == 1);
    CHECK(detect_library_use("#include \"../../reference/x.cu\"\n").size() == 1);
    // An unterminated comment or string ends the scan, not the program.
    CHECK(detect_library_use("/* cub::").empty());
    CHECK(detect_library_use("\"thrust::\\").empty());
}

TEST_CASE("library detection in the linked runner, whatever the source looked like")
{
    CHECK(detect_library_symbols(std::string("\x7f"
                                             "ELF ... _ZN3cub18CUB_300000_SM_9006detail ..."))
              .at(0) == "CUB");
    CHECK(detect_library_symbols("... _ZN6thrust20THRUST_300000_SM_900 ...").at(0) == "Thrust");
    CHECK(detect_library_symbols("_Z16scan_kogge_stonePKfPfi _ZN7harness6runner").empty());
}
