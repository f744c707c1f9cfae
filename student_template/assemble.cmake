# Assembles the students' handout (run by the `handout` target of student_template/handout.cmake):
#   cmake -D SOURCE_DIR=<repository> -D OUTPUT_DIR=<handout> -D REFERENCES_OBJECT=<grader_references.o>
#         -D GRADER_VERSION=x.y.z -D CUDA_VERSION=13.0.88 -D "ARCHITECTURES=75-real;..."
#         -D "CUDA_FLAGS=<the flags the references were compiled with>" -P assemble.cmake
#
#   OUTPUT_DIR/README.md, CMakeLists.txt, CMakePresets.json, .gitignore   student_template/, copied
#   OUTPUT_DIR/docs/CONTRACT.md                                            the contract
#   OUTPUT_DIR/exercises/NN_<name>/{README.md,<name>.cu}                   the tasks and stubs
#   OUTPUT_DIR/grader/cmake/, grader/harness/, grader/grading/             the grader's sources
#   OUTPUT_DIR/grader/references/grader_references.o                       the references, compiled
#   OUTPUT_DIR/grader/references/references.cmake                          what they were built with
# Nothing else: reference/ is never read here, and the course's integrations stay behind.
foreach(var SOURCE_DIR OUTPUT_DIR REFERENCES_OBJECT GRADER_VERSION CUDA_VERSION ARCHITECTURES)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "assemble.cmake needs -D ${var}=...")
  endif()
endforeach()

if(" ${CUDA_FLAGS} " MATCHES " (-G|-lineinfo|--generate-line-info|--device-debug)[ =]")
  message(FATAL_ERROR "the CUDA flags '${CUDA_FLAGS}' put line information into the references' device code; "
                      "assemble the handout from a build without -G or -lineinfo")
endif()

file(REMOVE_RECURSE ${OUTPUT_DIR})
file(MAKE_DIRECTORY ${OUTPUT_DIR}/docs ${OUTPUT_DIR}/exercises ${OUTPUT_DIR}/grader/references)

set(template ${SOURCE_DIR}/student_template)
file(COPY ${template}/README.md ${template}/CMakeLists.txt ${template}/CMakePresets.json DESTINATION ${OUTPUT_DIR})
file(COPY_FILE ${template}/gitignore ${OUTPUT_DIR}/.gitignore)
file(COPY ${SOURCE_DIR}/docs/CONTRACT.md DESTINATION ${OUTPUT_DIR}/docs)

# exercises/NN_<name>/ keeps its number; the stub keeps the name the grader looks for, <name>.cu.
file(GLOB exercise_dirs LIST_DIRECTORIES true ${SOURCE_DIR}/exercises/[0-9][0-9]_*)
set(count 0)
foreach(dir ${exercise_dirs})
  get_filename_component(folder ${dir} NAME)
  string(REGEX REPLACE "^[0-9][0-9]_" "" name ${folder})
  if(NOT EXISTS ${dir}/README.md OR NOT EXISTS ${dir}/${name}.cu)
    message(FATAL_ERROR "exercises/${folder} needs README.md and ${name}.cu")
  endif()
  file(COPY ${dir}/README.md ${dir}/${name}.cu DESTINATION ${OUTPUT_DIR}/exercises/${folder})
  math(EXPR count "${count} + 1")
endforeach()

# The grader, from source: the same code that grades the course, apart from the references.
file(COPY ${SOURCE_DIR}/cmake/GraderArchitecture.cmake ${SOURCE_DIR}/cmake/GraderDependencies.cmake
          ${SOURCE_DIR}/cmake/GraderHelpers.cmake ${SOURCE_DIR}/cmake/GraderGradeStep.cmake
     DESTINATION ${OUTPUT_DIR}/grader/cmake)
file(COPY ${SOURCE_DIR}/harness DESTINATION ${OUTPUT_DIR}/grader)
file(COPY ${SOURCE_DIR}/grading DESTINATION ${OUTPUT_DIR}/grader PATTERN integrations EXCLUDE)

file(COPY ${REFERENCES_OBJECT} DESTINATION ${OUTPUT_DIR}/grader/references)
file(WRITE ${OUTPUT_DIR}/grader/references/references.cmake
     "# Written by the grader's student_template/assemble.cmake: what grader_references.o was built with.\n"
     "set(GRADER_VERSION ${GRADER_VERSION})\n"
     "set(GRADER_REFERENCES_CUDA_VERSION ${CUDA_VERSION})\n"
     "set(GRADER_REFERENCES_ARCHITECTURES \"${ARCHITECTURES}\")\n")
message(STATUS "handout written to ${OUTPUT_DIR} (${count} exercises)")
