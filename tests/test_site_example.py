"""The site configuration docs/howto-own-config.md gives (docs/examples/slurm_lmod_site.py),
loaded as it is: a Slurm cluster whose MPI and OSU come from Lmod modules, with processor,
node count, srun's ``--mpi`` plugin, the perflog columns ``omb-review`` reads and the
``flux`` launcher registered by the file itself.

The modules are Debian's Open MPI and MPICH and a stand-in OSU tree, loaded by a stand-in
``module`` shell function (exported to the environment probe's bash): the job scripts are
checked, nothing runs, so no Lmod is needed (the file sets ``resolve_module_conflicts`` off,
as a login node without the compute nodes' modules needs).
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
from pathlib import Path

import pytest
from lmod_tree import mpi_module
from rfm_helpers import CHECKS, MPICH, OPENMPI, REFRAME, REPO, fake_osu_tree

EXAMPLE = REPO / 'docs' / 'examples' / 'slurm_lmod_site.py'

pytestmark = pytest.mark.skipif(not (OPENMPI and MPICH), reason='needs Debian Open MPI and MPICH')


def module_function(tmp: Path) -> str:
    """A bash ``module`` whose ``load`` puts what the example's modules name on PATH."""
    openmpi = mpi_module(tmp / 'tree', 'openmpi', '4.1.5') and tmp / 'tree/sw/openmpi-4.1.5/bin'
    mpich = mpi_module(tmp / 'tree', 'mpich', '4.1.2') and tmp / 'tree/sw/mpich-4.1.2/bin'
    base = fake_osu_tree(tmp / 'osu') / 'libexec/osu-micro-benchmarks/mpi'
    osu = ':'.join(str(base / d) for d in ('pt2pt', 'pt2pt/persistent', 'collective',
                                           'one-sided', 'startup', 'congestion'))
    return ('() { [ "$1" = load ] || return 0; shift; for m in "$@"; do case $m in '
            f'openmpi/4.1.5) PATH={openmpi}:$PATH;; mpich/4.1.2) PATH={mpich}:$PATH;; '
            f'osu-micro-benchmarks/7.4) PATH={osu}:$PATH;; *) return 1;; esac; done; '
            'export PATH; }')


def run_example(tmp: Path, *args: str, **env: str) -> tuple[str, dict[str, str]]:
    """ReFrame with the example as the only configuration; its output and job scripts
    (``partition/environ/test`` -> text)."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith(('OMB_', 'OSU_'))}
    environ.update({'BASH_FUNC_module%%': module_function(tmp),
                    'XDG_CACHE_HOME': str(tmp / 'cache'), **env})
    environ.pop('FLUX_URI', None)
    out = subprocess.run([REFRAME, '--nocolor', '-C', str(EXAMPLE), '-c', CHECKS,
                          '--prefix', str(tmp / 'rfm'), '--perflogdir', str(tmp / 'perflogs'),
                          '--report-file', str(tmp / 'report.json'), *args],
                         cwd=tmp, env=environ, capture_output=True, text=True, timeout=600)
    text = out.stdout + out.stderr
    assert out.returncode == 0, text[-3000:]
    stage = tmp / 'rfm' / 'stage' / 'mycluster'
    scripts = {str(p.parent.relative_to(stage)): p.read_text()
               for p in stage.rglob('rfm_job.sh')} if stage.exists() else {}
    return text, scripts


def test_the_example_lists_the_verdict_set_and_assumes_nothing(tmp_path):
    text, _ = run_example(tmp_path, '--system', 'mycluster', '-l')
    for check in ('OsuPt2Pt', 'OsuCollective', 'OsuStartup', 'OsuMbwMr'):
        assert f'- {check} ' in text
    assert 'inter_socket' in text      # 2 sockets declared
    assert 'assumed' not in text, text[-3000:]


def test_batch_jobs_load_the_modules_and_start_srun_with_the_familys_plugin(tmp_path):
    _, scripts = run_example(tmp_path, '--system', 'mycluster:batch', '-n', 'OsuPt2Pt', '-E',
                             "benchmark == 'osu_latency' and placement == 'inter_node'",
                             '--dry-run')
    by_env = {key.split('/')[1]: text for key, text in scripts.items()}
    assert set(by_env) == {'openmpi', 'mpich'}, scripts.keys()
    for env, modules, plugin in (('openmpi', 'openmpi/4.1.5', 'pmix'),
                                 ('mpich', 'mpich/4.1.2', 'pmi2')):
        script = by_env[env]
        assert f'module load {modules}' in script
        assert 'module load osu-micro-benchmarks/7.4' in script
        assert '#SBATCH --partition=batch' in script
        assert re.search(rf'\bsrun --mpi={plugin} .*osu_latency', script, re.M), script


def test_the_flux_launcher_is_registered_by_the_file_itself(tmp_path):
    _, scripts = run_example(tmp_path, '--system', 'mycluster:flux', '-n', 'OsuPt2Pt', '-E',
                             "benchmark == 'osu_latency' and placement == 'inter_node'",
                             '--dry-run')
    (script,) = scripts.values()
    assert re.search(r'\bflux run -N 2 -n 2 .*osu_latency', script, re.M), script


def test_the_perflog_handler_is_the_suites_own_definition():
    """The example writes the records omb-review reads with the suite's one definition of the
    columns (omb_suite.perflog_schema), as reframe/config/settings.py does."""
    from omb_suite import perflog_schema

    for path in (EXAMPLE, REPO / 'reframe' / 'config' / 'settings.py'):
        calls = [node for node in ast.walk(ast.parse(path.read_text()))
                 if isinstance(node, ast.Call) and getattr(node.func, 'attr', '') == 'handler'
                 and getattr(node.func.value, 'id', '') == 'perflog_schema']
        assert calls, f'{path.name} does not build its perflog handler with perflog_schema'
    assert perflog_schema.handler('/p')['format'].split('|')[0] == '%(check_job_completion_time)s'
    assert '%(version)s' in perflog_schema.handler('/p')['format']


def test_an_environment_whose_module_fails_to_load_is_skipped_saying_so(tmp_path):
    """A module that does not load on the host ReFrame runs on (a wrong name): the MPI on PATH
    is not what the environment names, so it is not measured as if it were."""
    broken = module_function(tmp_path).replace('openmpi/4.1.5) PATH=',
                                               'openmpi/4.1.5) return 1; PATH=')
    text, scripts = run_example(tmp_path, '--system', 'mycluster:batch', '-n', 'OsuPt2Pt',
                                '-E', "benchmark == 'osu_latency'", '--dry-run',
                                **{'BASH_FUNC_module%%': broken})
    assert 'environment openmpi: `module load openmpi/4.1.5` failed on the host ReFrame ' \
        'runs on' in text
    assert {key.split('/')[1] for key in scripts} == {'mpich'}
