// The one doctest main shared by every unit-test program (see grader_add_unit_test). A program holds
// the test files of a whole folder, and each CTest entry picks its own files' cases with
// --source-file (and a range of them with --first/--last): a run in which no case matched those
// filters fails, saying so, instead of passing with nothing tested.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

namespace {

int test_cases_run = 0;

// Counts the test cases that ran (a subcase's reentry into its case counts again: only zero matters).
struct CountingListener : doctest::IReporter {
    explicit CountingListener(const doctest::ContextOptions&) {}
    void report_query(const doctest::QueryData&) override {}
    void test_run_start() override {}
    void test_run_end(const doctest::TestRunStats&) override {}
    void test_case_start(const doctest::TestCaseData&) override { ++test_cases_run; }
    void test_case_reenter(const doctest::TestCaseData&) override {}
    void test_case_end(const doctest::CurrentTestCaseStats&) override {}
    void test_case_exception(const doctest::TestCaseException&) override {}
    void subcase_start(const doctest::SubcaseSignature&) override {}
    void subcase_end() override {}
    void log_assert(const doctest::AssertData&) override {}
    void log_message(const doctest::MessageData&) override {}
    void test_case_skipped(const doctest::TestCaseData&) override {}
};

}  // namespace

DOCTEST_REGISTER_LISTENER("count_test_cases", 1, CountingListener);

int main(int argc, char** argv)
{
    doctest::Context context(argc, argv);
    const int result = context.run();
    if (context.shouldExit()) return result;  // --help, --list-test-cases and the like
    if (test_cases_run == 0) {
        std::fprintf(stderr,
                     "no test case ran: none of this program's cases matched its filters "
                     "(--source-file, --test-case, --first/--last)\n");
        return result == 0 ? 1 : result;
    }
    return result;
}
