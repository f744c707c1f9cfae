// A small reader of 64-bit little-endian ELF relocatable objects (x86-64, AArch64): the sections,
// the symbol table and the RELA relocations of a submission's object, for the checks of
// object_scan.cpp. The bytes come from a compile the submission controls (inline `asm` writes
// sections), so every offset and count is checked against the file before it is used: a malformed
// object is an `error`, never an out-of-bounds read or an exception.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

namespace grading::detail {

// What ELF numbers the checks use (elf.h, restated so that the reader needs no system header).
namespace elf {
constexpr std::uint16_t et_rel = 1;
constexpr std::uint16_t em_x86_64 = 62;
constexpr std::uint16_t em_aarch64 = 183;
constexpr std::uint16_t em_cuda = 190;
constexpr std::uint32_t sht_progbits = 1, sht_symtab = 2, sht_rela = 4, sht_nobits = 8, sht_init_array = 14,
                        sht_fini_array = 15, sht_preinit_array = 16;
constexpr std::uint64_t shf_write = 0x1, shf_alloc = 0x2, shf_execinstr = 0x4;
constexpr std::uint8_t stt_object = 1, stt_func = 2, stt_section = 3;
constexpr std::uint16_t shn_undef = 0;
}  // namespace elf

struct ElfSection {
    std::string name;
    std::uint32_t type = 0;
    std::uint64_t flags = 0;
    std::uint64_t offset = 0, size = 0;  // in the file (size 0 in the file for NOBITS)
    std::uint32_t link = 0, info = 0;
    std::uint64_t entsize = 0;
};

struct ElfSymbol {
    std::string name;
    std::uint64_t value = 0, size = 0;
    std::uint8_t type = 0, bind = 0;
    std::uint16_t section = 0;  // index; 0: undefined
};

struct ElfRelocation {
    std::uint64_t offset = 0;  // in the section it applies to
    std::uint32_t symbol = 0;  // index into `symbols`
    std::uint32_t type = 0;
    std::int64_t addend = 0;
};

struct ElfObject {
    std::string error;  // non-empty: not read (the rest is empty)
    std::uint16_t machine = 0;
    std::vector<ElfSection> sections;
    std::vector<ElfSymbol> symbols;
    // section index -> its relocations, by offset (several RELA sections for one section merged)
    std::map<std::size_t, std::vector<ElfRelocation>> relocations;
    std::string_view bytes;  // the whole file (not owned)
    // section index -> its function and object symbols (indices into `symbols`), by value: what
    // symbol_at searches, in logarithmic time however many symbols a crafted object has.
    std::map<std::size_t, std::vector<std::size_t>> defined_in;

    // A section's bytes in the file (empty for NOBITS); bounds were checked when it was read.
    std::string_view contents(std::size_t section) const;
    // The function (else object) symbol defined in `section` whose range holds `offset`; null if none.
    const ElfSymbol* symbol_at(std::size_t section, std::uint64_t offset) const;
    // The relocations of `section` whose offsets lie in [begin, end).
    std::pair<const ElfRelocation*, const ElfRelocation*> relocations_in(std::size_t section, std::uint64_t begin,
                                                                        std::uint64_t end) const;
    // What an absolute relocation (an .init_array entry, a pointer in data) points at: its
    // symbol's name, or for a section symbol plus addend the function or object at that place
    // ("" if none).
    std::string target_name(const ElfRelocation& r) const;
};

// Reads `bytes` (which must outlive the result). Gives an ElfObject with `error` set for anything
// that is not a 64-bit little-endian relocatable ELF file whose tables lie inside it.
ElfObject read_elf(std::string_view bytes);

}  // namespace grading::detail
