grader_add_unit_test(test_json_schema SOURCES test_json_schema.cpp LIBS grading_core TIMEOUT 60)
