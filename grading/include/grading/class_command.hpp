// What `grade class` and `grade class merge` were asked (see `grade class --help`). Parsed by
// parse_class_command_line (command_line.hpp, in grading/src/class/class_command_line.cpp), run by
// run_class and run_class_merge (class_grading.hpp).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "grading/grader.hpp"

namespace grading {

// `grade class`: every student below `submissions`, each graded by a `grade` of its own.
struct ClassCommand {
    std::string submissions;  // --submissions DIR
    std::string output_dir;   // --output-dir OUT
    // The grading options for every student's `grade`, as given (checked by parsing them as one
    // grading's), and what they parse to.
    std::vector<std::string> grade_args;
    GradeOptions options;
    bool no_sandbox = false;
    std::string bwrap;
    std::vector<std::string> gpus;  // --gpus: each a CUDA_VISIBLE_DEVICES entry; empty: discovered
    // Students graded at once on each GPU: 2 (session 15, H100, 8 reference copies: 1 at once
    // 131 s, 2 140 s, 4 157 s, 8 203 s: the GPU's places and exclusive timings, not the CPU, bound
    // a class; two keep a student that hangs or compiles from leaving the GPU idle). With more
    // places (session 16): 2 at once 120-134 s, 4 at once 161 s: the exclusive timings bind.
    int per_gpu = 2;
    std::vector<std::string> regrade;  // --regrade: students graded again, their previous results kept
    int shard_index = 0, shard_count = 1;  // --shard I/N
    std::chrono::seconds student_time_limit{3600};  // one student's whole `grade`
    bool keep_work = false;
    bool quiet = false;  // no line per student, only the end
};

// `grade class merge`: the class's results from the students' results under OUT and SHARD_DIRs.
struct ClassMergeCommand {
    std::string output_dir;
    std::vector<std::string> shard_dirs;
    // --submissions DIR (optional): the roster the class's results are of; every roster student in no
    // shard's results is named (and in the results, not graded), every folder of OUT not in it left out.
    std::string submissions;
};

}  // namespace grading
