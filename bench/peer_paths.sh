# shellcheck shell=bash disable=SC2034  # sourced: the scripts that source it read these
# Where the benchmark peers' virtual environments live, sourced by the scripts in bench/ from the
# repository root. PEERS (default build/peers, beside the build outputs and ignored by git) holds
# torch/ (PyTorch and NumPy) and tensorflow/; TORCH_PYTHON, TF_PYTHON and NUMPY_PYTHON name other
# interpreters instead.
peers=${PEERS:-build/peers}
torch_py=${TORCH_PYTHON:-$peers/torch/bin/python}
tf_py=${TF_PYTHON:-$peers/tensorflow/bin/python}
np_py=${NUMPY_PYTHON:-$torch_py}
