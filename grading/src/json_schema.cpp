// JSON Schema validator for the keyword subset listed in json_schema.hpp.
//
// Two passes: check_schema() walks the whole schema once and rejects unknown keywords and malformed
// keyword values (so a typo in a branch the document never reaches still fails); only a clean schema
// is then used by Validator to check the document.
#include "grading/json_schema.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <regex>
#include <set>

namespace grading {
namespace {

using json = nlohmann::json;

// RFC 6901 escaping of one reference token: '~' -> "~0", '/' -> "~1".
std::string escape_token(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '~') out += "~0";
        else if (c == '/') out += "~1";
        else out += c;
    }
    return out;
}

std::string child(const std::string& path, const std::string& key) { return path + "/" + escape_token(key); }
std::string child(const std::string& path, std::size_t index) { return path + "/" + std::to_string(index); }

// A value rendered for a message, cut short so huge values do not flood the output.
std::string brief(const json& v) {
    std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
    return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

// Resolves "#/$defs/NAME" (NAME one escaped token) against the root; nullptr for any other form.
const json* resolve_ref(const json& root, const std::string& ref) {
    const std::string prefix = "#/$defs/";
    if (ref.compare(0, prefix.size(), prefix) != 0) return nullptr;
    std::string name;
    for (std::size_t i = prefix.size(); i < ref.size(); ++i) {
        if (ref[i] == '/') return nullptr;  // only direct children of $defs
        if (ref[i] != '~') {
            name += ref[i];
        } else if (i + 1 < ref.size() && (ref[i + 1] == '0' || ref[i + 1] == '1')) {
            name += ref[++i] == '0' ? '~' : '/';
        } else {
            return nullptr;  // bad escape
        }
    }
    if (!root.is_object()) return nullptr;
    auto defs = root.find("$defs");
    if (defs == root.end() || !defs->is_object()) return nullptr;
    auto it = defs->find(name);
    return it == defs->end() ? nullptr : &*it;
}

// Type name as JSON Schema sees it: integral numbers are "integer", other numbers "number".
std::string type_of(const json& v) {
    if (v.is_number_integer()) return "integer";
    if (v.is_number()) return "number";
    return v.type_name();  // null, boolean, string, array, object
}

bool has_type(const json& v, const std::string& t) {
    if (t == "integer") {
        if (v.is_number_integer()) return true;
        if (!v.is_number_float()) return false;
        double d = v.get<double>();
        return std::isfinite(d) && std::floor(d) == d;  // 3.0 counts as an integer
    }
    if (t == "number") return v.is_number();  // is_number() is false for booleans
    return type_of(v) == t;
}

bool is_count(const json& v) {  // a non-negative integer keyword value
    return v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0);
}

// ---- pass 1: the schema itself -------------------------------------------------------------------

// Schema errors have an empty instance path; the message names the schema location ("#/...").
void check_schema(const json& root, const json& s, const std::string& loc, std::vector<SchemaError>& errors) {
    auto fail = [&](const std::string& where, const std::string& msg) {
        errors.push_back({"", "schema error at " + where + ": " + msg});
    };
    if (s.is_boolean()) return;
    if (!s.is_object()) return fail(loc, "a schema must be an object or a boolean");

    static const std::set<std::string> kTypes = {"null", "boolean", "integer", "number",
                                                 "string", "array", "object"};
    static const std::set<std::string> kIgnored = {"description", "title", "$schema", "$id", "$comment"};
    for (const auto& [key, v] : s.items()) {
        const std::string at = child(loc, key);
        if (key == "type") {
            auto known = [&](const json& t) { return t.is_string() && kTypes.count(t.get<std::string>()) > 0; };
            if (!known(v) && !(v.is_array() && !v.empty() && std::all_of(v.begin(), v.end(), known)))
                fail(at, "'type' must be a type name or a non-empty array of type names");
        } else if (key == "properties" || key == "$defs") {
            if (!v.is_object()) fail(at, "'" + key + "' must be an object of schemas");
            else for (const auto& [name, sub] : v.items()) check_schema(root, sub, child(at, name), errors);
        } else if (key == "items" || key == "additionalProperties") {
            check_schema(root, v, at, errors);
        } else if (key == "anyOf" || key == "oneOf") {
            if (!v.is_array() || v.empty()) fail(at, "'" + key + "' must be a non-empty array of schemas");
            else for (std::size_t i = 0; i < v.size(); ++i) check_schema(root, v[i], child(at, i), errors);
        } else if (key == "required") {
            if (!v.is_array() || !std::all_of(v.begin(), v.end(), [](const json& n) { return n.is_string(); }))
                fail(at, "'required' must be an array of strings");
        } else if (key == "minItems" || key == "maxItems" || key == "minLength") {
            if (!is_count(v)) fail(at, "'" + key + "' must be a non-negative integer");
        } else if (key == "minimum" || key == "maximum") {
            if (!v.is_number()) fail(at, "'" + key + "' must be a number");
        } else if (key == "enum") {
            if (!v.is_array()) fail(at, "'enum' must be an array");
        } else if (key == "pattern") {
            if (!v.is_string()) {
                fail(at, "'pattern' must be a string");
                continue;
            }
            try {
                std::regex re(v.get<std::string>(), std::regex::ECMAScript);
            } catch (const std::regex_error& e) {
                fail(at, "invalid pattern " + brief(v) + ": " + e.what());
            }
        } else if (key == "$ref") {
            if (!v.is_string() || !resolve_ref(root, v.get<std::string>()))
                fail(at, "unresolvable $ref " + brief(v) + " (only \"#/$defs/NAME\" is supported)");
        } else if (key != "const" && !kIgnored.count(key)) {
            fail(loc, "unknown keyword '" + key + "'");
        }
    }
}

// ---- pass 2: the document ------------------------------------------------------------------------

class Validator {
public:
    explicit Validator(const json& root) : root_(root) {}

    // `refs` holds the $defs entered at this instance location without descending into it; meeting
    // one again would recurse forever, so it is reported as a cycle.
    void validate(const json& s, const json& v, const std::string& path, std::vector<SchemaError>& out,
                  const std::vector<const json*>& refs = {}) {
        if (s.is_boolean()) {
            if (!s.get<bool>()) out.push_back({path, "no value is allowed here (schema is false)"});
            return;
        }
        auto err = [&](std::string msg) { out.push_back({path, std::move(msg)}); };

        if (auto it = s.find("$ref"); it != s.end()) {
            const json* target = it->is_string() ? resolve_ref(root_, it->get<std::string>()) : nullptr;
            if (!target) {
                err("unresolvable $ref " + brief(*it));
            } else if (std::find(refs.begin(), refs.end(), target) != refs.end()) {
                err("$ref cycle through " + brief(*it));
            } else {
                auto next = refs;
                next.push_back(target);
                validate(*target, v, path, out, next);
            }
        }
        if (auto it = s.find("type"); it != s.end()) {
            json types = it->is_array() ? *it : json::array({*it});
            bool ok = std::any_of(types.begin(), types.end(),
                                  [&](const json& t) { return has_type(v, t.get<std::string>()); });
            if (!ok) err("expected type " + (it->is_array() ? it->dump() : it->get<std::string>()) + ", got " + type_of(v));
        }
        if (auto it = s.find("enum"); it != s.end() && std::find(it->begin(), it->end(), v) == it->end())
            err("value " + brief(v) + " is not one of " + brief(*it));
        if (auto it = s.find("const"); it != s.end() && *it != v)
            err("value " + brief(v) + " does not equal const " + brief(*it));

        if (v.is_number()) {
            if (auto it = s.find("minimum"); it != s.end() && v < *it)
                err(brief(v) + " is less than minimum " + brief(*it));
            if (auto it = s.find("maximum"); it != s.end() && v > *it)
                err(brief(v) + " is greater than maximum " + brief(*it));
        }
        if (v.is_string()) check_string(s, v.get_ref<const std::string&>(), err);
        if (v.is_array()) {
            if (auto it = s.find("minItems"); it != s.end() && v.size() < it->get<std::size_t>())
                err("array has " + std::to_string(v.size()) + " items, fewer than minItems " + it->dump());
            if (auto it = s.find("maxItems"); it != s.end() && v.size() > it->get<std::size_t>())
                err("array has " + std::to_string(v.size()) + " items, more than maxItems " + it->dump());
            if (auto it = s.find("items"); it != s.end())
                for (std::size_t i = 0; i < v.size(); ++i) validate(*it, v[i], child(path, i), out);
        }
        if (v.is_object()) check_object(s, v, path, out, err);

        if (auto it = s.find("anyOf"); it != s.end()) {
            std::string summary;
            if (count_matches(*it, v, path, refs, summary).empty())
                err("value matches none of the " + std::to_string(it->size()) + " anyOf alternatives: " + summary);
        }
        if (auto it = s.find("oneOf"); it != s.end()) {
            std::string summary;
            std::vector<std::size_t> hits = count_matches(*it, v, path, refs, summary);
            if (hits.empty()) {
                err("value matches none of the " + std::to_string(it->size()) + " oneOf alternatives: " + summary);
            } else if (hits.size() > 1) {
                std::string list;
                for (std::size_t h : hits) list += (list.empty() ? "#" : ", #") + std::to_string(h);
                err("value matches " + std::to_string(hits.size()) + " oneOf alternatives (" + list +
                    "); exactly one is required");
            }
        }
    }

private:
    template <class Err>
    void check_string(const json& s, const std::string& str, Err& err) {
        if (auto it = s.find("minLength"); it != s.end()) {
            // Length in code points: count the bytes that do not continue a UTF-8 sequence.
            std::size_t len = std::count_if(str.begin(), str.end(), [](char c) { return (c & 0xC0) != 0x80; });
            if (len < it->get<std::size_t>())
                err("string of length " + std::to_string(len) + " is shorter than minLength " + it->dump());
        }
        if (auto it = s.find("pattern"); it != s.end() && !std::regex_search(str, regex_for(it->get<std::string>())))
            err("string " + brief(json(str)) + " does not match pattern " + brief(*it));
    }

    template <class Err>
    void check_object(const json& s, const json& v, const std::string& path, std::vector<SchemaError>& out, Err& err) {
        if (auto it = s.find("required"); it != s.end())
            for (const auto& name : *it)
                if (!v.contains(name.get<std::string>()))
                    err("required property '" + name.get<std::string>() + "' is missing");

        const json empty = json::object();
        auto props_it = s.find("properties");
        const json& props = props_it != s.end() ? *props_it : empty;
        for (const auto& [name, sub] : props.items())
            if (auto p = v.find(name); p != v.end()) validate(sub, *p, child(path, name), out);

        auto extra = s.find("additionalProperties");
        if (extra == s.end()) return;
        for (const auto& [name, value] : v.items()) {
            if (props.contains(name)) continue;
            if (extra->is_boolean() && !extra->get<bool>())
                err("property '" + name + "' is not allowed (additionalProperties is false)");
            else
                validate(*extra, value, child(path, name), out);
        }
    }

    // Validates `v` against every alternative; returns the indices that matched and, when none did,
    // a summary of the first few errors of each alternative.
    std::vector<std::size_t> count_matches(const json& alternatives, const json& v, const std::string& path,
                                           const std::vector<const json*>& refs, std::string& summary) {
        std::vector<std::size_t> hits;
        for (std::size_t i = 0; i < alternatives.size(); ++i) {
            std::vector<SchemaError> sub;
            validate(alternatives[i], v, path, sub, refs);
            if (sub.empty()) {
                hits.push_back(i);
                continue;
            }
            summary += (summary.empty() ? "" : "; ") + std::string("[#") + std::to_string(i) + "]";
            for (std::size_t k = 0; k < sub.size() && k < 3; ++k)
                summary += " " + (sub[k].instance_path.empty() ? "(root)" : sub[k].instance_path) + ": " + sub[k].message;
            if (sub.size() > 3) summary += " (+" + std::to_string(sub.size() - 3) + " more)";
        }
        return hits;
    }

    const std::regex& regex_for(const std::string& pattern) {
        auto it = regex_cache_.find(pattern);
        if (it == regex_cache_.end())
            it = regex_cache_.emplace(pattern, std::regex(pattern, std::regex::ECMAScript)).first;
        return it->second;
    }

    const json& root_;
    std::map<std::string, std::regex> regex_cache_;
};

}  // namespace

std::vector<SchemaError> validate_json_schema(const nlohmann::json& schema, const nlohmann::json& document) {
    std::vector<SchemaError> errors;
    check_schema(schema, schema, "#", errors);
    if (!errors.empty()) return errors;  // a broken schema cannot give trustworthy results
    Validator(schema).validate(schema, document, "", errors);
    return errors;
}

}  // namespace grading
