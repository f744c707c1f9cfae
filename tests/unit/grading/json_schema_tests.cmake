grader_add_unit_test(test_json_schema PROGRAM unit_grading SOURCES test_json_schema.cpp LIBS grading_core TIMEOUT 60)
