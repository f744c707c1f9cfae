// Synthetic ELF64 relocatable objects (little-endian, x86-64) for the tests of the object checks:
// sections with their bytes, a symbol table, RELA relocations, written as a linker would read them.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace test_elf {

struct Section {
    std::string name;
    std::uint32_t type = 1;   // SHT_PROGBITS
    std::uint64_t flags = 2;  // SHF_ALLOC
    std::string bytes;
};

struct Symbol {
    std::string name;
    std::uint16_t section = 0;  // index into the sections given (1-based as in ELF: 0 is undefined)
    std::uint64_t value = 0, size = 0;
    std::uint8_t type = 2;  // STT_FUNC
    std::uint8_t bind = 1;  // STB_GLOBAL
};

struct Relocation {
    std::uint16_t section = 0;  // the section it applies to (1-based)
    std::uint64_t offset = 0;
    std::uint32_t symbol = 0;  // index into the symbols given (1-based: 0 is the null symbol)
    std::uint32_t type = 1;    // R_X86_64_64
    std::int64_t addend = 0;
};

constexpr std::uint64_t alloc = 0x2, write = 0x1, exec = 0x4;

template <typename T>
void put(std::string& out, std::size_t at, T value)
{
    std::memcpy(&out[at], &value, sizeof value);
}

template <typename T>
void append(std::string& out, T value)
{
    out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

// Sections 1..n are `sections`; after them .symtab, .strtab, one .rela<name> per section with
// relocations, and .shstrtab.
inline std::string object(const std::vector<Section>& sections, const std::vector<Symbol>& symbols = {},
                          const std::vector<Relocation>& relocations = {}, std::uint16_t machine = 62)
{
    struct Header {
        std::string name;
        std::uint32_t type;
        std::uint64_t flags, offset, size;
        std::uint32_t link, info;
        std::uint64_t align, entsize;
    };
    std::string out(64, '\0');
    std::vector<Header> headers(1, Header{"", 0, 0, 0, 0, 0, 0, 0, 0});
    auto add = [&](const std::string& name, std::uint32_t type, std::uint64_t flags, const std::string& bytes,
                   std::uint32_t link, std::uint32_t info, std::uint64_t entsize) {
        while (out.size() % 8) out += '\0';
        headers.push_back({name, type, flags, out.size(), bytes.size(), link, info, 8, entsize});
        if (type != 8) out += bytes;  // NOBITS: no bytes in the file
        return static_cast<std::uint32_t>(headers.size() - 1);
    };
    for (const auto& s : sections) add(s.name, s.type, s.flags, s.bytes, 0, 0, 0);

    std::string strtab(1, '\0'), symtab(24, '\0');
    for (const auto& y : symbols) {
        const auto name = static_cast<std::uint32_t>(strtab.size());
        strtab += y.name + '\0';
        append(symtab, name);
        append(symtab, static_cast<std::uint8_t>((y.bind << 4) | y.type));
        append(symtab, std::uint8_t{0});
        append(symtab, y.section);
        append(symtab, y.value);
        append(symtab, y.size);
    }
    const std::uint32_t symtab_index = static_cast<std::uint32_t>(headers.size());
    add(".symtab", 2, 0, symtab, symtab_index + 1, 1, 24);
    add(".strtab", 3, 0, strtab, 0, 0, 0);
    for (std::uint16_t k = 1; k <= sections.size(); ++k) {
        std::string rela;
        for (const auto& r : relocations) {
            if (r.section != k) continue;
            append(rela, r.offset);
            append(rela, (static_cast<std::uint64_t>(r.symbol) << 32) | r.type);
            append(rela, r.addend);
        }
        if (!rela.empty()) add(".rela" + sections[k - 1].name, 4, 0, rela, symtab_index, k, 24);
    }
    std::string shstrtab(1, '\0');
    std::vector<std::uint32_t> names;
    for (const auto& h : headers) {
        names.push_back(static_cast<std::uint32_t>(shstrtab.size()));
        shstrtab += h.name + '\0';
    }
    headers.push_back({".shstrtab", 3, 0, 0, shstrtab.size(), 0, 0, 1, 0});
    names.push_back(static_cast<std::uint32_t>(shstrtab.size()));
    shstrtab += std::string(".shstrtab") + '\0';
    headers.back().offset = out.size();
    headers.back().size = shstrtab.size();
    out += shstrtab;
    while (out.size() % 8) out += '\0';
    const std::uint64_t shoff = out.size();
    for (std::size_t k = 0; k < headers.size(); ++k) {
        const Header& h = headers[k];
        append(out, k == 0 ? std::uint32_t{0} : names[k]);
        append(out, h.type);
        append(out, h.flags);
        append(out, std::uint64_t{0});  // address
        append(out, h.offset);
        append(out, h.size);
        append(out, h.link);
        append(out, h.info);
        append(out, h.align);
        append(out, h.entsize);
    }
    std::memcpy(&out[0], "\x7f" "ELF\x02\x01\x01", 7);
    put(out, 16, std::uint16_t{1});  // ET_REL
    put(out, 18, machine);
    put(out, 20, std::uint32_t{1});
    put(out, 40, shoff);
    put(out, 52, std::uint16_t{64});
    put(out, 58, std::uint16_t{64});
    put(out, 60, static_cast<std::uint16_t>(headers.size()));
    put(out, 62, static_cast<std::uint16_t>(headers.size() - 1));
    return out;
}

}  // namespace test_elf
