// The pool of host uids, one per grading (harness/uid_slot.hpp): two gradings never get one uid, a
// slot is free again once its process has ended, accounts' uids are never used, and the lock files
// cannot be redirected. Each take() opens its own lock file, so two takes in this process stand in
// for two gradings (flock treats each open file apart); a forked child stands in for another process.
#include <doctest/doctest.h>

#include <filesystem>
#include <set>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness/uid_slot.hpp"

namespace fs = std::filesystem;
using harness::UidPool;
using harness::UidSlot;

namespace {

struct TempPool {
    fs::path dir;
    UidPool pool;
    TempPool()
    {
        std::string pattern = (fs::temp_directory_path() / "grader-uid-slot-XXXXXX").string();
        REQUIRE(::mkdtemp(pattern.data()) != nullptr);  // 0700, ours
        dir = pattern;
        pool.directory = (dir / "uids").string();
        pool.base = 3'000'000'000u;
        pool.count = 4;
        pool.taken = [](uid_t) { return false; };
    }
    ~TempPool()
    {
        std::error_code ignored;
        fs::remove_all(dir, ignored);
    }
};

std::unique_ptr<UidSlot> take(const UidPool& pool)
{
    std::string why;
    std::unique_ptr<UidSlot> slot = UidSlot::take(pool, why);
    CHECK(why.empty() == (slot != nullptr));
    return slot;
}

}  // namespace

TEST_CASE("two gradings get two uids; a slot is free again once released")
{
    TempPool t;
    auto first = take(t.pool);
    auto second = take(t.pool);
    REQUIRE(first);
    REQUIRE(second);
    CHECK(first->index() == 0);
    CHECK(first->uid() == 3'000'000'000u);
    CHECK(second->index() == 1);
    CHECK(second->uid() == 3'000'000'001u);
    // The directory was made the grader's alone.
    struct stat info {};
    REQUIRE(::stat(t.pool.directory.c_str(), &info) == 0);
    CHECK((info.st_mode & 0777) == 0700);

    first.reset();
    auto third = take(t.pool);
    REQUIRE(third);
    CHECK(third->index() == 0);
}

TEST_CASE("a slot held by another process is skipped, and free once that process has exited")
{
    TempPool t;
    int ready[2], go[2];
    REQUIRE(::pipe(ready) == 0);
    REQUIRE(::pipe(go) == 0);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        std::string why;
        auto held = UidSlot::take(t.pool, why);
        const char index = held ? static_cast<char>('0' + held->index()) : 'x';
        (void)!::write(ready[1], &index, 1);
        char ignored;
        (void)!::read(go[0], &ignored, 1);  // holds it until told to go, then exits without releasing
        ::_exit(0);
    }
    char index = 0;
    REQUIRE(::read(ready[0], &index, 1) == 1);
    CHECK(index == '0');
    auto mine = take(t.pool);
    REQUIRE(mine);
    CHECK(mine->index() == 1);

    REQUIRE(::write(go[1], "g", 1) == 1);
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    auto after = take(t.pool);
    REQUIRE(after);
    CHECK(after->index() == 0);
    for (int fd : {ready[0], ready[1], go[0], go[1]}) ::close(fd);
}

TEST_CASE("uids and gids of this machine's accounts are never taken")
{
    TempPool t;
    t.pool.taken = [&](uid_t id) { return id == t.pool.base || id == t.pool.base + 1; };
    auto slot = take(t.pool);
    REQUIRE(slot);
    CHECK(slot->index() == 2);

    // The real passwd and group databases: uid 0 (root) is in every one, and is never taken anyway.
    t.pool.taken = nullptr;
    t.pool.base = 0;
    t.pool.count = 2000;
    auto low = take(t.pool);
    REQUIRE(low);
    CHECK(low->uid() > 0);
    CHECK_FALSE(harness::is_known_id(low->uid()));
    for (uid_t id = 0; id < low->uid(); ++id) {
        CAPTURE(id);
        CHECK(harness::is_known_id(id));
    }
    CHECK(harness::is_known_id(0));
}

TEST_CASE("with every slot held there is none, and why")
{
    TempPool t;
    t.pool.count = 2;
    auto a = take(t.pool), b = take(t.pool);
    REQUIRE(a);
    REQUIRE(b);
    std::string why;
    CHECK(UidSlot::take(t.pool, why) == nullptr);
    CHECK(why.find("no free uid among 2") != std::string::npos);
}

TEST_CASE("a directory or lock file that is not the grader's own is refused")
{
    TempPool t;
    fs::create_directory(t.pool.directory);
    ::chmod(t.pool.directory.c_str(), 0777);  // others could plant lock files
    std::string why;
    CHECK(UidSlot::take(t.pool, why) == nullptr);
    CHECK(why.find("not the grader's own") != std::string::npos);
    ::chmod(t.pool.directory.c_str(), 0700);

    // A link where slot 0's lock goes: never followed, the slot skipped.
    const fs::path elsewhere = t.dir / "elsewhere";
    fs::create_symlink(elsewhere, fs::path(t.pool.directory) / "slot-0.lock");
    auto slot = take(t.pool);
    REQUIRE(slot);
    CHECK(slot->index() == 1);
    CHECK_FALSE(fs::exists(elsewhere));
    if (::geteuid() == 0) {
        // Another user's file as slot 2's lock (root only can make one here).
        const std::string other = t.pool.directory + "/slot-2.lock";
        REQUIRE(::close(::creat(other.c_str(), 0600)) == 0);
        REQUIRE(::chown(other.c_str(), 65534, 65534) == 0);
        auto next = take(t.pool);
        REQUIRE(next);
        CHECK(next->index() == 3);
    }
}
