# Process isolation, the private channel and the sandbox. The fixture programs (tests/fixtures) are
# run by these tests, which find them through GRADER_FIXTURE_DIR.
set(_grader_fixtures fixture_hang fixture_crash fixture_abort fixture_fake_json fixture_exit_code
                     fixture_channel_peer fixture_flood fixture_sandbox_probe)

grader_add_unit_test(test_process SOURCES test_process.cpp LIBS harness TIMEOUT 60)
target_compile_definitions(test_process PRIVATE "GRADER_FIXTURE_DIR=\"$<TARGET_FILE_DIR:fixture_hang>\"")
add_dependencies(test_process ${_grader_fixtures})

# Control groups per process tree: parsing everywhere, the limits themselves where the machine allows.
grader_add_unit_test(test_cgroup SOURCES test_cgroup.cpp LIBS harness TIMEOUT 60)
target_compile_definitions(test_cgroup PRIVATE "GRADER_FIXTURE_DIR=\"$<TARGET_FILE_DIR:fixture_hang>\"")
add_dependencies(test_cgroup ${_grader_fixtures})

grader_add_unit_test(test_channel SOURCES test_channel.cpp LIBS harness nlohmann_json::nlohmann_json TIMEOUT 60)
target_compile_definitions(test_channel PRIVATE "GRADER_FIXTURE_DIR=\"$<TARGET_FILE_DIR:fixture_hang>\"")
add_dependencies(test_channel ${_grader_fixtures})

# The bubblewrap sandbox. Its own main: without bubblewrap, or where it cannot create namespaces,
# it prints why and exits 77, which CTest reports as skipped.
add_executable(test_sandbox test_sandbox.cpp)
target_link_libraries(test_sandbox PRIVATE doctest::doctest harness)
target_compile_definitions(test_sandbox PRIVATE "GRADER_FIXTURE_DIR=\"$<TARGET_FILE_DIR:fixture_hang>\""
                                                "GRADER_SOURCE_DIR=\"${PROJECT_SOURCE_DIR}\"")
add_dependencies(test_sandbox ${_grader_fixtures})
add_test(NAME test_sandbox COMMAND test_sandbox)
set_tests_properties(test_sandbox PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77 LABELS "host")

# Red team: toolkits below /usr that the run sandbox's list misses (root; else skipped).
add_executable(test_sandbox_toolkit_redteam test_sandbox_toolkit_redteam.cpp)
target_link_libraries(test_sandbox_toolkit_redteam PRIVATE doctest::doctest harness)
target_compile_definitions(test_sandbox_toolkit_redteam PRIVATE "GRADER_FIXTURE_DIR=\"$<TARGET_FILE_DIR:fixture_hang>\"")
add_dependencies(test_sandbox_toolkit_redteam ${_grader_fixtures})
add_test(NAME test_sandbox_toolkit_redteam COMMAND test_sandbox_toolkit_redteam)
# RUN_SERIAL: it plants folders below the host's /usr/local/lib, which every sandbox made meanwhile
# by another test lists and then fails to bind once they are gone ("bwrap: Can't mkdir
# /usr/local/lib/python3.99-grader-redteam-N": test_sandbox failed so beside it under ctest -j2).
set_tests_properties(test_sandbox_toolkit_redteam PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77 LABELS "host"
                     RUN_SERIAL TRUE)
