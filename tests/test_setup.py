"""omb-setup without Spack: system MPI detection, the MPICH shim, the registry, messages.

The MPIs are stand-ins (scripts replaying real ``ompi_info``/``mpichversion`` output from
Debian 12, in tests/data/mpi) so the test controls which MPIs exist.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from setup_helpers import copy_checkout, debian_machine

from omb_suite import environs, setup, spack_envs

#: Keys of a registry entry (the contract with omb_suite.environs).
ENTRY_KEYS = {'name', 'mpi_family', 'mpi_version', 'osu_root', 'osu_version', 'cuda', 'rocm',
              'path', 'env_vars', 'source', 'spack_env', 'spack_lock', 'osu_spec', 'mpi_spec'}


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    return copy_checkout(tmp_path / 'repo')


@pytest.fixture
def debian(tmp_path: Path, monkeypatch) -> Path:
    return debian_machine(tmp_path, monkeypatch)


def fake_osu(prefix: Path, version: str) -> Path:
    """An OSU install whose osu_latency carries the banner string a real build compiles in."""
    exe = prefix / setup.OSU_MPI_DIR / 'pt2pt' / 'osu_latency'
    exe.parent.mkdir(parents=True)
    exe.write_bytes(b'\x7fELF...# OSU MPI%s Latency Test v' + version.encode() + b'\x00')
    return prefix


def test_help_names_every_option(capsys):
    with pytest.raises(SystemExit) as exit_:
        setup.main(['--help'])
    out = capsys.readouterr().out
    assert exit_.value.code == 0
    for option in ('--env', '--site', '--mirror', '--no-build', '--osu-root', '--spack',
                   '--repo', 'OSU_ROOT', 'docs/spack.md'):
        assert option in out


def test_mpich_shim_gives_plain_names_to_debian_alternatives(tmp_path, debian):
    prefix = setup.make_shim(tmp_path, 'mpich', debian)
    assert prefix == tmp_path / '.omb' / 'prefix' / 'mpich'
    links = {p.name: p.resolve() for p in (prefix / 'bin').iterdir()}
    assert links['mpicc'] == debian / 'mpicc.mpich'
    assert links['mpirun'] == debian / 'mpirun.mpich'
    assert links['mpiexec'] == debian / 'mpiexec.mpich'
    assert links['hydra_pmi_proxy'] == debian / 'hydra_pmi_proxy'
    assert 'mpif90' not in links  # no mpif90.mpich here: nothing dangling
    (debian / 'mpicc.mpich').unlink()
    assert setup.make_shim(tmp_path / 'other', 'mpich', debian) is None


def test_registry_without_osu_or_spack(checkout, debian, capsys):
    registry = checkout / 'out' / 'environments.json'
    assert setup.main(['--repo', str(checkout), '--no-spack', '--registry', str(registry)]) == 0
    out = capsys.readouterr().out
    data = json.loads(registry.read_text())
    assert data['version'] == 1
    entries = {e['name']: e for e in data['environments']}
    assert set(entries) == {'system-openmpi', 'system-mpich'}
    for entry in entries.values():
        assert set(entry) == ENTRY_KEYS
        assert entry['source'] == 'system' and entry['osu_root'] is None
        assert entry['cuda'] is False  # real ompi_info output says ..._cuda_support:value:false
    assert entries['system-openmpi']['mpi_version'] == '4.1.4'
    assert entries['system-mpich']['mpi_version'] == '4.0.2'
    assert entries['system-mpich']['path'] == [str(checkout / '.omb/prefix/mpich/bin')]
    assert 'no OSU Micro-Benchmarks found' in out and 'OSU_ROOT=' in out
    assert 'OMB_SPACK_GIT' in out and 'OMB_SPACK_MIRROR' in out  # how to build it offline
    assert out.count('no OSU Micro-Benchmarks found') == 1


def test_local_site_gets_mpich_external_at_its_shim(checkout, debian):
    setup.main(['--repo', str(checkout), '--no-spack',
                '--registry', str(checkout / 'environments.json')])
    site = yaml.safe_load((checkout / '.omb/spack-site/local/packages.yaml').read_text())
    external = site['packages']['mpich']['externals'][0]
    assert external == {'spec': 'mpich@4.0.2 ~cuda device=ch4 netmod=ucx',
                        'prefix': str(checkout / '.omb/prefix/mpich')}
    include = yaml.safe_load(
        (checkout / 'spack/environments/sites/local/include.yaml').read_text())['include'][0]
    site_dir = checkout / 'spack/environments/sites/local'
    assert (site_dir / include['path']).resolve() == (checkout / '.omb/spack-site/local')


def test_osu_root_per_family_sets_osu_feature(checkout, debian, tmp_path, capsys):
    osu = fake_osu(tmp_path / 'osu-mpich', '7.4')
    registry = checkout / 'environments.json'
    setup.main(['--repo', str(checkout), '--no-spack', '--registry', str(registry),
                '--osu-root', f'mpich={osu}'])
    entries = {e['name']: e for e in json.loads(registry.read_text())['environments']}
    assert entries['system-mpich']['osu_root'] == str(osu)
    assert entries['system-mpich']['osu_version'] == '7.4'
    assert entries['system-openmpi']['osu_root'] is None
    assert 'osu' in environs.features(entries['system-mpich'])
    assert 'no OSU Micro-Benchmarks found' not in capsys.readouterr().out


@pytest.mark.parametrize(('value', 'expected'), [
    ('mpich=/no/such/prefix', 'libexec/osu-micro-benchmarks/mpi'),
    ('/some/prefix', 'FAMILY=PREFIX'),
    ('intelmpi=/some/prefix', 'FAMILY=PREFIX'),
])
def test_bad_osu_root_is_refused_with_the_fix(checkout, debian, value, expected):
    with pytest.raises(SystemExit) as exit_:
        setup.main(['--repo', str(checkout), '--no-spack', '--osu-root', value])
    assert expected in str(exit_.value)


def test_unknown_spack_environment_names_the_choices(checkout, debian, capsys):
    assert setup.main(['--repo', str(checkout), '--no-spack', '--env', 'openmpi-rocm',
                       '--registry', str(checkout / 'r.json')]) == 1
    err = capsys.readouterr().err
    assert 'openmpi-rocm' in err and 'mpich-cuda' in err


def test_not_a_checkout_is_refused(tmp_path):
    with pytest.raises(SystemExit) as exit_:
        setup.main(['--repo', str(tmp_path)])
    assert 'not an omb-regression-suite checkout' in str(exit_.value)


def test_open_mpi_other_than_the_local_sites_is_warned_about(checkout):
    mpi = {'family': 'openmpi', 'version': '4.1.6', 'cuda': False, 'device': None}
    [warning] = spack_envs.local_site_mismatches(checkout, [mpi])
    assert '4.1.6' in warning and 'openmpi@4.1.4' in warning
    assert spack_envs.local_site_mismatches(checkout, [{**mpi, 'version': '4.1.4'}]) == []
