#!/usr/bin/env bash
# Installs the Debian packages the build and the tests need (skips what is already there).
set -euo pipefail
PKGS="cmake g++ pkg-config dpkg-dev file ccache libeigen3-dev libdnnl-dev ocl-icd-opencl-dev \
libgtest-dev libgmock-dev libdlpack-dev libonnx-dev libprotobuf-dev protobuf-compiler libhdf5-dev libzip-dev nlohmann-json3-dev libopenmpi-dev openmpi-bin abigail-tools doxygen clang libclang-rt-14-dev libomp-dev python3-numpy python3-pytest clang-format \
swig python3-dev python3-venv python3-pip python3-setuptools python3-wheel \
default-jdk-headless junit5 mono-mcs mono-runtime golang-go \
python3-scipy python3-yaml python3-h5py python3-six python3-keras-applications python3-keras-preprocessing"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends $missing
fi
