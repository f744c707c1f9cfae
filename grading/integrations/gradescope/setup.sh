#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (the package unpacked
# in /autograder/source). It installs what the grader needs, builds it from source/ and installs it
# to /autograder/grader. The image must already hold the CUDA Toolkit (nvcc) and reach a GPU at
# grading time: see README.md beside this file.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends cmake ninja-build g++ nlohmann-json3-dev libcli11-dev \
  libvalijson-dev bubblewrap
export PATH=/usr/local/cuda/bin:$PATH
if ! command -v nvcc > /dev/null; then
  echo "setup.sh: no CUDA compiler (nvcc) on this image: use a base image with the CUDA Toolkit" >&2
  exit 1
fi
# The GPU of the grading machines, as the package was made for (config/cuda_architecture).
arch=$(cat "$here/config/cuda_architecture")
cmake -S "$here/source" -B "$here/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$arch" \
  -DGRADER_BUILD_TESTS=OFF -DGRADER_BUILD_PACKAGES=OFF
cmake --build "$here/build"
cmake --install "$here/build" --prefix /autograder/grader
