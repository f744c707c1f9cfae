# `cmake --install build --prefix DIR`: a grader that works from DIR, laid out as in the build tree
# because `grade` finds its pieces from its own executable (/proc/self/exe):
#   DIR/bin/grade                      the command
#   DIR/bin/grader_reference_runner    the references, timed beside each submission
#   DIR/lib/grader_runner.o            the runner every submission is linked with
#   DIR/lib/reference-ptx/             each reference's PTX, which submissions' PTX is compared with
#   DIR/share/pmpp-grader/             the students' contract, the results and rubric schemas, an
#                                      example rubric
# The compiler stays the one the grader was built with (grade --nvcc overrides it).
install(TARGETS grade grader_reference_runner RUNTIME DESTINATION bin)
install(FILES ${GRADER_RUNNER_OBJECT} DESTINATION lib)
if(GRADER_REFERENCE_PTX_DIR)
  install(DIRECTORY ${GRADER_REFERENCE_PTX_DIR} DESTINATION lib)
endif()
install(FILES ${PROJECT_SOURCE_DIR}/docs/CONTRACT.md ${PROJECT_SOURCE_DIR}/grading/results.schema.json
              ${PROJECT_SOURCE_DIR}/grading/rubric.schema.json ${PROJECT_SOURCE_DIR}/grading/rubric.example.json
        DESTINATION share/pmpp-grader)
