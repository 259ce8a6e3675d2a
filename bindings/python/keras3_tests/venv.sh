#!/usr/bin/env bash
# The Keras 3 venv (KB_KERAS3_VENV, default ~/.cache/kb-keras3), made when missing or out of
# date: Keras 3.15.1 on JAX, h5py, pytest, ONNX, ONNX Runtime and TensorBoard (its reader of
# event files). Sourced by run.sh and by bench/real_models.sh; sets VENV.
VENV=${KB_KERAS3_VENV:-$HOME/.cache/kb-keras3}
if ! "$VENV/bin/python" -c 'import importlib.metadata as m, pytest, onnx, onnxruntime, tensorboard; assert m.version("keras") == "3.15.1"' 2>/dev/null; then
  /usr/bin/python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check keras==3.15.1 jax==0.10.2 jaxlib==0.10.2 h5py \
    pytest onnx==1.20.1 onnxruntime==1.23.2 tensorboard==2.21.0
fi
