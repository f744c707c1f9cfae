#include "fake_behaviour.hpp"

#include <fstream>
#include <iterator>

std::string fake_behaviour_of(const std::string& tail)
{
    const std::string key = "FAKE_RUNNER_BEHAVIOUR=";
    const std::size_t at = tail.rfind(key);
    if (at == std::string::npos) return "correct";
    const std::size_t end = tail.find(';', at + key.size());
    if (end == std::string::npos) return "correct";
    const std::string behaviour = tail.substr(at + key.size(), end - at - key.size());
    return behaviour.empty() ? "correct" : behaviour;
}

std::string fake_behaviour()
{
    std::ifstream self("/proc/self/exe", std::ios::binary);
    if (!self) return "correct";
    self.seekg(0, std::ios::end);
    const std::streamoff size = self.tellg();
    const std::streamoff want = 4096;
    self.seekg(size > want ? size - want : 0);
    const std::string tail((std::istreambuf_iterator<char>(self)), std::istreambuf_iterator<char>());
    return fake_behaviour_of(tail);
}
