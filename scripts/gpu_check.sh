set -x
# Recreate .carry (Eigen, GoogleTest for the GPU machine, which has no apt):
#   mkdir -p .carry/usr/include .carry/usr/lib/x86_64-linux-gnu/cmake .carry/usr/share/eigen3
#   cp -r /usr/include/{eigen3,gtest,gmock} .carry/usr/include/
#   cp /usr/lib/x86_64-linux-gnu/lib{gtest,gtest_main,gmock,gmock_main}.a .carry/usr/lib/x86_64-linux-gnu/
#   cp -r /usr/lib/x86_64-linux-gnu/cmake/GTest .carry/usr/lib/x86_64-linux-gnu/cmake/
#   cp -r /usr/share/eigen3/cmake .carry/usr/share/eigen3/
#   (cd /tmp && apt-get download libdnnl-dev libdnnl2 ocl-icd-opencl-dev ocl-icd-libopencl1 \
#      opencl-c-headers opencl-clhpp-headers && for f in *.deb; do dpkg -x $f $OLDPWD/.carry; done)
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
which cmake g++ nvcc ninja; cmake --version | head -1
export PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=$PWD/.carry/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
cmake -S . -B build-gpu -G Ninja -DCMAKE_PREFIX_PATH=$PWD/.carry/usr -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release -DKB_WERROR=OFF > $OUT/configure.log 2>&1 || { tail -30 $OUT/configure.log; exit 1; }
cmake --build build-gpu -j16 --target kbackend kbackend_cuda kb_cuda_tests device_info train_mlp kb_bench > $OUT/build.log 2>&1 || { grep -E "error" $OUT/build.log | head -30; tail -20 $OUT/build.log; exit 1; }
./build-gpu/tests/device_info
./build-gpu/tests/kb_cuda_tests 2>&1 | tee $OUT/cuda_tests.log | tail -40
./build-gpu/train_mlp examples/data/digits.csv | tail -3
KB_DEVICE=cpu ./build-gpu/train_mlp examples/data/digits.csv | tail -1
bash scripts/gpu_bench.sh 2>&1 | grep -E "^\{" | tee $OUT/bench_all.jsonl
# The NumPy reference suite through the GPU (the default device when there is one).
if python3 -c "import numpy, pytest" 2>/dev/null; then
  KBACKEND_LIB=$PWD/build-gpu/libkbackend.so python3 -m pytest -q -p no:cacheprovider tests/reference 2>&1 | tail -3
fi
