export PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=$PWD/.carry/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
cmake -S . -B build-gpu -G Ninja -DCMAKE_PREFIX_PATH=$PWD/.carry/usr -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release > $OUT/configure.log 2>&1 || tail -20 $OUT/configure.log
cmake --build build-gpu -j16 --target kbackend kbackend_cuda kb_cuda_tests kb_bench > $OUT/build.log 2>&1 || grep error $OUT/build.log | head
./build-gpu/tests/kb_cuda_tests --gtest_filter='*' 2>&1 | grep -E "OK \]|FAILED|PASSED|Failure|cpp:" | head -30
KB_LOG_PLAN=1 ./build-gpu/kb_bench cuda 10 W8 2>&1 | grep -oE "[A-Za-z]+@cpu" | sort | uniq -c | head
./build-gpu/kb_bench cuda 10 W8
