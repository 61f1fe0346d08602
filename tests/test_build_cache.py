"""Helper programs built once per environment and content (omb_suite.build_cache): the
cache's key, and the job's build line run for real (a miss builds, a hit does not)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from omb_suite import build_cache

ENV = {'environ': 'spack-openmpi', 'modules': [], 'extras': {'mpi_version': '4.1.4'}}


def test_the_key_changes_with_source_compiler_flags_and_environment():
    base = build_cache.key('int main(){}', 'mpicc', ['-O2'], ENV)
    assert base == build_cache.key('int main(){}', 'mpicc', ['-O2'], dict(ENV))
    others = [build_cache.key('int main(){return 0;}', 'mpicc', ['-O2'], ENV),
              build_cache.key('int main(){}', 'mpicc.mpich', ['-O2'], ENV),
              build_cache.key('int main(){}', 'mpicc', ['-O0'], ENV),
              build_cache.key('int main(){}', 'mpicc', ['-O2'],
                              {**ENV, 'extras': {'mpi_version': '5.0.3'}})]
    assert base not in others and len(set(others)) == len(others)


@pytest.mark.skipif(not shutil.which('cc'), reason='needs a C compiler (cc)')
def test_the_job_line_builds_on_a_miss_and_reuses_on_a_hit(tmp_path):
    source = tmp_path / 'hello.c'
    source.write_text('int main(void) { return 0; }\n')
    where = build_cache.place(tmp_path / 'cache', source, 'cc', ['-O2'], ENV)
    assert not where.exists()
    build_cache.stock(where, source)
    assert (where / 'hello.c').read_text() == source.read_text()
    line = build_cache.build_command(where, 'hello.c', 'hello', 'cc', ['-O2'])
    subprocess.run(['sh', '-c', line], check=True)
    built = (where / 'hello').stat().st_mtime_ns
    subprocess.run(['sh', '-c', line], check=True)
    assert (where / 'hello').stat().st_mtime_ns == built
    assert [p.name for p in where.iterdir() if p.name.startswith('.')] == []


def test_a_failed_build_stops_the_job_saying_so(tmp_path):
    source = tmp_path / 'bad.c'
    source.write_text('this is not C\n')
    where = build_cache.place(tmp_path / 'cache', source, 'false', [], ENV)
    build_cache.stock(where, source)
    line = build_cache.build_command(where, 'bad.c', 'bad', 'false', [])
    out = subprocess.run(['sh', '-c', f'{line}; echo ran on'], capture_output=True, text=True)
    assert out.returncode == 1 and 'ran on' not in out.stdout
    assert f'omb: building bad in {where} failed' in out.stderr
    assert not Path(where / 'bad').exists()


def test_a_cache_the_node_cannot_see_stops_the_job_saying_where_to_put_it(tmp_path):
    where = tmp_path / 'not-shared'  # stocked on the ReFrame host, absent on this node
    line = build_cache.build_command(where, 'hello.c', 'hello', 'cc', ['-O2'])
    out = subprocess.run(['sh', '-c', f'{line}; echo ran on'], capture_output=True, text=True)
    assert out.returncode == 1 and 'ran on' not in out.stdout
    assert f'omb: the build cache {where} is not on ' in out.stderr
    assert 'set OMB_BUILD_CACHE=DIR (or -S build_cache=DIR) on a file system the compute ' \
        'nodes share' in out.stderr
