"""omb-setup without Spack: system MPI detection, the MPICH shim, the registry, messages.

The MPIs are stand-ins (scripts replaying real ``ompi_info``/``mpichversion`` output from
Debian 12, in tests/data/mpi) so the test controls which MPIs exist.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml
from setup_helpers import copy_checkout, debian_machine, script
from testdata import DATA

from omb_suite.setup import cli, environs, prefix_mpi, spack_envs

#: Keys of a registry entry (the contract with omb_suite.setup.environs).
ENTRY_KEYS = {'name', 'mpi_family', 'mpi_version', 'osu_root', 'osu_version', 'cuda', 'rocm',
              'path', 'env_vars', 'source', 'spack_env', 'spack_lock', 'osu_spec', 'mpi_spec'}


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    return copy_checkout(tmp_path / 'repo')


@pytest.fixture
def debian(tmp_path: Path, monkeypatch) -> Path:
    return debian_machine(tmp_path, monkeypatch)


def fake_osu(prefix: Path, version: str, needed: bytes = b'libmpi.so.40') -> Path:
    """An OSU install whose osu_latency carries the banner string a real build compiles in
    and, like a real program's dynamic section, the names of the libraries it links."""
    exe = prefix / cli.OSU_MPI_DIR / 'pt2pt' / 'osu_latency'
    exe.parent.mkdir(parents=True)
    exe.write_bytes(b'\x7fELF...' + needed + b'\x00# OSU MPI%s Latency Test v' +
                    version.encode() + b'\x00')
    return prefix


def test_help_names_every_option(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(['--help'])
    out = capsys.readouterr().out
    assert exit_.value.code == 0
    for option in ('--env', '--site', '--mirror', '--no-build', '--osu-root', '--mpi', '--spack',
                   '--repo', 'OSU_ROOT', 'docs/spack.md'):
        assert option in out


def test_mpich_shim_gives_plain_names_to_debian_alternatives(tmp_path, debian):
    prefix = cli.make_shim(tmp_path, 'mpich', debian)
    assert prefix == tmp_path / '.omb' / 'prefix' / 'mpich'
    links = {p.name: p.resolve() for p in (prefix / 'bin').iterdir()}
    assert links['mpicc'] == debian / 'mpicc.mpich'
    assert links['mpirun'] == debian / 'mpirun.mpich'
    assert links['mpiexec'] == debian / 'mpiexec.mpich'
    assert links['hydra_pmi_proxy'] == debian / 'hydra_pmi_proxy'
    assert 'mpif90' not in links  # no mpif90.mpich here: nothing dangling
    (debian / 'mpicc.mpich').unlink()
    assert cli.make_shim(tmp_path / 'other', 'mpich', debian) is None


def test_registry_without_osu_or_spack(checkout, debian, capsys):
    registry = checkout / 'out' / 'environments.json'
    assert cli.main(['--repo', str(checkout), '--no-spack', '--registry', str(registry)]) == 0
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
    cli.main(['--repo', str(checkout), '--no-spack',
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
    cli.main(['--repo', str(checkout), '--no-spack', '--registry', str(registry),
                '--osu-root', f'mpich={osu}'])
    entries = {e['name']: e for e in json.loads(registry.read_text())['environments']}
    assert entries['system-mpich']['osu_root'] == str(osu)
    assert entries['system-mpich']['osu_version'] == '7.4'
    assert entries['system-openmpi']['osu_root'] is None
    assert 'osu' in environs.features(entries['system-mpich'])
    assert 'no OSU Micro-Benchmarks found' not in capsys.readouterr().out


def test_cuda_feature_says_osu_was_built_with_cuda_whatever_the_mpi(checkout, debian,
                                                                     tmp_path):
    """Debian's MPIs are not CUDA-aware; an OSU built with CUDA on one still gets +cuda, so
    its device-buffer cases exist and are skipped with the probe's evidence, not hidden."""
    cuda_osu = fake_osu(tmp_path / 'osu-cuda', '7.3', b'libmpi.so.40\x00libcudart.so.13')
    registry = checkout / 'environments.json'
    cli.main(['--repo', str(checkout), '--no-spack', '--registry', str(registry),
              '--osu-root', f'openmpi={cuda_osu}'])
    entries = {e['name']: e for e in json.loads(registry.read_text())['environments']}
    assert entries['system-openmpi']['cuda'] is True
    assert entries['system-openmpi']['rocm'] is False
    assert 'cuda' in environs.features(entries['system-openmpi'])
    assert entries['system-mpich']['cuda'] is False  # no OSU at all


def test_a_real_host_build_of_osu_is_not_a_gpu_build():
    root = Path(os.environ.get('OSU_ROOT', '/nonexistent'))
    if not (root / cli.OSU_MPI_DIR / 'pt2pt' / 'osu_latency').is_file():
        pytest.skip('OSU_ROOT names no OSU build (tests/registered_osu.py)')
    assert not cli.osu_gpu(root, 'cuda') and not cli.osu_gpu(root, 'rocm')
    assert not cli.osu_gpu(None, 'cuda')


@pytest.mark.parametrize(('value', 'expected'), [
    ('mpich=/no/such/prefix', 'libexec/osu-micro-benchmarks/mpi'),
    ('/some/prefix', 'libexec/osu-micro-benchmarks/mpi'),
    ('intelmpi=/some/prefix', 'FAMILY must be one of'),
])
def test_bad_osu_root_is_refused_with_the_fix(checkout, debian, value, expected):
    with pytest.raises(SystemExit) as exit_:
        cli.main(['--repo', str(checkout), '--no-spack', '--osu-root', value])
    assert expected in str(exit_.value)


def test_unknown_spack_environment_names_the_choices(checkout, debian, capsys):
    assert cli.main(['--repo', str(checkout), '--no-spack', '--env', 'openmpi-rocm',
                       '--registry', str(checkout / 'r.json')]) == 1
    err = capsys.readouterr().err
    assert 'openmpi-rocm' in err and 'mpich-cuda' in err


def test_not_a_checkout_is_refused(tmp_path):
    with pytest.raises(SystemExit) as exit_:
        cli.main(['--repo', str(tmp_path)])
    assert 'not an omb-regression-suite checkout' in str(exit_.value)


def test_open_mpi_other_than_the_local_sites_is_warned_about(checkout):
    mpi = {'family': 'openmpi', 'version': '4.1.6', 'cuda': False, 'device': None}
    [warning] = spack_envs.local_site_mismatches(checkout, [mpi])
    assert '4.1.6' in warning and 'openmpi@4.1.4' in warning
    assert spack_envs.local_site_mismatches(checkout, [{**mpi, 'version': '4.1.4'}]) == []


# ---------------------------------------------------------------- an MPI under its own prefix


def mvapich2_prefix(root: Path) -> Path:
    """An MVAPICH2 prefix whose ``mpiname -a`` replays the real one (tests/data/mvapich2); a
    bare ``mpiname`` prints only ``MVAPICH2``, as 2.3.7's does."""
    script(root / 'bin' / 'mpiname', f'case "$1" in -a) tail -n +2 {DATA}/mvapich2/'
           'mpiname_a_ch3_mrail.txt;; *) echo MVAPICH2;; esac')
    return root


def test_mpi_under_a_prefix_is_registered_with_its_osu(checkout, debian, tmp_path, capsys):
    mv2 = mvapich2_prefix(tmp_path / 'opt' / 'mvapich2')
    osu = fake_osu(tmp_path / 'osu-mv2', '7.4')
    registry = checkout / 'environments.json'
    assert cli.main(['--repo', str(checkout), '--no-spack', '--registry', str(registry),
                       '--mpi', f'mvapich2={mv2}', '--osu-root', f'mvapich2={osu}']) == 0
    entries = {e['name']: e for e in json.loads(registry.read_text())['environments']}
    entry = entries['mvapich2']
    assert set(entry) == ENTRY_KEYS
    assert (entry['mpi_family'], entry['mpi_version'], entry['source']) == (
        'mvapich2', '2.3.7', 'prefix')
    assert entry['path'] == [str(mv2 / 'bin')] and entry['osu_root'] == str(osu)
    assert environs.features(entry) == ['mpi', 'mvapich', 'mvapich2', 'omb_setup', 'osu']
    assert entries['system-openmpi']['osu_root'] is None
    assert 'mvapich2 2.3.7, OSU 7.4' in ' '.join(capsys.readouterr().out.split())


def test_mpi_of_an_osu_build_found_by_ldd(checkout, debian, tmp_path):
    """The OSU build's libmpi.so.12 lies in <prefix>/lib (real ldd output, prefix moved)."""
    mv2 = mvapich2_prefix(tmp_path / 'opt' / 'mvapich2')
    recorded = (DATA / 'mvapich2' / 'ldd_osu_latency.txt').read_text().split('\n', 1)[1]
    (tmp_path / 'ldd.txt').write_text(recorded.replace('/opt/mvapich2-2.3.7', str(mv2)))
    script(debian / 'ldd', f'cat {tmp_path}/ldd.txt')
    osu = fake_osu(tmp_path / 'osu-mv2', '7.4')
    registry = checkout / 'environments.json'
    cli.main(['--repo', str(checkout), '--no-spack', '--registry', str(registry),
                '--osu-root', f'mvapich2={osu}'])
    entries = {e['name']: e for e in json.loads(registry.read_text())['environments']}
    assert entries['mvapich2']['path'] == [str(mv2 / 'bin')]
    assert prefix_mpi.linked_prefix(recorded) == Path('/opt/mvapich2-2.3.7')


@pytest.mark.parametrize(('args', 'expected'), [
    (['--osu-root', 'mvapich2={osu}'], 'name the MPI with --mpi mvapich2=PREFIX'),
    (['--mpi', 'mvapich2={tmp}'], 'holds no mvapich2 installation'),
    (['--mpi', 'intelmpi={tmp}'], 'FAMILY must be one of'),
    (['--mpi', 'mvapich2'], 'holds no MPI installation'),
    (['--mpi', '{tmp}'], 'found there: no MPI program'),
])
def test_mpi_prefix_errors_say_what_to_give(checkout, debian, tmp_path, args, expected):
    osu = fake_osu(tmp_path / 'osu', '7.4')  # not a program: ldd finds no MPI in it
    script(debian / 'ldd', 'echo "not a dynamic executable"; exit 1')
    argv = [a.format(osu=osu, tmp=tmp_path) for a in args]
    with pytest.raises(SystemExit) as exit_:
        cli.main(['--repo', str(checkout), '--no-spack',
                    '--registry', str(tmp_path / 'r.json'), *argv])
    assert expected in str(exit_.value)


def openmpi_prefix(root: Path, version: str) -> Path:
    """An Open MPI prefix whose ompi_info prints the version as Open MPI 5.0.11's does."""
    script(root / 'bin' / 'ompi_info', f'echo "Open MPI v{version}"; echo; '
           'echo "https://www.open-mpi.org/community/help/"')
    return root


def test_two_libraries_of_one_family_are_two_environments(checkout, debian, tmp_path):
    """Open MPI 4.1 and 5.0 under prefixes of their own, recognised without FAMILY=."""
    old, new = openmpi_prefix(tmp_path / 'ompi4', '4.1.6'), openmpi_prefix(tmp_path / 'ompi5',
                                                                           '5.0.11')
    registry = checkout / 'environments.json'
    assert cli.main(['--repo', str(checkout), '--no-spack', '--registry', str(registry),
                     '--mpi', str(old), '--mpi', f'openmpi={new}']) == 0
    entries = {e['name']: e for e in json.loads(registry.read_text())['environments']}
    assert entries['openmpi-4.1.6']['path'] == [str(old / 'bin')]
    assert entries['openmpi-5.0.11']['mpi_version'] == '5.0.11'
    assert 'system-openmpi' in entries


def test_a_prefix_of_another_family_than_named_is_refused(checkout, debian, tmp_path):
    with pytest.raises(SystemExit, match=r'holds openmpi 5\.0\.11, not mpich'):
        cli.main(['--repo', str(checkout), '--no-spack', '--registry', str(tmp_path / 'r.json'),
                  '--mpi', f'mpich={openmpi_prefix(tmp_path / "o", "5.0.11")}'])


def test_a_prefix_holding_two_families_asks_which(checkout, debian, tmp_path):
    both = openmpi_prefix(tmp_path / 'usr', '4.1.4')
    script(both / 'bin' / 'mpichversion', 'echo "MPICH Version:      4.0.2"')
    with pytest.raises(SystemExit, match=r'holds mpich 4\.0\.2 and openmpi 4\.1\.4: name one'):
        cli.main(['--repo', str(checkout), '--no-spack', '--registry', str(tmp_path / 'r.json'),
                  '--mpi', str(both)])
    assert cli.main(['--repo', str(checkout), '--no-spack', '--registry',
                     str(tmp_path / 'r.json'), '--mpi', f'mpich={both}']) == 0
