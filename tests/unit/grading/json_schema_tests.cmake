grader_add_unit_test(test_json_schema SOURCES test_json_schema.cpp LIBS grading_core TIMEOUT 60)
target_compile_definitions(test_json_schema PRIVATE
  GRADER_SCHEMA_FILE="${PROJECT_SOURCE_DIR}/grading/results.schema.json")
