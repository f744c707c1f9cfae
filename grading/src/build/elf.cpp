// The ELF reader of elf.hpp: every table is checked to lie inside the file before it is read.
#include "elf.hpp"

#include <algorithm>
#include <cstring>

namespace grading::detail {
namespace {

// Bounds of what a course's object may hold; beyond them the object is not read.
constexpr std::size_t max_sections = 1u << 16;
constexpr std::size_t max_symbols = 1u << 20;
constexpr std::size_t max_relocations = 1u << 22;

template <typename T>
bool read_at(std::string_view bytes, std::uint64_t offset, T& value)
{
    if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return false;
    std::memcpy(&value, bytes.data() + offset, sizeof(T));  // little-endian hosts only (x86-64, AArch64)
    return true;
}

bool inside(std::string_view bytes, std::uint64_t offset, std::uint64_t size)
{
    return offset <= bytes.size() && size <= bytes.size() - offset;
}

// The NUL-terminated string at `offset` of a string table (empty when out of range).
std::string string_at(std::string_view table, std::uint64_t offset)
{
    if (offset >= table.size()) return {};
    const std::string_view rest = table.substr(offset);
    return std::string(rest.substr(0, rest.find('\0')));
}

}  // namespace

std::string_view ElfObject::contents(std::size_t section) const
{
    if (section >= sections.size() || sections[section].type == elf::sht_nobits) return {};
    return bytes.substr(sections[section].offset, sections[section].size);
}

const ElfSymbol* ElfObject::symbol_at(std::size_t section, std::uint64_t offset) const
{
    const auto list = defined_in.find(section);
    if (list == defined_in.end() || section == elf::shn_undef) return nullptr;
    const std::vector<std::size_t>& by_value = list->second;
    // The symbols starting at or before `offset`, nearest first; a function's range holds few others.
    auto it = std::upper_bound(by_value.begin(), by_value.end(), offset,
                               [&](std::uint64_t at, std::size_t k) { return at < symbols[k].value; });
    const ElfSymbol* best = nullptr;
    for (int looked = 0; it != by_value.begin() && looked < 64; ++looked) {
        const ElfSymbol& s = symbols[*--it];
        const bool holds = offset < s.value + s.size || (s.size == 0 && offset == s.value);
        if (holds && (best == nullptr || best->type != elf::stt_func)) best = &s;
    }
    return best;
}

std::pair<const ElfRelocation*, const ElfRelocation*> ElfObject::relocations_in(std::size_t section,
                                                                               std::uint64_t begin,
                                                                               std::uint64_t end) const
{
    const auto list = relocations.find(section);
    if (list == relocations.end() || list->second.empty()) return {nullptr, nullptr};
    const std::vector<ElfRelocation>& r = list->second;
    const auto by_offset = [](const ElfRelocation& a, std::uint64_t at) { return a.offset < at; };
    const auto first = std::lower_bound(r.begin(), r.end(), begin, by_offset);
    const auto last = std::lower_bound(first, r.end(), end, by_offset);
    return {r.data() + (first - r.begin()), r.data() + (last - r.begin())};
}

std::string ElfObject::target_name(const ElfRelocation& r) const
{
    if (r.symbol >= symbols.size()) return {};
    const ElfSymbol& s = symbols[r.symbol];
    if (s.type != elf::stt_section) return s.name;
    const ElfSymbol* at = symbol_at(s.section, s.value + static_cast<std::uint64_t>(r.addend));
    return at ? at->name : std::string();
}

ElfObject read_elf(std::string_view bytes)
{
    ElfObject o;
    o.bytes = bytes;
    auto fail = [&](const std::string& why) {
        ElfObject bad;
        bad.error = why;
        bad.bytes = bytes;
        return bad;
    };
    if (bytes.size() < 64 || bytes.substr(0, 4) != std::string_view("\x7f" "ELF", 4))
        return fail("not an ELF file");
    if (bytes[4] != 2 || bytes[5] != 1) return fail("not a 64-bit little-endian ELF file");
    std::uint16_t type = 0, shentsize = 0, shnum = 0, shstrndx = 0;
    std::uint64_t shoff = 0;
    read_at(bytes, 16, type);
    read_at(bytes, 18, o.machine);
    read_at(bytes, 40, shoff);
    read_at(bytes, 58, shentsize);
    read_at(bytes, 60, shnum);
    read_at(bytes, 62, shstrndx);
    if (type != elf::et_rel) return fail("not a relocatable object");
    if (shentsize != 64 || shnum == 0 || shnum > max_sections || !inside(bytes, shoff, std::uint64_t(shnum) * 64))
        return fail("a section table outside the file");

    o.sections.resize(shnum);
    std::vector<std::uint32_t> name_offsets(shnum);
    for (std::size_t k = 0; k < shnum; ++k) {
        const std::uint64_t at = shoff + k * 64;
        ElfSection& s = o.sections[k];
        read_at(bytes, at, name_offsets[k]);
        read_at(bytes, at + 4, s.type);
        read_at(bytes, at + 8, s.flags);
        read_at(bytes, at + 24, s.offset);
        read_at(bytes, at + 32, s.size);
        read_at(bytes, at + 40, s.link);
        read_at(bytes, at + 44, s.info);
        read_at(bytes, at + 56, s.entsize);
        if (s.type != elf::sht_nobits && k != 0 && !inside(bytes, s.offset, s.size))
            return fail("section " + std::to_string(k) + " lies outside the file");
    }
    if (shstrndx < shnum) {
        const std::string_view names = o.contents(shstrndx);
        for (std::size_t k = 0; k < shnum; ++k) o.sections[k].name = string_at(names, name_offsets[k]);
    }

    // The symbol table (a relocatable object has one, or none when it defines and uses nothing).
    std::size_t symtab = shnum;
    for (std::size_t k = 0; k < shnum; ++k)
        if (o.sections[k].type == elf::sht_symtab) {
            if (symtab != shnum) return fail("two symbol tables");
            symtab = k;
        }
    if (symtab != shnum) {
        const ElfSection& s = o.sections[symtab];
        if (s.entsize != 24 || s.size % 24 != 0 || s.size / 24 > max_symbols) return fail("a malformed symbol table");
        const std::string_view names = s.link < shnum ? o.contents(s.link) : std::string_view();
        o.symbols.resize(s.size / 24);
        for (std::size_t k = 0; k < o.symbols.size(); ++k) {
            const std::uint64_t at = s.offset + k * 24;
            std::uint32_t name = 0;
            std::uint8_t info = 0;
            ElfSymbol& y = o.symbols[k];
            read_at(bytes, at, name);
            read_at(bytes, at + 4, info);
            read_at(bytes, at + 6, y.section);
            read_at(bytes, at + 8, y.value);
            read_at(bytes, at + 16, y.size);
            y.type = info & 0xf;
            y.bind = info >> 4;
            y.name = string_at(names, name);
            if (y.type == elf::stt_section && y.name.empty() && y.section < shnum) y.name = o.sections[y.section].name;
        }
    }

    std::size_t relocations = 0;
    for (std::size_t k = 0; k < shnum; ++k) {
        const ElfSection& s = o.sections[k];
        if (s.type != elf::sht_rela) continue;
        if (s.entsize != 24 || s.size % 24 != 0 || s.info >= shnum) return fail("a malformed relocation table");
        relocations += s.size / 24;
        if (relocations > max_relocations) return fail("more relocations than a course's file has");
        auto& list = o.relocations[s.info];
        for (std::uint64_t at = s.offset; at < s.offset + s.size; at += 24) {
            ElfRelocation r;
            std::uint64_t info = 0;
            read_at(bytes, at, r.offset);
            read_at(bytes, at + 8, info);
            read_at(bytes, at + 16, r.addend);
            r.symbol = static_cast<std::uint32_t>(info >> 32);
            r.type = static_cast<std::uint32_t>(info & 0xffffffffu);
            if (r.symbol >= o.symbols.size() && r.symbol != 0) return fail("a relocation names no symbol");
            list.push_back(r);
        }
    }
    for (auto& [section, list] : o.relocations)
        std::stable_sort(list.begin(), list.end(),
                         [](const ElfRelocation& a, const ElfRelocation& b) { return a.offset < b.offset; });
    for (std::size_t k = 0; k < o.symbols.size(); ++k) {
        const ElfSymbol& y = o.symbols[k];
        if (y.section != elf::shn_undef && y.section < shnum && (y.type == elf::stt_func || y.type == elf::stt_object))
            o.defined_in[y.section].push_back(k);
    }
    for (auto& [section, list] : o.defined_in)
        std::stable_sort(list.begin(), list.end(),
                         [&](std::size_t a, std::size_t b) { return o.symbols[a].value < o.symbols[b].value; });
    return o;
}

}  // namespace grading::detail
