// Compiled code carried in a submission's object (grading/src/build/object_scan.cpp): ELF files
// (a GPU cubin has e_machine 190), fatbin and fatbin-wrapper magic, PTX text, loaders' names, a
// .nv_fatbin that is not the compile's own, high-entropy blobs, raw system call instructions; and
// objects that are no ELF at all, or lie about their own tables. Synthetic objects, random bytes,
// and objects compiled by the real nvcc.
#include <doctest/doctest.h>

#include <random>

#include "../../../../grading/src/build/elf.hpp"
#include "elf_writer.hpp"
#include "foreign_code_sources.hpp"
#include "grading/build.hpp"
#include "support/test_support.hpp"

using namespace grading;
using test_elf::Section;

namespace {

using test_support::contains;

using test_support::joined_lines;

// An object with one .rodata section holding `bytes` (and a .text beside it).
ObjectCheck with_rodata(const std::string& bytes, const std::string& own_fatbin = "", bool library = false)
{
    const std::string object =
        test_elf::object({{".text", 1, test_elf::alloc | test_elf::exec, std::string(16, '\x90')}, {".rodata", 1, test_elf::alloc, bytes}});
    return check_object(object, own_fatbin, library);
}

std::string random_bytes(std::size_t n, unsigned seed)
{
    std::mt19937 random(seed);
    std::string bytes(n, '\0');
    for (auto& c : bytes) c = static_cast<char>(random() & 0xff);
    return bytes;
}

}  // namespace

TEST_CASE("entropy: zero for one repeated byte, eight bits for every byte value once, text in between")
{
    CHECK(shannon_entropy("") == 0.0);
    CHECK(shannon_entropy(std::string(4096, 'a')) == 0.0);
    std::string all;
    for (int k = 0; k < 256; ++k) all += static_cast<char>(k);
    CHECK(shannon_entropy(all) == doctest::Approx(8.0));
    CHECK(shannon_entropy("ld.global.f32 %f1, [%rd1];\nadd.f32 %f2, %f1, %f1;\n") < 5.0);
}

TEST_CASE("synthetic: ELF files, cubins, fatbins, wrappers, PTX text and loaders' names in the data are refused")
{
    CHECK(with_rodata("plain text: results for n = %d\n").refused.empty());

    std::string cubin = "\x7f" "ELF\x02\x01\x01";
    cubin.resize(64, '\0');
    cubin[18] = static_cast<char>(190);  // EM_CUDA
    const ObjectCheck c = with_rodata("head" + cubin);
    REQUIRE(c.refused.size() == 1);
    CHECK(c.refused[0] == "holds a GPU cubin (an ELF file for EM_CUDA) in its data (section .rodata, offset 0x4): "
                          "compiled code this compile did not produce");
    std::string host_elf = cubin;
    host_elf[18] = 62;
    CHECK(contains(joined_lines(with_rodata(host_elf).refused), "an ELF file (e_machine 62)"));

    CHECK(contains(joined_lines(with_rodata(std::string("\x50\xed\x55\xba\x01\x00\x10\x00", 8)).refused), "holds a fatbin in"));
    CHECK(contains(joined_lines(with_rodata(std::string("\xb1\x43\x62\x46\x01\x00\x00\x00", 8)).refused),
                   "holds a fatbin wrapper in"));
    CHECK(contains(joined_lines(with_rodata(".version 8.0\n.target sm_90\n.address_size 64\n").refused),
                   "holds PTX text (\".target sm_\")"));
    CHECK(contains(joined_lines(with_rodata(std::string("x\0libnvrtc.so.13\0", 17)).refused),
                   "names \"libnvrtc.so.13\" in its data"));
    CHECK(contains(joined_lines(with_rodata(std::string("x\0cuModuleLoadData\0", 19)).refused), "names \"cuModuleLoadData\""));
    // A loader's name inside a longer message is no lookup; a file that reads a library's headers
    // (CUB opens the driver itself) is not searched for them.
    CHECK(with_rodata(std::string("failed: see dlopen(3)\0", 22)).refused.empty());
    CHECK(with_rodata(std::string("x\0dlopen\0", 9), "", true).refused.empty());
}

TEST_CASE("synthetic: a large high-entropy blob is named, not refused; small or plain data is not")
{
    const ObjectCheck blob = with_rodata(std::string(100, 'a') + random_bytes(8192, 1));
    CHECK(blob.refused.empty());
    REQUIRE(blob.named.size() == 1);
    CHECK(contains(blob.named[0], "holds 8 KiB of data that looks compressed or encrypted ("));
    CHECK(with_rodata(random_bytes(3000, 2)).named.empty());  // under one 4 KiB window
    std::string text;
    while (text.size() < 20000) text += "the kernel scans each section of 1024 elements; ";
    CHECK(with_rodata(text).named.empty());
}

TEST_CASE("synthetic: .nv_fatbin must be the compile's own fatbin, byte for byte; one wrapper in .nvFatBinSegment")
{
    const std::string own = "\x50\xed\x55\xba\x01\x00\x10\x00" + random_bytes(200, 3);
    auto object = [&](const std::string& fatbin, const std::string& wrappers) {
        return test_elf::object({{".nv_fatbin", 1, test_elf::alloc, fatbin},
                                 {".nvFatBinSegment", 1, test_elf::alloc | test_elf::write, wrappers}});
    };
    const std::string wrapper = std::string("\xb1\x43\x62\x46\x01\x00\x00\x00", 8) + std::string(16, '\0');
    // nvcc's own (padding after it allowed): nothing to say, the magic numbers included.
    CHECK(check_object(object(own, wrapper), own, false).refused.empty());
    CHECK(check_object(object(own + std::string(8, '\0'), wrapper), own, false).refused.empty());
    CHECK(contains(joined_lines(check_object(object(own + "more code", wrapper), own, false).refused),
                   "holds 9 bytes more than this compile produced"));
    std::string changed = own;
    changed[20] ^= 1;
    CHECK(contains(joined_lines(check_object(object(changed, wrapper), own, false).refused),
                   "is not the code this compile produced"));
    CHECK(contains(joined_lines(check_object(object(own, wrapper + wrapper), own, false).refused),
                   "more than nvcc's one fatbin wrapper"));
    // Without the compiler's kept fatbin the comparison is said not to have been made.
    CHECK(contains(joined_lines(check_object(object(own, wrapper), "", false).not_checked), "the GPU code section"));
}

TEST_CASE("no ELF, a truncated one, tables outside the file, random bytes: not checked, never a crash")
{
    CHECK(contains(joined_lines(check_object("", "", false).not_checked), "not an ELF file"));
    CHECK(contains(joined_lines(check_object("#!/bin/sh\n", "", false).not_checked), "not an ELF file"));
    std::string object = test_elf::object({{".rodata", 1, test_elf::alloc, "data"}});
    CHECK(contains(joined_lines(check_object(object.substr(0, object.size() / 2), "", false).not_checked),
                   "a section table outside the file"));
    std::string bad = object;
    bad[40] = static_cast<char>(0xff);  // the section table's offset, far past the end
    CHECK(contains(joined_lines(check_object(bad, "", false).not_checked), "section table outside the file"));
    // Every single byte of a real object flipped in turn, and random bytes after an ELF header.
    for (std::size_t k = 0; k < object.size(); ++k) {
        std::string flipped = object;
        flipped[k] ^= static_cast<char>(0xa5);
        (void)check_object(flipped, "", false);
        (void)detail::read_elf(flipped);
    }
    for (unsigned seed = 0; seed < 200; ++seed) {
        std::string noise = object.substr(0, 64) + random_bytes(2000, seed);
        (void)check_object(noise, "", false);
    }
}

TEST_CASE("objdump's disassembly: syscall, sysenter, int $0x80 and svc, with the function that holds them")
{
    const std::string text = "\nsub.o:     file format elf64-x86-64\n\nDisassembly of section .text:\n\n"
                             "0000000000000000 <_Z4evilv>:\n   0:\tmov    $0x27,%eax\n   5:\tsyscall\n"
                             "   7:\tint    $0x80\n   9:\tint    $0x3\n   a:\tret\n\n"
                             "0000000000000010 <ok>:\n  10:\t0f 05                \tsyscall\n";
    const auto found = raw_system_call_instructions(text);
    REQUIRE(found.size() == 3);
    CHECK(found[0] == "contains a `syscall` instruction in `evil()`, which makes a system call directly");
    CHECK(found[1] == "contains a `int $0x80` instruction in `evil()`, which makes a system call directly");
    CHECK(contains(found[2], "`syscall` instruction in `ok`"));  // raw bytes shown before the mnemonic
    CHECK(raw_system_call_instructions("   0:\tsvc\t#0x0\n").size() == 1);  // AArch64
    CHECK(raw_system_call_instructions("   0:\tcall   5 <syscall_wrapper>\n   5:\tmov %eax,%ebx\n").empty());
}

TEST_CASE("real nvcc: a cubin, PTX text or fatbin magic in the object is refused; random data is named")
{
    for (const auto& [name, expected] : std::vector<std::pair<std::string, std::string>>{
             {"incbin_cubin", "holds a GPU cubin (an ELF file for EM_CUDA) in its data (section .rodata"},
             {"ptx_string", "holds PTX text"},
             {"fatbin_magic", "holds a fatbin in its data"},
             {"syscall_instruction", "instruction in `scan_kogge_stone("}}) {
        const BuildResult* b = foreign_code::result(name);
        if (!b) return;
        CAPTURE(name);
        INFO(foreign_code::findings(*b));
        CHECK_FALSE(b->ok);
        CHECK(contains(b->invalid, expected));
    }
    const BuildResult* random = foreign_code::result("random_table");
    if (!random) return;
    INFO(foreign_code::findings(*random));
    CHECK(random->ok);
    CHECK(foreign_code::any_finding(*random, "holds 8 KiB of data that looks compressed or encrypted"));
    // nvcc's own fatbin (an ELF cubin and compressed PTX inside) is recognised as the compile's.
    const BuildResult* honest = foreign_code::result("honest_temporaries");
    CHECK(honest->ok);
    CHECK(honest->not_checked.empty());
}
