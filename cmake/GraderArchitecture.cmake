# The GPU the grader builds for, decided before project() enables CUDA. Detected from nvidia-smi
# when there is a GPU, otherwise sm_90 (the course's H100). Override with -DCMAKE_CUDA_ARCHITECTURES=NN.
# Included by the repository's CMakeLists.txt and by the students' handout (student_template/).
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  execute_process(COMMAND nvidia-smi --query-gpu=compute_cap --format=csv,noheader
                  OUTPUT_VARIABLE _grader_cc RESULT_VARIABLE _grader_smi_rc ERROR_QUIET
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(_grader_smi_rc EQUAL 0 AND _grader_cc MATCHES "^([0-9]+)\\.([0-9]+)")
    set(CMAKE_CUDA_ARCHITECTURES "${CMAKE_MATCH_1}${CMAKE_MATCH_2}" CACHE STRING "GPU architecture to build for")
  else()
    set(CMAKE_CUDA_ARCHITECTURES "90" CACHE STRING "GPU architecture to build for")
  endif()
endif()
