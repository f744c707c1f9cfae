// Code that runs before (or after) the grader's runner (grading/src/build/object_scan.cpp): the
// object's .init_array, .preinit_array, .ctors, .fini_array, .dtors, .init and .fini, ifunc
// resolvers, and nvcc's registration functions called from anywhere but nvcc's own code. On
// synthetic ELF objects (elf_writer.hpp) and on objects compiled by the real nvcc.
#include <doctest/doctest.h>

#include <chrono>

#include "elf_writer.hpp"
#include "foreign_code_sources.hpp"
#include "grading/build.hpp"
#include "support/test_support.hpp"

using namespace grading;
using test_elf::Relocation;
using test_elf::Section;


namespace {

using test_support::contains;

using test_support::joined_lines;

constexpr std::uint32_t r_64 = 1, r_pc32 = 2, r_plt32 = 4;
constexpr std::uint8_t local = 0, global = 1, weak = 2, func = 2, object = 1, section = 3, notype = 0;

// Sections: 1 .text, 2 .text.startup, 3 .init_array, 4 .data. Symbols (1-based):
//   1 nvcc's registration (local, .text.startup 0..16)   2 _GLOBAL__sub_I_x (local, .text.startup 16..32)
//   3 evil (global, .text 0..8)                            4 a std::vector destructor (weak, .text 8..16)
//   5 __cxa_atexit (undefined)                             6 __cudaRegisterFatBinary (undefined)
//   7 the section symbol of .text.startup                  8 a global object in .data
//   9 a function named like nvcc's registration, but global (.text 16..24)
std::vector<Section> sections(const std::string& init_array = std::string(8, '\0'))
{
    return {{".text", 1, test_elf::alloc | test_elf::exec, std::string(32, '\x90')},
            {".text.startup", 1, test_elf::alloc | test_elf::exec, std::string(32, '\x90')},
            {".init_array", 14, test_elf::alloc | test_elf::write, init_array},
            {".data", 1, test_elf::alloc | test_elf::write, std::string(16, '\0')}};
}

std::vector<test_elf::Symbol> symbols()
{
    return {{"_ZL24__sti____cudaRegisterAllv", 2, 0, 16, func, local},
            {"_GLOBAL__sub_I_x", 2, 16, 16, func, local},
            {"evil", 1, 0, 8, func, global},
            {"_ZNSt6vectorIfSaIfEED1Ev", 1, 8, 8, func, weak},
            {"__cxa_atexit", 0, 0, 0, notype, global},
            {"__cudaRegisterFatBinary", 0, 0, 0, notype, global},
            {".text.startup", 2, 0, 0, section, local},
            {"table", 4, 0, 16, object, local},
            {"_ZL24__sti____cudaRegisterAllv", 1, 16, 8, func, global}};
}

ObjectCheck check(const std::vector<Relocation>& relocations, const std::vector<Section>& s = sections())
{
    return check_object(test_elf::object(s, symbols(), relocations), "", false);
}

}  // namespace

TEST_CASE("synthetic: nvcc's registration is the one initializer a file has; any other is refused, named")
{
    // nvcc's, through the section symbol plus its offset as the assembler writes it.
    CHECK(check({{3, 0, 7, r_64, 0}}).refused.empty());
    CHECK(check({{3, 0, 1, r_64, 0}}).refused.empty());

    const ObjectCheck other = check({{3, 0, 3, r_64, 0}});
    REQUIRE(other.refused.size() == 1);
    CHECK(other.refused[0] == "runs `evil` before the grader's runner starts (.init_array): a submission's code runs "
                              "only when its launcher is called");
    // A global function with the name nvcc gives its own (local) registration is not nvcc's.
    CHECK(contains(joined_lines(check({{3, 0, 9, r_64, 0}}).refused), "before the grader's runner starts"));
    // Two entries, the second someone else's.
    CHECK(check({{3, 0, 1, r_64, 0}, {3, 8, 3, r_64, 0}}, sections(std::string(16, '\0'))).refused.size() == 1);
    // An entry written as a number, with no relocation: an address fixed by hand.
    std::string fixed(8, '\0');
    fixed[1] = 0x10;
    CHECK(contains(joined_lines(check({}, sections(fixed)).refused), "has an entry at a fixed address (0x1000)"));
}

TEST_CASE("synthetic: the compiler's initializer of library objects passes; one that calls the student's code does not")
{
    // _GLOBAL__sub_I_x registers a std::vector's destructor for `table` with __cxa_atexit.
    const std::vector<Relocation> library = {{3, 0, 2, r_64, 0},
                                             {2, 20, 8, r_pc32, -4},
                                             {2, 24, 4, r_pc32, -4},
                                             {2, 28, 5, r_plt32, -4}};
    CHECK(check(library).refused.empty());
    std::vector<Relocation> calls_evil = library;
    calls_evil.push_back({2, 26, 3, r_plt32, -4});
    const ObjectCheck refused = check(calls_evil);
    REQUIRE(refused.refused.size() == 1);
    CHECK(contains(refused.refused[0], "runs `evil` before the grader's runner starts (a global object with a "
                                       "constructor, or a global initialized by a call)"));
    // The library function it calls is followed in turn: a std:: function of this object that
    // calls the student's code is the student's code.
    std::vector<Relocation> through_library = library;
    through_library.push_back({1, 10, 3, r_plt32, -4});  // inside the std::vector destructor, a call to evil
    CHECK(contains(joined_lines(check(through_library).refused), "runs `evil`"));
}

TEST_CASE("synthetic: .fini_array, .ctors, .preinit_array, .init code and ifunc resolvers are refused too")
{
    auto with = [](const std::string& name, std::uint32_t type, std::uint64_t flags) {
        std::vector<Section> s = sections();
        s[2] = {name, type, flags, std::string(8, '\0')};
        return s;
    };
    CHECK(contains(joined_lines(check({{3, 0, 3, r_64, 0}}, with(".fini_array", 15, test_elf::alloc)).refused),
                   "runs `evil` after the grader's runner ends (.fini_array)"));
    CHECK(contains(joined_lines(check({{3, 0, 3, r_64, 0}}, with(".ctors.00100", 1, test_elf::alloc)).refused),
                   "runs `evil` before the grader's runner starts (.ctors.00100)"));
    CHECK(contains(joined_lines(check({{3, 0, 3, r_64, 0}}, with(".preinit_array", 16, test_elf::alloc)).refused),
                   "before the grader's runner starts"));
    CHECK(contains(joined_lines(check({}, with(".init", 1, test_elf::alloc | test_elf::exec)).refused),
                   "puts code in the program's .init section"));

    std::vector<test_elf::Symbol> y = symbols();
    y.push_back({"memcpy_resolver", 1, 0, 8, 10, global});  // STT_GNU_IFUNC
    CHECK(contains(joined_lines(check_object(test_elf::object(sections(), y, {}), "", false).refused),
                   "as an indirect function (ifunc), whose resolver runs before the grader's runner starts"));
}

TEST_CASE("synthetic: nvcc's registration functions called from nvcc's code only")
{
    // From nvcc's registration function: its own file's GPU code.
    CHECK(check({{3, 0, 1, r_64, 0}, {2, 4, 6, r_plt32, -4}}).refused.empty());
    // From the student's function, or one named like nvcc's but global: registration by hand.
    const ObjectCheck by_hand = check({{3, 0, 1, r_64, 0}, {1, 4, 6, r_plt32, -4}});
    REQUIRE(by_hand.refused.size() == 1);
    CHECK(by_hand.refused[0] == "calls `__cudaRegisterFatBinary` from `evil`, outside the code nvcc generates: "
                                "registering GPU code by hand runs code this compile did not produce");
    CHECK(contains(joined_lines(check({{3, 0, 1, r_64, 0}, {1, 20, 6, r_plt32, -4}}).refused),
                   "calls `__cudaRegisterFatBinary` from `__sti____cudaRegisterAll()`"));
    // Its address kept in data, to be called through a pointer.
    CHECK(contains(joined_lines(check({{3, 0, 1, r_64, 0}, {4, 8, 6, r_64, 0}}).refused),
                   "keeps the address of `__cudaRegisterFatBinary` in `table`"));
}

TEST_CASE("real nvcc: a constructor attribute and a global object of the student's are refused")
{
    for (const auto& [name, expected] : std::vector<std::pair<std::string, std::string>>{
             {"constructor_attribute", "runs `early()` before the grader's runner starts (.init_array)"},
             {"global_object", "runs `(anonymous namespace)::Hello::Hello()` before the grader's runner starts"},
             {"global_vector_of_own_type",
              "runs `(anonymous namespace)::Counter::Counter()` before the grader's runner starts"}}) {
        const BuildResult* b = foreign_code::result(name);
        if (!b) return;
        CAPTURE(name);
        INFO(foreign_code::findings(*b));
        CHECK_FALSE(b->ok);
        CHECK(contains(b->invalid, expected));
    }
}

TEST_CASE("real nvcc: global std::map, std::vector, std::string and <iostream> objects are the library's: built")
{
    const BuildResult* b = foreign_code::result("global_library_objects");
    if (!b) return;
    INFO(foreign_code::findings(*b));
    CHECK(b->ok);
    CHECK(b->code_findings.empty());
}

TEST_CASE("real nvcc: __cudaRegisterFatBinary called by the launcher is refused")
{
    const BuildResult* b = foreign_code::result("register_by_hand");
    if (!b) return;
    INFO(foreign_code::findings(*b));
    CHECK_FALSE(b->ok);
    CHECK(contains(b->invalid, "calls `__cudaRegisterFatBinary` from `scan_kogge_stone("));
    CHECK(contains(b->invalid, "outside the code nvcc generates"));
}

TEST_CASE("synthetic: a crafted object of 50,000 functions and 200,000 registration calls is checked quickly")
{
    std::vector<test_elf::Symbol> y = {{"__cudaRegisterFunction", 0, 0, 0, notype, global}};
    for (std::uint64_t k = 0; k < 50000; ++k) y.push_back({"f" + std::to_string(k), 1, k * 16, 16, func, global});
    std::vector<Relocation> r;
    for (std::uint64_t k = 0; k < 200000; ++k) r.push_back({1, (k * 4) % (50000 * 16), 1, r_plt32, -4});
    const std::string object =
        test_elf::object({{".text", 1, test_elf::alloc | test_elf::exec, std::string(50000 * 16, '\x90')}}, y, r);
    const auto start = std::chrono::steady_clock::now();
    const ObjectCheck c = check_object(object, "", false);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    REQUIRE(c.refused.size() == 9);  // eight named, the rest counted
    CHECK(c.refused.back() == "calls nvcc's registration functions from 49992 more places outside the code nvcc "
                              "generates");
    CHECK(seconds < 5.0);
    MESSAGE("checked in " << seconds << " s");
}
