# cmake -P GraderGradeStep.cmake -- GRADE_COMMAND...
# A build step that grades (the handout's grade_all and grade_<name>, the repository's demo): grade's
# exit status 1 means "graded, and some case failed", which is the answer the student asked for,
# not a broken build, so the step succeeds and grade's own last line ("graded: 3 of 24 cases fail
# in 1 exercise") is what the console ends with. 2 (a usage error) and 3 (this machine cannot
# grade: no GPU, no compiler, ...) still fail the step, after grade's own message saying why.
cmake_minimum_required(VERSION 3.25)
set(command)
set(after_separator FALSE)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(k RANGE ${last})
  if(after_separator)
    list(APPEND command "${CMAKE_ARGV${k}}")
  elseif(CMAKE_ARGV${k} STREQUAL "--")
    set(after_separator TRUE)
  endif()
endforeach()
if(NOT command)
  message(FATAL_ERROR "usage: cmake -P GraderGradeStep.cmake -- grade ARGS...")
endif()
execute_process(COMMAND ${command} RESULT_VARIABLE status)
if(status EQUAL 0 OR status EQUAL 1)
  return()
endif()
# grade printed why; the step fails with its status.
message(FATAL_ERROR "grade ended with exit status ${status}: nothing was graded (its message above says why)")
