# Makes the Gradescope autograder package (run by the gradescope_autograder target):
#   cmake -D SOURCE_DIR=<repository> -D OUTPUT_DIR=<dir> -D RUBRIC=<rubric.json> -D ARCHITECTURE=90
#         -P package.cmake
# OUTPUT_DIR/package/ holds what OUTPUT_DIR/autograder.zip holds:
#   setup.sh, run_autograder     Gradescope's two scripts
#   config/rubric.json           the rubric grade scores with
#   config/cuda_architecture     the GPU of the grading machines, for setup.sh's build
#   config/grade_args            more grade options, one per line (empty)
#   source/                      the grader's sources, references included (Gradescope keeps the
#                                package from students), without tests or the students' handout
foreach(var SOURCE_DIR OUTPUT_DIR RUBRIC ARCHITECTURE)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "package.cmake needs -D ${var}=...")
  endif()
endforeach()

set(package ${OUTPUT_DIR}/package)
file(REMOVE_RECURSE ${package})
file(REMOVE ${OUTPUT_DIR}/autograder.zip)
file(MAKE_DIRECTORY ${package}/config ${package}/source/grading ${package}/source/docs)

file(COPY ${SOURCE_DIR}/grading/integrations/gradescope/setup.sh ${SOURCE_DIR}/grading/integrations/gradescope/run_autograder
     DESTINATION ${package})
file(COPY_FILE ${RUBRIC} ${package}/config/rubric.json)
file(WRITE ${package}/config/cuda_architecture "${ARCHITECTURE}\n")
file(WRITE ${package}/config/grade_args "")

file(COPY ${SOURCE_DIR}/CMakeLists.txt ${SOURCE_DIR}/cmake ${SOURCE_DIR}/harness ${SOURCE_DIR}/reference
     DESTINATION ${package}/source)
file(COPY ${SOURCE_DIR}/grading DESTINATION ${package}/source PATTERN integrations EXCLUDE)
file(COPY ${SOURCE_DIR}/docs/CONTRACT.md DESTINATION ${package}/source/docs)

file(GLOB top LIST_DIRECTORIES true RELATIVE ${package} ${package}/*)
execute_process(COMMAND ${CMAKE_COMMAND} -E tar cf ${OUTPUT_DIR}/autograder.zip --format=zip ${top}
                WORKING_DIRECTORY ${package} RESULT_VARIABLE zipped)
if(NOT zipped EQUAL 0)
  message(FATAL_ERROR "could not write ${OUTPUT_DIR}/autograder.zip")
endif()
message(STATUS "Gradescope package written to ${OUTPUT_DIR}/autograder.zip")
