"""A site's own ReFrame configuration, in the shape sites write them (test data): hostname
patterns, a local and a Slurm partition, environments that put an MPI and OSU on PATH as
`module load`/`spack load` would, the site's own perflog handler and results location. The
OSU environments declare only feature `mpi`: nothing suite-specific (docs/site-config.md).

Paths come from the test (SITE_* variables), as a site's come from its module tree.
"""

import os


def _path(*dirs: str) -> str:
    return ':'.join([*(d for d in dirs if d), '$PATH'])


def _osu_dirs(prefix: str) -> list[str]:
    """What `spack load osu-micro-benchmarks` puts on PATH."""
    base = f'{prefix}/libexec/osu-micro-benchmarks/mpi'
    return [f'{base}/{d}' for d in ('pt2pt', 'pt2pt/persistent', 'collective', 'one-sided',
                                    'startup', 'congestion')] if prefix else []


RESULTS = os.environ['SITE_RESULTS']

site_configuration = {
    'systems': [
        {
            'name': 'sitebox',
            'descr': 'A site cluster: login node and a Slurm batch partition',
            'hostnames': [r'.*'],
            'modules_system': 'nomod',
            'partitions': [
                {'name': 'login', 'scheduler': 'local', 'launcher': 'mpirun', 'max_jobs': 1,
                 'environs': ['gnu-openmpi', 'gnu-mpich', 'builtin']},
                {'name': 'batch', 'scheduler': 'squeue', 'launcher': 'srun',
                 'access': ['--partition=batch'], 'environs': ['gnu-openmpi', 'gnu-mpich']},
                {'name': 'tools', 'scheduler': 'local', 'launcher': 'local',
                 'environs': ['builtin']},
                # inside `salloc -N 2`: every test a step of that allocation (the test runs
                # it on the mini-cluster, whose two nodes share one machine's cores and talk
                # TCP over rig0: tests/cluster/up)
                {'name': 'alloc', 'scheduler': 'local', 'launcher': 'srunalloc', 'max_jobs': 1,
                 'time_limit': '3m',
                 'processor': {'num_cpus': 1, 'num_cpus_per_core': 1, 'num_sockets': 1,
                               'num_cpus_per_socket': 1},
                 'env_vars': [['OMPI_MCA_pml', 'ob1'], ['OMPI_MCA_btl', 'tcp,self,vader'],
                              ['OMPI_MCA_btl_tcp_if_include', 'rig0'],
                              ['OMPI_MCA_oob_tcp_if_include', 'rig0'],
                              ['OMPI_MCA_mpi_yield_when_idle', '1'],
                              ['UCX_TLS', 'tcp,self'], ['UCX_NET_DEVICES', 'rig0']],
                 'environs': ['gnu-openmpi', 'gnu-mpich']},
            ],
        },
    ],
    'environments': [
        {'name': 'gnu-openmpi', 'features': ['mpi'], 'cc': 'mpicc', 'cxx': 'mpicxx',
         'env_vars': [['PATH', _path(*_osu_dirs(os.environ.get('SITE_OSU_OPENMPI', '')))],
                      ['OMPI_ALLOW_RUN_AS_ROOT', '1'], ['OMPI_ALLOW_RUN_AS_ROOT_CONFIRM', '1'],
                      ['SLURM_MPI_TYPE', 'pmix']]},  # srun's --mpi, as the site's module sets it
        {'name': 'gnu-mpich', 'features': ['mpi'], 'cc': 'mpicc', 'cxx': 'mpicxx',
         'env_vars': [['PATH', _path(os.environ.get('SITE_MPICH_BIN', ''),
                                     *_osu_dirs(os.environ.get('SITE_OSU_MPICH', '')))],
                      ['SLURM_MPI_TYPE', 'pmi2']]},
        {'name': 'builtin', 'cc': 'cc'},
    ],
    'logging': [
        {
            'handlers_perflog': [
                {'type': 'filelog', 'basedir': f'{RESULTS}/perflogs',
                 'prefix': '%(check_system)s/%(check_partition)s', 'level': 'info',
                 'format': '%(check_job_completion_time)s|%(check_name)s|%(check_environ)s|'
                           '%(check_perfvalues)s',
                 'format_perfvars': '%(check_perf_value)s|%(check_perf_unit)s|',
                 'append': True},
            ],
        },
    ],
    'general': [
        {'report_file': f'{RESULTS}/reports/run-report-{{sessionid}}.json'},
    ],
}
