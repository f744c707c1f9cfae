// The one doctest main shared by every unit-test executable (see grader_add_unit_test).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
