// The translation unit of grader_test_pch (tests/CMakeLists.txt): the precompiled header that every
// test program of grader_add_unit_test reuses is built with it. Nothing of its own.
