// The technique, from the compiled kernel (grading/src/build/technique.cpp):
//   - what PTX shows each technique (hand-written PTX), the launch calls, cuobjdump's resource
//     usage (listings in tests/unit/build/cuobjdump/, read where cuobjdump is absent);
//   - what is expected: the family's list, confirmed by the reference's PTX; "not checked" when
//     no PTX was kept; the rubric's "technique" and what it costs; results.json against the schema;
//   - with the real nvcc where it is installed (no GPU: nothing is linked or run), five
//     technique-violating files, each with its expected technique table (the references, stubs
//     and buggy kernels are test_build_honest_set's).
#include <doctest/doctest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "grading/build.hpp"
#include "grading/formats.hpp"
#include "grading/json_schema.hpp"
#include "grading/report.hpp"
#include "grading/rubric.hpp"
#include "grading/technique.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using namespace grading;
using harness::Technique;

namespace {

const fs::path listings = GRADER_CUOBJDUMP_LISTINGS;  // tests/unit/grading/build/cuobjdump

using test_support::file_text;

// A kernel's PTX around `body`, as nvcc writes it.
std::string ptx_kernel(const std::string& name, const std::string& body)
{
    return ".version 8.8\n.target sm_90\n.address_size 64\n\n// .globl\t" + name + "\n.visible .entry " + name +
           "(\n\t.param .u64 " + name + "_param_0\n)\n{\n\t.reg .f32 %f<4>;\n" + body + "\tret;\n\n}\n";
}

std::vector<std::string> missing_names(const TechniqueReport& r)
{
    std::vector<std::string> names;
    for (const auto t : r.missing()) names.emplace_back(harness::to_text(t));
    return names;
}

const TechniqueCheck& check_of(const TechniqueReport& r, Technique t)
{
    const TechniqueCheck* c = r.check(t);
    REQUIRE(c != nullptr);
    return *c;
}

}  // namespace

TEST_CASE("PTX: the instructions that show each technique, and those that do not")
{
    const PtxTechnique conv = read_ptx_technique(ptx_kernel("_Z4convPf",
                                                            "\tld.const.f32 \t%f1, [c_mask];\n"
                                                            "\tst.shared.f32 \t[%r1], %f1;\n"
                                                            "\tbar.sync \t0;\n"
                                                            "\tld.shared.v4.f32 \t{%f1, %f2, %f3, %f4}, [%r2];\n"));
    CHECK(conv.entries == std::vector<std::string>{"_Z4convPf"});
    CHECK(conv.of(Technique::reads_constant_memory) == "ld.const.f32");
    CHECK(conv.of(Technique::uses_shared_memory) == "st.shared.f32");
    CHECK(conv.of(Technique::synchronizes_block) == "bar.sync");
    CHECK(conv.of(Technique::adds_in_double).empty());
    CHECK(conv.of(Technique::launches_kernel).empty());  // the host code's, never the PTX's

    // A reduction: volatile shared loads, a predicated barrier.sync, add.rn.f64; __syncwarp is no
    // block barrier, a float add no double add, a constant in a comment no constant load.
    const PtxTechnique reduce = read_ptx_technique(ptx_kernel("_Z6reducePKd",
                                                              "\t// ld.const.f32 in a comment\n"
                                                              "\tadd.f32 \t%f1, %f2, %f3;\n"
                                                              "\tbar.warp.sync \t-1;\n"
                                                              "\tld.volatile.shared.f64 \t%fd1, [%rd1];\n"
                                                              "\t@%p1 barrier.sync \t0;\n"
                                                              "\tadd.rn.f64 \t%fd2, %fd1, %fd1;\n"));
    CHECK(reduce.of(Technique::reads_constant_memory).empty());
    CHECK(reduce.of(Technique::uses_shared_memory) == "ld.volatile.shared.f64");
    CHECK(reduce.of(Technique::synchronizes_block) == "barrier.sync");
    CHECK(reduce.of(Technique::adds_in_double) == "add.rn.f64");

    // Only a __syncwarp and a float add: neither barrier nor double add.
    const PtxTechnique warp = read_ptx_technique(ptx_kernel("_Z1kv", "\tbar.warp.sync \t-1;\n\tadd.f32 \t%f1, %f2, %f3;\n"));
    CHECK(warp.of(Technique::synchronizes_block).empty());
    CHECK(warp.of(Technique::adds_in_double).empty());
    // atomicAdd on a double adds in double.
    CHECK(read_ptx_technique(ptx_kernel("_Z1kv", "\tatom.global.add.f64 \t%fd1, [%rd1], %fd2;\n"))
              .of(Technique::adds_in_double) == "atom.global.add.f64");
    // Kernels: every .entry, none from a .func or a comment.
    const std::string two = ptx_kernel("_Z1av", "") + ".func _Z6helperv()\n{\n\tret;\n}\n// .entry _Z7commentv(\n" +
                            ".entry _Z1bv(\n)\n{\n\tret;\n}\n";
    CHECK(read_ptx_technique(two).entries == std::vector<std::string>{"_Z1av", "_Z1bv"});
    CHECK(read_ptx_technique(".version 8.8\n.target sm_90\n.address_size 64\n").entries.empty());
}

TEST_CASE("the host code's launch: <<<>>> and the launch calls, not the kernels' stubs")
{
    CHECK(kernel_launch_call({"cudaMemcpy", "__cudaPushCallConfiguration", "__cudaLaunchKernel"}) ==
          "__cudaPushCallConfiguration (<<<>>>)");
    CHECK(kernel_launch_call({"cudaLaunchCooperativeKernel"}) == "cudaLaunchCooperativeKernel");
    CHECK(kernel_launch_call({"cudaLaunchKernelExC@libcudart.so.12"}) == "cudaLaunchKernelEx");
    // CUDA 13's stubs, compiled for every kernel, launched or not: no launch.
    CHECK(kernel_launch_call({"__cudaLaunchKernel", "__cudaPopCallConfiguration", "cudaMemcpy"}).empty());
    CHECK(kernel_launch_call({}).empty());
}

TEST_CASE("cuobjdump --dump-resource-usage: kernels, registers, shared, local memory and stack (recorded listings)")
{
    const auto conv = parse_resource_usage(file_text(listings / "resource_usage_conv1d.txt"));
    REQUIRE(conv.size() == 3);  // two kernels and a device function: the build keeps the PTX's kernels
    CHECK(conv[0].name == "_ZN12_GLOBAL__N_119conv1d_tiled_kernelILi7EEEvPKfPfxb");
    CHECK(conv[0].arch == "sm_90");
    CHECK(conv[0].registers == 40);
    CHECK(conv[0].shared_bytes == 8320);
    CHECK(conv[0].local_bytes == 0);
    CHECK(conv[1].stack_bytes == 16);
    CHECK(conv[2].registers == 32);

    // Recorded on an H100 (CUDA 13.0, 2026-11-26): cuobjdump --dump-resource-usage of the
    // reference conv1d_tiled.cu compiled with nvcc -c -O3 -arch=sm_90.
    const auto recorded = parse_resource_usage(file_text(listings / "recorded_conv1d_tiled_sm90.txt"));
    REQUIRE_FALSE(recorded.empty());
    CHECK(recorded[0].arch == "sm_90");
    CHECK(recorded[0].registers == 28);
    CHECK(recorded[0].shared_bytes == 9344);
    CHECK(recorded[0].local_bytes == 0);

    const auto spills = parse_resource_usage(file_text(listings / "resource_usage_spills.txt"));
    REQUIRE(spills.size() == 2);  // one per architecture's ELF
    CHECK(spills[0].arch == "sm_90");
    CHECK(spills[0].registers == 255);
    CHECK(spills[0].local_bytes == 1024);
    CHECK(spills[0].stack_bytes == 1024);
    CHECK(spills[0].shared_bytes == 4096);
    CHECK(spills[1].arch == "sm_80");
    CHECK(spills[1].registers == 128);

    CHECK(parse_resource_usage("").empty());
    CHECK(parse_resource_usage("cuobjdump info    : File 'x.o' does not contain device code\n").empty());
    // A PTX section's lines are never a kernel's.
    CHECK(parse_resource_usage("Fatbin ptx code:\n================\n Function _Z1kv:\n  REG:8 SHARED:0\n").empty());
}

TEST_CASE("what is expected: the family's techniques, where the reference's PTX shows them too")
{
    const std::string launch = "__cudaPushCallConfiguration";
    const std::string tiled = ptx_kernel("_Z4convPf", "\tld.const.f32 \t%f1, [m];\n\tst.shared.f32 \t[%r1], %f1;\n"
                                                      "\tbar.sync \t0;\n\tld.shared.f32 \t%f2, [%r1];\n");
    const std::string global_mask = ptx_kernel("_Z4convPf", "\tld.global.f32 \t%f1, [%rd1];\n\tst.shared.f32 \t[%r1], %f1;\n"
                                                            "\tbar.sync \t0;\n");
    SUBCASE("a convolution reading its mask from global memory")
    {
        const TechniqueReport r = check_technique("conv1d_tiled", global_mask, tiled, {launch});
        CHECK(r.kernels == 1);
        CHECK(missing_names(r) == std::vector<std::string>{"reads_constant_memory"});
        const TechniqueCheck& c = check_of(r, Technique::reads_constant_memory);
        CHECK(c.expected);
        CHECK(c.found == false);
        CHECK(c.basis.find("the reference's PTX shows it (ld.const.f32)") != std::string::npos);
        CHECK_FALSE(check_of(r, Technique::adds_in_double).expected);  // not a convolution's
        CHECK(r.missing_required(false).empty());                       // reported, not required by default
        CHECK(r.missing_required(true) == std::vector<Technique>{Technique::reads_constant_memory});
    }
    SUBCASE("a technique the reference itself does not show on this architecture is reported only")
    {
        const TechniqueReport r = check_technique("conv1d_tiled", global_mask, global_mask, {launch});
        CHECK_FALSE(check_of(r, Technique::reads_constant_memory).expected);
        CHECK(check_of(r, Technique::reads_constant_memory).found == false);
        CHECK(r.missing().empty());
    }
    SUBCASE("no reference PTX here (the handout): the family's list is expected as it is")
    {
        const TechniqueReport r = check_technique("conv1d_tiled", global_mask, std::nullopt, {launch});
        CHECK(check_of(r, Technique::reads_constant_memory).expected);
        CHECK(missing_names(r) == std::vector<std::string>{"reads_constant_memory"});
    }
    SUBCASE("no PTX kept: not checked, never a verdict")
    {
        const TechniqueReport r = check_technique("conv1d_tiled", std::nullopt, tiled, {launch});
        CHECK_FALSE(r.kernels.has_value());
        for (const auto t : {Technique::reads_constant_memory, Technique::uses_shared_memory,
                             Technique::synchronizes_block, Technique::adds_in_double}) {
            CHECK_FALSE(check_of(r, t).found.has_value());
            CHECK(check_of(r, t).not_checked == "the compiler kept no PTX of the file");
        }
        CHECK(check_of(r, Technique::launches_kernel).found == true);
        CHECK(r.missing().empty());
    }
    SUBCASE("a launcher that launches nothing, or calls a launch but defines no kernel")
    {
        const TechniqueReport none = check_technique("scan_kogge_stone", tiled, tiled, {"cudaMemcpy"});
        CHECK(missing_names(none) == std::vector<std::string>{"launches_kernel"});
        CHECK(none.missing_required(false) == std::vector<Technique>{Technique::launches_kernel});
        const TechniqueReport empty =
            check_technique("scan_kogge_stone", std::string(".version 8.8\n.target sm_90\n"), tiled, {launch});
        CHECK(empty.kernels == 0);
        CHECK(check_of(empty, Technique::launches_kernel).found == false);
        CHECK(check_of(empty, Technique::launches_kernel).evidence.find("defines no kernel") != std::string::npos);
    }
    SUBCASE("each family's list")
    {
        const TechniqueReport scan = check_technique("scan_brent_kung", tiled, tiled, {launch});
        CHECK(check_of(scan, Technique::uses_shared_memory).expected);
        CHECK(check_of(scan, Technique::synchronizes_block).expected);
        CHECK_FALSE(check_of(scan, Technique::reads_constant_memory).expected);
        CHECK_FALSE(check_of(scan, Technique::adds_in_double).expected);
        const std::string reduction = ptx_kernel("_Z1rv", "\tst.shared.f64 \t[%r1], %fd1;\n\tbar.sync \t0;\n"
                                                          "\tadd.f64 \t%fd1, %fd1, %fd2;\n");
        const TechniqueReport r = check_technique("reduce_unroll_last_warp", reduction, reduction, {launch});
        CHECK(check_of(r, Technique::adds_in_double).expected);
        CHECK(r.missing().empty());
        CHECK(r.checks.size() == harness::all_techniques.size());
    }
}

TEST_CASE("computes_on_gpu: what the timed calls moved over PCIe, held to the reference's calls beside them")
{
    const std::string kernel = ptx_kernel("_Z1kv", "\tst.shared.f32 \t[%r1], %f1;\n\tbar.sync \t0;\n");
    auto fresh = [&] { return check_technique("scan_kogge_stone", kernel, kernel, {"__cudaPushCallConfiguration"}); };
    const double data = 512e6;  // n = 2^26 floats in and out
    SUBCASE("before any timing: expected, required, not checked")
    {
        const TechniqueReport r = fresh();
        const TechniqueCheck& c = check_of(r, Technique::computes_on_gpu);
        CHECK(c.expected);
        CHECK_FALSE(c.found.has_value());
        CHECK(c.not_checked.find("speed case") != std::string::npos);
        CHECK(r.required(Technique::computes_on_gpu, false));
        CHECK(r.missing().empty());
    }
    SUBCASE("a kernel that computes: a few kilobytes a call (launches), the reference's alike: found")
    {
        TechniqueReport r = fresh();
        record_host_link(r, {{"n=67108864/int", data, 3.1e3, 2.7e3}});
        CHECK(check_of(r, Technique::computes_on_gpu).found == true);
        CHECK(check_of(r, Technique::computes_on_gpu).evidence.find("n=67108864/int") != std::string::npos);
        CHECK(r.missing().empty());
    }
    SUBCASE("the input copied to the host and the result back, on every call: missing, and it costs the points")
    {
        TechniqueReport r = fresh();
        record_host_link(r, {{"n=67108864/int", data, 545e6, 2.7e3}});
        CHECK(check_of(r, Technique::computes_on_gpu).found == false);
        CHECK(check_of(r, Technique::computes_on_gpu).evidence.find("545 MB") != std::string::npos);
        CHECK(missing_names(r) == std::vector<std::string>{"computes_on_gpu"});
        CHECK(r.missing_required(false) == std::vector<Technique>{Technique::computes_on_gpu});
        CHECK(missing_sentence(Technique::computes_on_gpu).find("host") != std::string::npos);
    }
    SUBCASE("15% of the data a call is enough to tell; block sums read back by the host are not")
    {
        TechniqueReport half = fresh(), sums = fresh();
        record_host_link(half, {{"n=67108864/int", data, 0.5 * data + 1e3, 1e3}});
        record_host_link(sums, {{"n=67108864/int", data, 0.01 * data, 1e3}});
        CHECK(check_of(half, Technique::computes_on_gpu).found == false);
        CHECK(check_of(sums, Technique::computes_on_gpu).found == true);
        // A reduction's input packed to int16 on the GPU and summed on the host (red team 14,
        // packs_input_for_host_sum): a quarter of the 1074 MB at n = 2^27, found before.
        TechniqueReport packed = fresh(), bits11 = fresh();
        const double reduction = 8.0 * 134217728 + 8;
        record_host_link(packed, {{"n=134217728/int", reduction, 0.25 * reduction, 40e3}});
        record_host_link(bits11, {{"n=134217728/int", reduction, 11.0 / 64 * reduction, 40e3}});
        CHECK(check_of(packed, Technique::computes_on_gpu).found == false);
        CHECK(check_of(bits11, Technique::computes_on_gpu).found == false);
    }
    SUBCASE("traffic of the machine: held to the reference's beside it; a neighbour never costs points")
    {
        // A neighbour copying 100 MB a call through both sides' turns: the host's traffic still shows.
        TechniqueReport busy = fresh();
        record_host_link(busy, {{"n=67108864/int", data, 645e6, 100e6}});
        CHECK(check_of(busy, Technique::computes_on_gpu).found == false);
        // An honest launcher beside a neighbour copying 400 MB a call: found, whatever the control.
        TechniqueReport honest = fresh();
        record_host_link(honest, {{"n=67108864/int", data, 400e6 * 0.1, 400e6}});
        CHECK(check_of(honest, Technique::computes_on_gpu).found == true);
        // The submission's calls moved much, but so did the reference's (copies left running into
        // them, or a neighbour): not decided. No counters, or much traffic and no reference: not either.
        for (const HostLinkTraffic& t : {HostLinkTraffic{"n=67108864/int", data, 545e6, 500e6},
                                         HostLinkTraffic{"n=67108864/int", data, std::nullopt, std::nullopt},
                                         HostLinkTraffic{"n=67108864/int", data, 545e6, std::nullopt}}) {
            TechniqueReport r = fresh();
            record_host_link(r, {t});
            CHECK_FALSE(check_of(r, Technique::computes_on_gpu).found.has_value());
            CHECK_FALSE(check_of(r, Technique::computes_on_gpu).not_checked.empty());
            CHECK(r.missing().empty());
        }
        // A slow honest launcher (17.5 ms a call, the reference 0.6 ms) beside a neighbour copying
        // 50 GB/s (red team 14, pumps_pcie_beside_neighbour): its long windows catch 875 MB a call of
        // the neighbour's traffic, the reference's short ones 30 MB. The idle windows as long as its
        // own, its runner stopped, catch the neighbour's 845 MB too: the machine's, not decided.
        HostLinkTraffic slow{"n=67108864/int", data, 875e6, 30e6};
        slow.student_ms_per_call = 17.5;
        slow.reference_ms_per_call = 0.6;
        slow.idle_per_call = 845e6;
        TechniqueReport slow_report = fresh();
        record_host_link(slow_report, {slow});
        CHECK_FALSE(check_of(slow_report, Technique::computes_on_gpu).found.has_value());
        CHECK(check_of(slow_report, Technique::computes_on_gpu).not_checked.find("17.5 ms") != std::string::npos);
        CHECK(slow_report.missing().empty());
        // The same windows without idle ones to compare (not measured): the neighbour would cost its points.
        slow.idle_per_call.reset();
        TechniqueReport unscaled = fresh();
        record_host_link(unscaled, {slow});
        CHECK(check_of(unscaled, Technique::computes_on_gpu).found == false);
        // A slow launcher on the host beside a quiet machine: its own copies still show, however
        // long its windows; the idle windows beside them moved what the machine moves.
        HostLinkTraffic host{"n=67108864/int", data, 545e6, 3e4};
        host.student_ms_per_call = 20;
        host.reference_ms_per_call = 0.6;
        host.idle_per_call = 2e4;
        TechniqueReport host_report = fresh();
        record_host_link(host_report, {host});
        CHECK(check_of(host_report, Technique::computes_on_gpu).found == false);
        // Red team 15 (computes_on_host_slow_timed_calls, packs_input_slows_timed_calls): a host
        // computation whose calls take 3.2 s. The reference's 0.025 MB a call scaled by 3200 / 0.17
        // ms, as the control was before, is 470 MB and explained its 91 MB; the machine's traffic
        // over idle windows of 3.2 s on a quiet machine is small: found.
        HostLinkTraffic stalling{"n=10000000/int", 8e7, 91e6, 2.5e4};
        stalling.student_ms_per_call = 3200;
        stalling.reference_ms_per_call = 0.17;
        stalling.idle_per_call = 1.5e6;
        TechniqueReport stalling_report = fresh();
        record_host_link(stalling_report, {stalling});
        CHECK(check_of(stalling_report, Technique::computes_on_gpu).found == false);
        CHECK(check_of(stalling_report, Technique::computes_on_gpu).evidence.find("idle windows") != std::string::npos);
        // A faster submission than the reference: nothing idle is measured, the control is the reference's.
        HostLinkTraffic fast{"n=67108864/int", data, 300e6, 250e6};
        fast.student_ms_per_call = 0.1;
        fast.reference_ms_per_call = 0.6;
        TechniqueReport fast_report = fresh();
        record_host_link(fast_report, {fast});
        CHECK_FALSE(check_of(fast_report, Technique::computes_on_gpu).found.has_value());
        // A case with nothing to move tells nothing (no division, no verdict from 0 >= 0).
        TechniqueReport empty = fresh();
        record_host_link(empty, {{"n=0", 0, 0, 0}});
        CHECK_FALSE(check_of(empty, Technique::computes_on_gpu).found.has_value());
        // Little traffic and no reference beside it: found (nothing to explain away).
        TechniqueReport alone = fresh();
        record_host_link(alone, {{"n=67108864/int", data, 3e3, std::nullopt}});
        CHECK(check_of(alone, Technique::computes_on_gpu).found == true);
    }
    SUBCASE("traffic the submission withheld: not found, whatever was counted")
    {
        // Its runner held the GPU's memory so the timing could not allocate (red team 14,
        // hogs_gpu_memory_to_skip_timing), or a case run again for this check did not pass or did
        // not finish its timing: nothing shows the GPU computing, and the submission chose that.
        HostLinkTraffic held{"n=67108864/int", data, std::nullopt, std::nullopt};
        held.withheld = "the submission's runner held 74.0 GiB of the GPU's memory";
        TechniqueReport r = fresh();
        record_host_link(r, {held});
        CHECK(check_of(r, Technique::computes_on_gpu).found == false);
        CHECK(check_of(r, Technique::computes_on_gpu).evidence.find("74.0 GiB") != std::string::npos);
        CHECK(check_of(r, Technique::computes_on_gpu).not_checked.empty());
        // Before or after a case whose calls were seen on the GPU: still not found.
        HostLinkTraffic on_gpu{"n=10000000/int", 8e7, 3e4, 3e4};
        TechniqueReport after = fresh();
        record_host_link(after, {on_gpu, held});
        CHECK(check_of(after, Technique::computes_on_gpu).found == false);
        TechniqueReport before = fresh();
        record_host_link(before, {held, on_gpu});
        CHECK(check_of(before, Technique::computes_on_gpu).found == false);
        CHECK(before.missing().size() == 1);
    }
    SUBCASE("a hidden case's evidence names no size, traffic or time: a student's view shows it")
    {
        // check_host_link_again may run a hidden case (of the rubric's, its size secret) again; a
        // student's view keeps the technique's evidence, and the bytes a launcher moves are its own
        // choice, a channel for what it read from the hidden input.
        const double secret = 123456789;  // the hidden case's data, 123.46 MB
        auto hidden = [&](std::optional<double> student, std::optional<double> reference) {
            HostLinkTraffic t{"a hidden case", secret, student, reference};
            t.student_ms_per_call = 4321.5, t.reference_ms_per_call = 0.17, t.idle_per_call = 1.5e6;
            t.hidden = true;
            return t;
        };
        for (const HostLinkTraffic& t : {hidden(31415.0, 2.5e4), hidden(98765432.0, 2.5e4),
                                         hidden(20e6, 5e6), hidden(98765432.0, std::nullopt)}) {
            TechniqueReport r = fresh();
            record_host_link(r, {t});
            const TechniqueCheck& c = check_of(r, Technique::computes_on_gpu);
            const std::string said = c.evidence + " " + c.not_checked;
            CAPTURE(said);
            CHECK(said.find("a hidden case") != std::string::npos);
            for (const char* number : {"123", "0.03", "98.77", "99", "17", "4321", "0.17", "1.50", "0.02", "20", "5.00"})
                CHECK(said.find(number) == std::string::npos);
        }
        // The verdicts stay those of a visible case's.
        TechniqueReport on_gpu = fresh(), on_host = fresh();
        record_host_link(on_gpu, {hidden(31415.0, 2.5e4)});
        record_host_link(on_host, {hidden(98765432.0, 2.5e4)});
        CHECK(check_of(on_gpu, Technique::computes_on_gpu).found == true);
        CHECK(check_of(on_host, Technique::computes_on_gpu).found == false);
    }
    SUBCASE("two timed cases: one on the host is enough")
    {
        TechniqueReport r = fresh();
        record_host_link(r, {{"a", data, 1e3, 1e3}, {"b", data, data, 1e3}});
        CHECK(check_of(r, Technique::computes_on_gpu).found == false);
    }
}

TEST_CASE("the rubric's technique: a kernel launch required by default, every expected technique with \"require\"")
{
    CHECK(Rubric{}.technique == "report");
    CHECK(Rubric::from_json({{"technique", "require"}}).technique == "require");
    CHECK_THROWS_AS(Rubric::from_json({{"technique", "sometimes"}}), RubricError);

    ExerciseResult e;
    e.name = "conv1d_tiled";
    e.status = ExerciseStatus::graded;
    for (int k = 0; k < 4; ++k) {
        CaseResult c;
        c.status = CaseStatus::pass;
        e.cases.push_back(c);
    }
    const std::string tiled = ptx_kernel("_Z4convPf", "\tld.const.f32 \t%f1, [m];\n\tst.shared.f32 \t[%r1], %f1;\n"
                                                      "\tbar.sync \t0;\n");
    const std::string global_mask = ptx_kernel("_Z4convPf", "\tst.shared.f32 \t[%r1], %f1;\n\tbar.sync \t0;\n");
    Rubric report, require;
    require.technique = "require";

    e.technique = check_technique("conv1d_tiled", global_mask, tiled, {"__cudaPushCallConfiguration"});
    score_exercise(report, e);
    CHECK(e.correctness_points == doctest::Approx(8));  // reported only
    score_exercise(require, e);
    CHECK(e.correctness_points == 0);

    e.technique = check_technique("conv1d_tiled", tiled, tiled, {"cudaMemcpy"});  // computed on the host
    score_exercise(report, e);
    CHECK(e.correctness_points == 0);
    CHECK(e.points == 0);

    e.technique.reset();  // not built, or a grader without the check: nothing taken
    score_exercise(report, e);
    CHECK(e.correctness_points == doctest::Approx(8));
}

TEST_CASE("results.json's technique object: valid against the schema, every technique reported")
{
    GradeReport report;
    report.started_at = "2026-11-26T22:00:00Z";
    ExerciseResult e;
    e.name = "conv1d_tiled";
    e.status = ExerciseStatus::graded;
    e.technique = check_technique("conv1d_tiled", ptx_kernel("_Z4convPf", "\tst.shared.f32 \t[%r1], %f1;\n"),
                                  std::nullopt, {"cudaMemcpy"});
    e.technique->require_all = true;
    e.technique->resources = parse_resource_usage(file_text(listings / "resource_usage_conv1d.txt"));
    report.exercises.push_back(e);
    ExerciseResult unbuilt;
    unbuilt.name = "conv2d_tiled";
    report.exercises.push_back(unbuilt);

    const nlohmann::json j = to_json(report);
    const auto errors = validate_json_schema(test_support::results_schema(), j);
    CHECK(errors.empty());
    if (!errors.empty()) MESSAGE(errors.front().instance_path << ": " << errors.front().message);
    const nlohmann::json& t = j.at("exercises").at(0).at("technique");
    CHECK(t.at("mode") == "require");
    CHECK(t.at("kernels") == 1);
    CHECK(t.at("missing") == nlohmann::json::array({"launches_kernel", "reads_constant_memory", "synchronizes_block"}));
    CHECK(t.at("checks").at("reads_constant_memory").at("required") == true);
    CHECK(t.at("checks").at("uses_shared_memory").at("found") == true);
    CHECK(t.at("checks").at("uses_shared_memory").at("evidence") == "st.shared.f32");
    CHECK(t.at("checks").at("adds_in_double").at("expected") == false);
    CHECK(t.at("resources").at("kernels").size() == 3);
    CHECK(j.at("exercises").at(1).at("technique").is_null());

    std::ostringstream table;
    print_summary_table(report, table);
    CHECK(table.str().find("technique: conv1d_tiled: never launches a kernel; never reads the mask from __constant__ "
                           "memory; never synchronizes the block with __syncthreads() (no points)") != std::string::npos);
}

TEST_CASE("the feedback: a sentence a student understands, in Gradescope's and the Markdown summary's words")
{
    GradeReport report;
    ExerciseResult e;
    e.name = "conv1d_tiled";
    e.status = ExerciseStatus::graded;
    CaseResult c;
    c.label = "n=1/mw=3/int";
    c.status = CaseStatus::pass;
    e.cases.push_back(c);
    const std::string tiled = ptx_kernel("_Z4convPf", "\tld.const.f32 \t%f1, [m];\n\tst.shared.f32 \t[%r1], %f1;\n"
                                                      "\tbar.sync \t0;\n");
    e.technique = check_technique("conv1d_tiled", ptx_kernel("_Z4convPf", "\tst.shared.f32 \t[%r1], %f1;\n\tbar.sync \t0;\n"),
                                  tiled, {"__cudaPushCallConfiguration"});
    report.exercises.push_back(e);
    const std::string gradescope = to_gradescope(report, GradescopeSettings{}).dump();
    CHECK(gradescope.find("Your kernel never reads the mask from \\\\_\\\\_constant\\\\_\\\\_ memory") != std::string::npos);
    CHECK(gradescope.find("(no points until it does)") == std::string::npos);  // reported, not required
    const std::string markdown = to_markdown_summary(report);
    CHECK(markdown.find(": technique\n") != std::string::npos);
    CHECK(markdown.find("never reads the mask from") != std::string::npos);

    // Computed on the host: required by default, and said so.
    report.exercises[0].technique = check_technique("conv1d_tiled", tiled, tiled, {"cudaMemcpy"});
    const std::string host = to_gradescope(report, GradescopeSettings{}).dump();
    CHECK(host.find("Your launcher never launches a kernel") != std::string::npos);
    CHECK(host.find("(no points until it does)") != std::string::npos);
    // Nothing missing: nothing said.
    report.exercises[0].technique = check_technique("conv1d_tiled", tiled, tiled, {"__cudaPushCallConfiguration"});
    CHECK(to_gradescope(report, GradescopeSettings{}).dump().find("compiled code shows") == std::string::npos);
    CHECK(to_markdown_summary(report).find("###") == std::string::npos);
}

// ---- With the real nvcc: files that break the technique, each with its table ----

namespace {

struct Violation {
    const char* name;     // what it does
    const char* exercise;
    const char* source;
    std::vector<std::string> missing;
    int kernels;
};

const std::vector<Violation>& violations()
{
    static const std::vector<Violation> list = {
        {"a convolution reading its mask from global memory", "conv1d_tiled", R"(
#include <cuda_runtime.h>
constexpr int TILE = 256, MAX_R = 15;
__global__ void conv(const float* in, const float* mask, float* out, int n, int width)
{
    __shared__ float tile[TILE + 2 * MAX_R];
    const int r = width / 2, start = blockIdx.x * TILE;
    for (int k = threadIdx.x; k < TILE + 2 * r; k += blockDim.x) {
        const int g = start - r + k;
        tile[k] = (g >= 0 && g < n) ? in[g] : 0.0f;
    }
    __syncthreads();
    const int i = start + threadIdx.x;
    if (i >= n) return;
    float sum = 0;
    for (int j = 0; j < width; ++j) sum += mask[j] * tile[threadIdx.x + j];
    out[i] = sum;
}
void conv1d_tiled(const float* in, const float* mask, float* out, int n, int mask_width)
{
    conv<<<(n + TILE - 1) / TILE, TILE>>>(in, mask, out, n, mask_width);
}
)",
         {"reads_constant_memory"}, 1},
        {"a reduction adding in float", "reduce_sequential_addressing", R"(
#include <cuda_runtime.h>
__global__ void reduce(const double* in, double* partial, int n)
{
    __shared__ float s[256];
    const int i = blockIdx.x * 256 + threadIdx.x;
    s[threadIdx.x] = i < n ? static_cast<float>(in[i]) : 0.0f;
    __syncthreads();
    for (int step = 128; step > 0; step /= 2) {
        if (threadIdx.x < step) s[threadIdx.x] += s[threadIdx.x + step];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
}
void reduce_sequential_addressing(const double* in, double* out, int n, double* scratch)
{
    const double* from = in;
    for (int count = n;;) {
        const int blocks = (count + 255) / 256;
        double* to = blocks == 1 ? out : (from == scratch ? scratch + n / 2 : scratch);
        reduce<<<blocks, 256>>>(from, to, count);
        if (blocks == 1) return;
        from = to;
        count = blocks;
    }
}
)",
         {"adds_in_double"}, 1},
        {"a scan without shared memory", "scan_kogge_stone", R"(
#include <cuda_runtime.h>
__global__ void scan(const float* in, float* out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float sum = 0;
    for (int k = i - i % 1024; k <= i; ++k) sum += in[k];
    out[i] = sum;
}
void scan_kogge_stone(const float* in, float* out, int n)
{
    scan<<<(n + 1023) / 1024, 1024>>>(in, out, n);
}
)",
         {"uses_shared_memory", "synchronizes_block"}, 1},
        {"a launcher that computes on the CPU", "scan_brent_kung", R"(
#include <cuda_runtime.h>
#include <vector>
void scan_brent_kung(const float* in, float* out, int n)
{
    std::vector<float> h(n);
    cudaMemcpy(h.data(), in, sizeof(float) * n, cudaMemcpyDeviceToHost);
    for (int i = 1; i < n; ++i)
        if (i % 2048 != 0) h[i] += h[i - 1];
    cudaMemcpy(out, h.data(), sizeof(float) * n, cudaMemcpyHostToDevice);
}
)",
         {"launches_kernel", "uses_shared_memory", "synchronizes_block"}, 0},
        {"a launcher that launches no kernel (a correct kernel, never launched)", "reduce_interleaved_divergent", R"(
#include <cuda_runtime.h>
__global__ void reduce_never_launched(const double* in, double* partial, int n)
{
    __shared__ double s[256];
    const unsigned t = threadIdx.x, i = blockIdx.x * 256 + t;
    s[t] = i < n ? in[i] : 0.0;
    __syncthreads();
    for (unsigned step = 1; step < 256; step *= 2) {
        if (t % (2 * step) == 0) s[t] += s[t + step];
        __syncthreads();
    }
    if (t == 0) partial[blockIdx.x] = s[0];
}
void reduce_interleaved_divergent(const double* in, double* out, int n, double* scratch)
{
    cudaMemset(out, 0, sizeof(double));
}
)",
         {"launches_kernel"}, 1},
    };
    return list;
}

}  // namespace

TEST_CASE("the real nvcc: each technique-violating file gets its technique table")
{
    Toolchain toolchain = default_toolchain(fs::read_symlink("/proc/self/exe").string());
    if (::access(toolchain.nvcc.c_str(), X_OK) != 0) {
        MESSAGE("skipped: no nvcc at " << toolchain.nvcc << " (the CUDA compiler CMake found): not tested here");
        return;
    }
    const fs::path dir = fs::temp_directory_path() / ("grader_test_technique_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    std::vector<std::pair<std::string, std::string>> work;
    for (std::size_t k = 0; k < violations().size(); ++k) {
        const fs::path sub = dir / std::to_string(k);
        fs::create_directories(sub / "work");
        const fs::path source = sub / (std::string(violations()[k].exercise) + ".cu");
        std::ofstream(source) << violations()[k].source;
        work.emplace_back(source.string(), (sub / "work" / "runner").string());
    }
    const auto results = check_sources(toolchain, work, 2, nullptr);
    for (std::size_t k = 0; k < violations().size(); ++k) {
        const Violation& v = violations()[k];
        const BuildResult& b = results[k];
        CAPTURE(v.name);
        INFO(b.failure << b.invalid << b.output);
        CHECK(b.ok);
        CHECK(b.technique.kernels == v.kernels);
        CHECK(missing_names(b.technique) == v.missing);
        // Every check of the code was made: the PTX was kept, the reference's read (computes_on_gpu
        // is the run's, not checked before the speed case is timed).
        for (const auto& c : b.technique.checks) {
            CAPTURE(harness::to_text(c.technique));
            if (c.technique == Technique::computes_on_gpu) {
                CHECK_FALSE(c.found.has_value());
                continue;
            }
            CHECK(c.found.has_value());
            if (c.technique != Technique::launches_kernel && c.expected)
                CHECK(c.basis.find("the reference's PTX shows it") != std::string::npos);
        }
    }
    fs::remove_all(dir);
}
