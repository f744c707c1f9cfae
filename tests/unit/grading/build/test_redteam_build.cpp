// Red team of issue 20 (redteam20), the build side: what a submission's files bring to the build
// steps (grading/src/build/steps.cpp) through the fake toolchain in the sandbox. The fake nvcc
// fails with "cannot read" when the source is not readable where it runs, as the real one does
// ("cc1plus: fatal error: /submission/scan_kogge_stone.cu: Permission denied", measured).
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "grading/build.hpp"
#include "harness/sandbox.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using namespace grading;

namespace {

Toolchain fake_toolchain()
{
    Toolchain fake = default_toolchain(fs::read_symlink("/proc/self/exe").string());
    fake.nvcc = GRADER_FAKE_NVCC;
    return fake;
}

}  // namespace

// A file the grader can read but the sandbox's uid cannot: unzip and tar keep a mode of 0600 from
// the student's machine (and a umask of 077 gives it to every checkout). The compile, as uid 65534,
// could not read /submission/<name>: the student got compile_error, 0 points, for a mode bit. The
// grader reads the file (it checked it could) and binds its own copy, which the sandbox can read.
TEST_CASE("a source of mode 0600 (the grader reads it, the sandbox's uid cannot) builds in the sandbox")
{
    std::string why;
    const auto sandbox = harness::Sandbox::find(why);
    if (!sandbox) {
        MESSAGE("skipped: no working sandbox here: " << why);
        return;
    }
    const fs::path dir = fs::temp_directory_path() / ("grader_test_redteam_mode_" + std::to_string(getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir / "work");
    const fs::path source = dir / "scan_kogge_stone.cu";
    std::ofstream(source) << "// FAKE_RUNNER: correct\n";
    fs::permissions(source, fs::perms::owner_read | fs::perms::owner_write);
    // The folder above it closed to others too (a 0700 home): the copy must not sit in it.
    fs::permissions(dir, fs::perms::owner_all);
    fs::permissions(dir / "work", fs::perms::owner_all | fs::perms::others_exec | fs::perms::group_exec |
                                      fs::perms::others_read | fs::perms::group_read);

    const auto results = build_runners(fake_toolchain(), {{source.string(), (dir / "work" / "runner").string()}}, 1,
                                       &*sandbox);
    REQUIRE(results.size() == 1);
    INFO(results[0].failure << results[0].invalid << "\n" << results[0].output);
    CHECK(results[0].ok);
    CHECK(results[0].output.find("cannot read") == std::string::npos);
    // The student's file is left as it was.
    struct stat st {};
    REQUIRE(::stat(source.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    fs::permissions(dir, fs::perms::owner_all);
    fs::remove_all(dir);
}

namespace {

using test_support::contains;

}  // namespace

TEST_CASE("files_named_in_messages: where gcc's, nvcc's front end's and the assembler's messages point")
{
    const fs::path dir = fs::temp_directory_path() / ("grader_test_redteam_named_" + std::to_string(getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::string a = (dir / "a.txt").string(), b = (dir / "b(1).h").string();
    std::ofstream(a) << "x\n";
    std::ofstream(b) << "y\n";
    const std::string messages = "In file included from /submission/missing.cu:1:\n"
                                 "                 from " + a + ":3,\n" +
                                 a + ":1:3: error: invalid preprocessing directive #System\n" +
                                 b + "(12): error: expected a \";\"\n"
                                 "/tmp/ccNOTHERE.s:5: Error: unable to include `/dev/zero'\n"
                                 "relative.h:1:1: error: x\n"
                                 "  root:x:0:0:root:/root:/bin/bash\n"
                                 "2 errors detected in the compilation of \"/submission/x.cu\".\n";
    const std::vector<std::string> named = files_named_in_messages(messages);
    CHECK(named == std::vector<std::string>{a, b});
    fs::remove_all(dir);
}

// Every file the sandbox's uid can read below /usr and /etc (and, without the sandbox, anywhere) can
// be #included; the dependency list names it and the build refuses the file, but only after a
// successful compile: a compile that failed had its messages kept, and they quote the included
// file's lines ("/etc/passwd(1): error: ...\n  root:x:0:0:root:/root:/bin/bash"), which the
// student's results show. A failure in the preprocessor writes no dependency list at all
// ("#include FILE" then "#error"), and gcc quotes every line it cannot read as a directive; the
// assembler's `.include` (inline asm) is in no list, and gas quotes every line it cannot assemble.
TEST_CASE("real nvcc: a file outside the submission, #included by a compile that fails, is refused and not quoted")
{
    const Toolchain real = default_toolchain(fs::read_symlink("/proc/self/exe").string());
    if (::access(real.nvcc.c_str(), X_OK) != 0) {
        MESSAGE("skipped: no nvcc at " << real.nvcc);
        return;
    }
    const fs::path dir = fs::temp_directory_path() / ("grader_test_redteam_quote_" + std::to_string(getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir / "outside");
    const fs::path notes = dir / "outside" / "notes.txt";
    std::ofstream(notes) << "# don't show this: SECRET-LINE-1\nSECRET-LINE-2 x y z\n";
    const std::vector<std::pair<std::string, std::string>> sources = {
        // The front end fails on the file's text: the dependency list is written.
        {"front_end", "#include \"" + notes.string() + "\"\n"},
        // The preprocessor fails: no dependency list, the file named only in the messages.
        {"preprocessor", "#include \"" + notes.string() + "\"\n#error stop\n"},
        // The assembler's .include: in no dependency list, its errors quote each line.
        {"assembler", "asm(\".include \\\"" + notes.string() + "\\\"\");\n"},
    };
    std::vector<std::pair<std::string, std::string>> work;
    for (const auto& [name, text] : sources) {
        fs::create_directories(dir / name / "work");
        std::ofstream(dir / name / "scan_kogge_stone.cu") << text;
        work.emplace_back((dir / name / "scan_kogge_stone.cu").string(), (dir / name / "work" / "runner").string());
    }
    const auto results = build_runners(real, work, 2, nullptr);
    for (std::size_t k = 0; k < results.size(); ++k) {
        CAPTURE(sources[k].first);
        INFO(results[k].failure << results[k].invalid << "\n" << results[k].output);
        CHECK_FALSE(results[k].ok);
        CHECK(contains(results[k].invalid, "notes.txt"));
        CHECK(contains(results[k].invalid, "outside the submission"));
        CHECK_FALSE(contains(results[k].output, "SECRET-LINE"));
    }
    // An honest compile error keeps its messages.
    fs::create_directories(dir / "honest" / "work");
    std::ofstream(dir / "honest" / "scan_kogge_stone.cu") << "#include \"missing.h\"\n";
    const auto honest = build_runners(
        real, {{(dir / "honest" / "scan_kogge_stone.cu").string(), (dir / "honest" / "work" / "runner").string()}}, 1,
        nullptr);
    CHECK(honest.at(0).failure == "compile error");
    CHECK(contains(honest.at(0).output, "missing.h"));
    fs::remove_all(dir);
}

// The assembler's `.incbin "FILE"` in inline asm copied any file the compile can read (in the
// sandbox: everything below /usr and /etc that uid 65534 reads, the toolkit, a grader installed below
// /usr/local with its lib/reference-ptx/) into the object's data, where the launcher can print it at
// run time: a read of a file that the host-call check refuses as open/fopen, unseen by the dependency
// list and by the object scan (text is no code). Measured: `.incbin "/etc/passwd"` in .rodata,
// printed by the launcher, passed every build check. Now refused from the front end's output
// (nvcc --keep's .cudafe1.cpp), where the macros that split the directive are expanded.
TEST_CASE("real nvcc: inline asm's .incbin of a file outside the submission is refused")
{
    const Toolchain real = default_toolchain(fs::read_symlink("/proc/self/exe").string());
    if (::access(real.nvcc.c_str(), X_OK) != 0) {
        MESSAGE("skipped: no nvcc at " << real.nvcc);
        return;
    }
    const fs::path dir = fs::temp_directory_path() / ("grader_test_redteam_incbin_" + std::to_string(getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir / "outside");
    fs::create_directories(dir / "sub" / "work");
    const fs::path notes = dir / "outside" / "rubric-notes.txt";
    std::ofstream(notes) << "hidden case sizes: 4196353, 67108864\n";
    // Macros split the directive, so that no text scan of the source sees it.
    std::ofstream(dir / "sub" / "scan_kogge_stone.cu")
        << "#include <cstdio>\n"
           "#define DIRECTIVE(a, b) \".\" #a #b\n"
           "asm(\".pushsection .rodata\\n.globl grabbed\\ngrabbed:\\n\" DIRECTIVE(inc, bin) \" \\\""
        << notes.string()
        << "\\\"\\n.byte 0\\n.popsection\");\n"
           "extern \"C\" const char grabbed[];\n"
           "__global__ void copy(const float* in, float* out, int n) {\n"
           "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = in[i]; }\n"
           "void scan_kogge_stone(const float* in, float* out, int n) {\n"
           "  std::printf(\"%s\", grabbed);\n"
           "  copy<<<(n + 255) / 256, 256>>>(in, out, n); }\n";
    const auto results = build_runners(
        real, {{(dir / "sub" / "scan_kogge_stone.cu").string(), (dir / "sub" / "work" / "runner").string()}}, 1,
        nullptr);
    const BuildResult& b = results.at(0);
    INFO(b.failure << b.invalid << "\n" << b.output);
    REQUIRE(b.failure.empty());  // it compiled (the hole's premise)
    CHECK_FALSE(b.ok);
    CHECK(contains(b.invalid, "`.incbin`"));
    fs::remove_all(dir);
}

TEST_CASE("assembler_file_directives: the directives that read a file or build one, however spelled")
{
    CHECK(assembler_file_directives("asm(\".pushsection .rodata\\n.incbin \\\"/etc/passwd\\\"\");").size() == 1);
    CHECK(assembler_file_directives("__asm__ volatile(\".INCLUDE \\\"x.s\\\"\");") ==
          std::vector<std::string>{".include"});
    // Split literals (the source's own text; the front end's output has them joined).
    CHECK(assembler_file_directives("asm(\".\" \"inc\"\n \"bin \\\"f\\\"\");") ==
          std::vector<std::string>{".incbin"});
    // A directive's name built by the assembler's own macros.
    CHECK(assembler_file_directives("asm(\".irpc c, i\\n.\\\\c\\\\()ncbin \\\"f\\\"\\n.endr\");") ==
          std::vector<std::string>{".irp"});
    // Honest: PTX in a device function, a label on a declaration, the word in a comment or a string.
    CHECK(assembler_file_directives("asm volatile(\"bar.sync 0;\"); // .incbin\n"
                                    "extern int f() __asm__(\"f\");\n"
                                    "const char* s = \".incbin\";\n")
              .empty());
}
