# The GPU the grader builds for, decided before project() enables CUDA. Detected from nvidia-smi
# when there is a GPU, otherwise sm_90 (the course's H100). Override with -DCMAKE_CUDA_ARCHITECTURES=NN.
# Included by the repository's CMakeLists.txt and by the students' handout (student_template/).
#
# GRADER_GPU_FOUND says whether nvidia-smi saw a GPU at this configure (asked every time: a build
# tree may move to another machine). Without one everything builds and `grade --list` works, but
# nothing can be graded here: said now, not after minutes of building; the demo target says so in
# one line and the GPU tests are reported as not run (GraderHelpers.cmake). -DGRADER_GPU_FOUND=ON
# overrides a wrong answer (a GPU that nvidia-smi cannot see).
execute_process(COMMAND nvidia-smi --query-gpu=compute_cap --format=csv,noheader
                OUTPUT_VARIABLE _grader_cc RESULT_VARIABLE _grader_smi_rc ERROR_VARIABLE _grader_smi_error
                OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_STRIP_TRAILING_WHITESPACE)
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  if(_grader_smi_rc EQUAL 0 AND _grader_cc MATCHES "^([0-9]+)\\.([0-9]+)")
    set(CMAKE_CUDA_ARCHITECTURES "${CMAKE_MATCH_1}${CMAKE_MATCH_2}" CACHE STRING "GPU architecture to build for")
  else()
    set(CMAKE_CUDA_ARCHITECTURES "90" CACHE STRING "GPU architecture to build for")
  endif()
endif()
if(NOT DEFINED GRADER_GPU_FOUND)
  if(_grader_smi_rc EQUAL 0 AND _grader_cc MATCHES "^[0-9]+\\.[0-9]+")
    set(GRADER_GPU_FOUND TRUE)
  else()
    set(GRADER_GPU_FOUND FALSE)
    if(_grader_smi_rc MATCHES "No such file|not found")
      set(_grader_no_gpu_why "nvidia-smi is not installed")
    else()
      string(REGEX REPLACE "\n.*" "" _grader_no_gpu_why "nvidia-smi found none: ${_grader_smi_error}${_grader_cc}")
    endif()
    message(NOTICE "\n"
            "  No GPU to grade on: ${_grader_no_gpu_why}.\n"
            "  Everything builds (for sm_${CMAKE_CUDA_ARCHITECTURES}) and `grade --list` works, but grading runs every\n"
            "  case on an NVIDIA GPU: here it stops at once and says why. (-DGRADER_GPU_FOUND=ON if this\n"
            "  machine does have a GPU.)\n")
  endif()
endif()
