# Process isolation and the private channel. The fixture programs (tests/fixtures) are run by
# these tests, which find them through GRADER_FIXTURE_DIR.
set(_grader_fixtures fixture_hang fixture_crash fixture_abort fixture_fake_json fixture_exit_code
                     fixture_channel_peer fixture_flood)

grader_add_unit_test(test_process SOURCES test_process.cpp LIBS harness TIMEOUT 60)
target_compile_definitions(test_process PRIVATE "GRADER_FIXTURE_DIR=\"$<TARGET_FILE_DIR:fixture_hang>\"")
add_dependencies(test_process ${_grader_fixtures})

grader_add_unit_test(test_channel SOURCES test_channel.cpp LIBS harness nlohmann_json::nlohmann_json TIMEOUT 60)
target_compile_definitions(test_channel PRIVATE "GRADER_FIXTURE_DIR=\"$<TARGET_FILE_DIR:fixture_hang>\"")
add_dependencies(test_channel ${_grader_fixtures})
