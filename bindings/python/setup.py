"""pip install bindings/python: the extension is built by the project's CMake (SWIG + the native
library), then copied into the package with libkbackend.so.1 next to it (the extension's RPATH is
$ORIGIN). Offline: pass --no-build-isolation (setuptools and wheel from the system).

Environment:
  KBACKEND_BUILD_DIR  the CMake build folder of the repository to use (default: build-bind at
                      the repository root, the folder bindings/run_tests.sh uses). When it has no
                      CMakeCache.txt yet it is configured for this Python; then the target
                      kbackend_python is built there (CMAKE_BUILD_PARALLEL_LEVEL jobs, default 2).
  KBACKEND_CUDA_PLUGIN the CUDA plugin to put in the package (default: the build folder's, if
                      it has one; bindings/python/build_wheel.sh takes build/'s).
"""
import os
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def project_version():
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        return re.search(r"project\(kbackend VERSION ([0-9.]+)", f.read()).group(1)


def build_folder():
    return os.path.abspath(os.environ.get("KBACKEND_BUILD_DIR") or os.path.join(ROOT, "build-bind"))


class CMakeBuild(build_ext):
    """Builds (or finds) the SWIG extension with CMake and copies it into the package."""

    def build_extension(self, ext):
        build_dir = build_folder()
        if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
            # the interpreter itself, not a venv's link to it (the venv may go away)
            python = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
            subprocess.check_call(["cmake", "-S", ROOT, "-B", build_dir, "-DKB_BUILD_TESTS=OFF",
                                   "-DKB_PYTHON=ON", "-DPython3_EXECUTABLE=" + python])
        env = dict(os.environ)
        env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", "2")
        subprocess.check_call(["cmake", "--build", build_dir, "--target", "kbackend_python"],
                              env=env)
        built = os.path.join(build_dir, "bindings", "python", "kbackend")
        extension = os.path.join(built, "_kbackend.so")
        if not os.path.exists(extension):
            raise RuntimeError("%s is missing: build the CMake target kbackend_python in %s"
                               % (extension, build_dir))
        target = os.path.dirname(self.get_ext_fullpath(ext.name))
        os.makedirs(target, exist_ok=True)
        shutil.copyfile(extension, self.get_ext_fullpath(ext.name))
        shutil.copyfile(os.path.join(built, "kbackend.py"), os.path.join(target, "kbackend.py"))
        # the native library (under its soname), the library it needs from its own folder
        # (its RUNPATH has $ORIGIN) and the plugins it loads from there (CUDA, MPI, ONNX,
        # TensorBoard)
        for lib in ("libkbackend.so.1", "libkbackend_omp.so.1"):
            shutil.copyfile(os.path.realpath(os.path.join(build_dir, lib)),
                            os.path.join(target, lib))
        plugins = [os.path.join(build_dir, p)
                   for p in ("libkbackend_cuda.so", "libkbackend_mpi.so", "libkbackend_onnx.so",
                             "libkbackend_tensorboard.so")]
        if os.environ.get("KBACKEND_CUDA_PLUGIN"):
            plugins[0] = os.environ["KBACKEND_CUDA_PLUGIN"]
        for plugin in plugins:
            if os.path.exists(plugin):
                shutil.copyfile(plugin, os.path.join(target, os.path.basename(plugin)))


os.makedirs(os.path.join(build_folder(), "setuptools"), exist_ok=True)
setup(
    version=project_version(),
    ext_modules=[Extension("kbackend._kbackend", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    # setuptools' own scratch files go to the build folder too, not into the source tree
    options={"build": {"build_base": os.path.join(build_folder(), "setuptools")},
             "egg_info": {"egg_base": os.path.join(build_folder(), "setuptools")}},
    zip_safe=False,
)
