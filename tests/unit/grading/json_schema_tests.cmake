grader_add_unit_test(test_json_schema PROGRAM unit_grading SOURCES test_json_schema.cpp LIBS grading_core TIMEOUT 60)
target_compile_definitions(unit_grading PRIVATE
  GRADER_SCHEMA_FILE="${PROJECT_SOURCE_DIR}/grading/results.schema.json")
