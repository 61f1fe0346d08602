# Copyright the OMB regression suite authors.
#
# SPDX-License-Identifier: BSD-3-Clause
"""OSU Micro-Benchmarks, as the omb regression suite needs them.

This recipe shadows builtin's, so it keeps every version, variant and configure argument of
the builtin recipe (spack-packages v2025.11.0, pinned in spack/pins.yaml); the tests in
tests/test_spack_concretize.py check that through Spack. Differences:

* every installed benchmark directory is on PATH (the builtin one misses
  ``mpi/pt2pt/persistent`` and ``mpi/congestion``, and any directory a later release adds),
  and ``OSU_ROOT`` is set;
* a GPU build requires a GPU-aware MPI, so ``-d cuda`` cannot segfault at run time
  because the MPI was built without CUDA;
* ``+rocm`` always passes ``--enable-rocm`` (builtin releases after v2025.11.0 dropped it,
  building no ROCm code);
* ``xccl``: the NCCL/RCCL benchmarks, opt-in (v2025.11.0 has no such variant; later builtin
  releases build them by default, pulling NCCL into every CUDA build);
* ``+cuda`` links against the CUDA driver stubs, so it builds on nodes without a driver;
* ``+cuda`` 7.2 and 7.3 build with CUDA 13 (a patch: CUDA 13 changed cudaMemPrefetchAsync);
* version 7.5.2;
* stand-alone tests (``spack test run osu-micro-benchmarks``);
* no ``maintainers``: builtin's (the OSU developers) do not maintain this copy; questions
  about it go to the suite, not to them.
"""

import os
import re
import sys

from spack_repo.builtin.build_systems.autotools import AutotoolsPackage
from spack_repo.builtin.build_systems.cuda import CudaPackage
from spack_repo.builtin.build_systems.rocm import ROCmPackage

from spack.package import (
    EnvironmentModifications,
    Executable,
    SkipTest,
    conflicts,
    depends_on,
    join_path,
    license,
    patch,
    requires,
    variant,
    version,
    which,
)

#: MPI providers that can be built (or declared as externals) GPU-aware, per GPU runtime.
#: A site's MVAPICH2-GDR is declared as an external ``mvapich2+cuda``.
CUDA_AWARE_MPIS = (
    "openmpi+cuda",
    "mpich+cuda",
    "mvapich-plus+cuda",
    "mvapich2+cuda",
    "cray-mpich+cuda",
)
ROCM_AWARE_MPIS = ("openmpi+rocm", "mpich+rocm", "mvapich-plus+rocm", "cray-mpich+rocm")

#: Environment variables that let the stand-alone tests start 2 ranks as root or on one core.
TEST_LAUNCH_ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_rmaps_base_oversubscribe": "1",
    "PRTE_MCA_rmaps_default_mapping_policy": ":oversubscribe",
}


class OsuMicroBenchmarks(AutotoolsPackage, CudaPackage, ROCmPackage):
    """The OSU Micro-Benchmarks: MPI (and NCCL/RCCL) latency, bandwidth,
    collective and start-up benchmarks for CPUs and GPUs, from The Ohio State
    University."""

    homepage = "https://mvapich.cse.ohio-state.edu/benchmarks/"
    url = "https://mvapich.cse.ohio-state.edu/download/mvapich/osu-micro-benchmarks-7.4.tar.gz"

    license("BSD-3-Clause")

    version("7.5.2", sha256="618de3d0b1122f73a9229177d2da1e5cd62e431190580cb915f2605849cbbbdc")
    version("7.5.1", sha256="160d0d5e3c3cb022520ecb247e9875bb0973b1d3cadccd6c17624f8407c52e22")
    version("7.5", sha256="1cf84ac5419456202757a757c5f9a4f5c6ecd05c65783c7976421cfd6020b3b3")
    version("7.4", sha256="1edd0c2efa61999409bfb28740a7f39689a5b42b1a1b4c66d1656e5637f7cefc")
    version("7.3", sha256="8fa25b8aaa34e4b07ab3a4f30b7690ab46b038b08d204a853a9b6aa7bdb02f2f")
    version("7.2", sha256="1a4e1f2aab0e65404b3414e23bd46616184b69b6231ce9313d9c630bd6e633c1")
    version("7.1-1", sha256="85f4dd8be1df31255e232852769ae5b82e87a5fb14be2f8eba1ae9de8ffe391a")
    version("7.1", sha256="2c4c931ecaf19e8ab72a393ee732e25743208c9a58fa50023e3fac47064292cc")
    version("7.0.1", sha256="04954aea082ba1b90a461ffab82a3cee43fe2d5a60fed99f5cb4585ac7da8c66")
    version("7.0", sha256="958e2faf9f3a4a244d7baac3469acee0375447decff6026c442552f0f6f08306")
    version("6.2", sha256="bb9dbc87dcf8ec6785977a61f6fceee8febf1a682488eaab4c58cf50e4fa985f")
    version("6.1", sha256="ecccedc868264f75db4d9529af79005419a2775113c7fae8f4e4a8434362e4a7")
    version("6.0", sha256="309fb7583ff54562343b0e0df1eebde3fc245191e183be362f031ac74f4ab542")
    version("5.9", sha256="d619740a1c2cc7c02a9763931546b320d0fa4093c415ff3873c2958e121c0609")
    version(
        "5.7.1",
        sha256="cb5ce4e2e68ed012d9952e96ef880a802058c87a1d840a2093b19bddc7faa165",
        url="https://mvapich.cse.ohio-state.edu/download/mvapich/osu-micro-benchmarks-5.7.1.tgz",
    )
    version("5.7", sha256="1470ebe00eb6ca7f160b2c1efda57ca0fb26b5c4c61148a3f17e8e79fbf34590")
    version("5.6.3", sha256="c5eaa8c5b086bde8514fa4cac345d66b397e02283bc06e44cb6402268a60aeb8")
    version("5.6.2", sha256="2ecb90abd85398786823c0716d92448d7094657d3f017c65d270ffe39afc7b95")
    version("5.6.1", sha256="943c426a653a6c56200193d747755efaa4c4e6f23b3571b0e3ef81ecd21b1063")
    version("5.5", sha256="1e5a4ae5ef2b03143a815b21fefc23373c1b079cc163c2fa1ed1e0c9b83c28ad")
    version("5.4", sha256="e1ca762e13a07205a59b59ad85e85ce0f826b70f76fd555ce5568efb1f2a8f33")
    version("5.3", sha256="d7b3ad4bee48ac32f5bef39650a88f8f2c23a3050b17130c63966283edced89b")

    variant("papi", default=False, description="Count hardware events with PAPI")
    variant("graphing", default=False, description="Plot results (-G) with gnuplot")
    variant(
        "xccl",
        default=False,
        when="+cuda",
        description="Also build the NCCL benchmarks (osu_xccl_*, osu_nccl_* before 7.3)",
    )
    variant(
        "xccl", default=False, when="+rocm @7.3:", description="Also build the RCCL benchmarks"
    )

    depends_on("c", type="build")
    depends_on("cxx", type="build")
    depends_on("mpi")
    depends_on("papi", when="+papi")
    depends_on("gnuplot", when="+graphing")
    depends_on("imagemagick", when="+graphing")
    depends_on("nccl", when="+cuda +xccl")
    depends_on("rccl", when="+rocm +xccl")

    conflicts("+cuda", when="+rocm", msg="OSU is built for one GPU runtime at a time")
    # CUDA 13 replaced cudaMemPrefetchAsync(ptr, size, device, stream) with a form taking a
    # cudaMemLocation and flags (CUDA 13.0 cuda_runtime_api.h); OSU 7.2 and 7.3 call the old
    # one and do not compile (seen with CUDA 13.0 on an H100, docs/gpu-and-procurement.md).
    # 7.4 and later were not checked against CUDA 13.
    patch("osu-7.2-cuda13-prefetch.patch", when="@7.2:7.3 +cuda ^cuda@13:")
    requires(
        *(f"^[virtuals=mpi] {mpi}" for mpi in CUDA_AWARE_MPIS),
        policy="one_of",
        when="+cuda",
        msg="+cuda needs a CUDA-aware MPI: depend on e.g. ^openmpi+cuda, or declare the "
        "external MPI with +cuda (otherwise -d cuda crashes at run time)",
    )
    requires(
        *(f"^[virtuals=mpi] {mpi}" for mpi in ROCM_AWARE_MPIS),
        policy="one_of",
        when="+rocm",
        msg="+rocm needs a ROCm-aware MPI: depend on e.g. ^openmpi+rocm, or declare the "
        "external MPI with +rocm",
    )

    def setup_build_environment(self, env: EnvironmentModifications) -> None:
        if self.spec.satisfies("+cuda"):
            # configure links -lcuda; the stubs let it build on nodes without a driver.
            env.prepend_path("LIBRARY_PATH", self.spec["cuda"].prefix.lib64.stubs)

    def configure_args(self):
        spec = self.spec
        args = [f"CC={spec['mpi'].mpicc}", f"CXX={spec['mpi'].mpicxx}"]
        if spec.satisfies("+cuda"):
            args += ["--enable-cuda", f"--with-cuda={spec['cuda'].prefix}"]
            cuda_arch = spec.variants["cuda_arch"].value
            if "none" not in cuda_arch:
                args.append("NVCCFLAGS=" + " ".join(self.cuda_flags(cuda_arch)))
        if spec.satisfies("+cuda +xccl"):
            args += ["--enable-ncclomb", f"--with-nccl={spec['nccl'].prefix}"]
        if spec.satisfies("+rocm"):
            args += ["--enable-rocm", f"--with-rocm={spec['hip'].prefix}"]
            rocm_arch = spec.variants["amdgpu_target"].value
            if "none" not in rocm_arch:
                args.append("HCC_AMDGPU_TARGET=" + self.hip_flags(rocm_arch))
        if spec.satisfies("+rocm +xccl"):
            args += ["--enable-rcclomb", f"--with-rccl={spec['rccl'].prefix}"]
        if spec.satisfies("+papi"):
            args += ["--enable-papi", f"--with-papi={spec['papi'].prefix}"]
        if spec.satisfies("+graphing"):
            args += [
                f"--with-convert={spec['imagemagick'].prefix.bin}",
                f"--with-gnuplot={spec['gnuplot'].prefix.bin}",
            ]
        # As builtin, which links librt everywhere but on macOS (no librt there).
        if sys.platform != "darwin":
            args.append("LDFLAGS=-lrt")
        return args

    def benchmark_dirs(self, prefix):
        """Every directory under libexec/osu-micro-benchmarks that holds a program.

        Walked rather than listed: the layout changes between releases (7.1 added
        pt2pt/persistent, 7.4 congestion, xccl with +cuda/+rocm; later releases may add more).
        """
        root = join_path(prefix, "libexec", "osu-micro-benchmarks")
        found = []
        for dirpath, _, files in os.walk(root):
            paths = (os.path.join(dirpath, f) for f in files)
            if any(os.access(p, os.X_OK) and os.path.isfile(p) for p in paths):
                found.append(dirpath)
        return sorted(found)

    def setup_run_environment(self, env: EnvironmentModifications) -> None:
        env.set("OSU_ROOT", self.prefix)
        for path in reversed(self.benchmark_dirs(self.prefix)):
            env.prepend_path("PATH", path)

    # ---- stand-alone tests: spack test run osu-micro-benchmarks -------------------------

    def mpi_launch(self, program, *args):
        """Run ``program`` on 2 ranks; $OSU_TEST_LAUNCHER (e.g. "srun") overrides mpiexec."""
        launcher = os.environ.get("OSU_TEST_LAUNCHER", "").split()
        if not launcher:
            mpiexec = which("mpiexec", "mpirun", path=self.spec["mpi"].prefix.bin)
            if mpiexec is None:
                raise SkipTest(
                    f"no mpiexec/mpirun in {self.spec['mpi'].prefix.bin}: set OSU_TEST_LAUNCHER"
                )
            launcher = [mpiexec.path]
        exe = which(program, path=self.benchmark_dirs(self.prefix), required=True)
        run = Executable(launcher[0])
        return run(
            *launcher[1:],
            "-n",
            "2",
            exe.path,
            *args,
            output=str,
            error=str,
            extra_env=TEST_LAUNCH_ENV,
        )

    def test_hello(self):
        """osu_hello starts 2 MPI ranks and reports them"""
        out = self.mpi_launch("osu_hello")
        print(out)
        if "This is a test with 2 processes" not in out:
            raise AssertionError(f"osu_hello did not report 2 processes:\n{out}")

    def test_latency(self):
        """osu_latency -m 8:8 between 2 ranks prints one 8-byte latency"""
        out = self.mpi_launch("osu_latency", "-m", "8:8")
        print(out)
        match = re.search(r"^8\s+([0-9.]+)\s*$", out, re.MULTILINE)
        if match is None or float(match.group(1)) <= 0.0:
            raise AssertionError(f"osu_latency printed no positive 8-byte latency:\n{out}")

    def test_latency_cuda(self):
        """osu_latency -d cuda D D between 2 ranks (needs +cuda and a visible GPU)"""
        if not self.spec.satisfies("+cuda"):
            raise SkipTest("built without +cuda")
        if which("nvidia-smi") is None:
            raise SkipTest("no nvidia-smi, so no GPU to test on")
        out = self.mpi_launch("osu_latency", "-d", "cuda", "-m", "8:8", "D", "D")
        print(out)
        if re.search(r"^8\s+[0-9.]+\s*$", out, re.MULTILINE) is None:
            raise AssertionError(f"osu_latency -d cuda printed no 8-byte latency:\n{out}")
