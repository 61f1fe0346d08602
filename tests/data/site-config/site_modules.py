"""A site's own ReFrame configuration whose MPI environment loads Lmod modules (test data):
one local partition, the environment named after its MPI module as sites name them
(``openmpi-4_1_4a``), feature ``mpi`` only, the site's own perflog handler and results.
An upgrade is the site editing its configuration: here ``SITE_OPENMPI`` names the module
(``openmpi/4.1.4a``), ``SITE_OSU`` the OSU module built on it, ``SITE_RESULTS`` the results.
``SITE_PERFLOG_SCHEMA=1``: the suite's perflog columns (``perflog_schema.handler``) instead of
the site's narrow format (a tuning sweep needs the ``algorithm`` column).
"""

import os

from omb_suite import perflog_schema

RESULTS = os.environ['SITE_RESULTS']
MPI = os.environ['SITE_OPENMPI']
#: The environment's name: the module's, spelt as ReFrame allows (``openmpi-4_1_4a``).
ENVIRON = MPI.replace('/', '-').replace('.', '_')
INIT = f'{os.environ["MODULESHOME"]}/init/bash'

site_configuration = {
    'systems': [
        {
            'name': 'sitemods',
            'descr': 'A site box whose MPI comes from Lmod modules',
            'hostnames': [r'.*'],
            'modules_system': 'lmod',
            'partitions': [
                {'name': 'login', 'scheduler': 'local', 'launcher': 'mpirun', 'max_jobs': 1,
                 'environs': [ENVIRON]},
            ],
        },
    ],
    'environments': [
        {'name': ENVIRON, 'features': ['mpi'], 'cc': 'mpicc', 'cxx': 'mpicxx',
         'modules': [MPI, os.environ['SITE_OSU']],
         # a batch shell has no `module` unless the site's job prologue defines it
         'prepare_cmds': [f'type module >/dev/null 2>&1 || . {INIT}'],
         'env_vars': [['OMPI_ALLOW_RUN_AS_ROOT', '1'], ['OMPI_ALLOW_RUN_AS_ROOT_CONFIRM', '1']]},
    ],
    'logging': [
        {
            # one record per performance variable: records of osu_latency and osu_bw share
            # one file (OsuPt2Pt.log) whose header cannot name both tests' variables
            'perflog_multiline': True,
            'handlers_perflog': [perflog_schema.handler(f'{RESULTS}/perflogs')]
            if os.environ.get('SITE_PERFLOG_SCHEMA') == '1' else [
                {'type': 'filelog', 'basedir': f'{RESULTS}/perflogs',
                 'prefix': '%(check_system)s/%(check_partition)s', 'level': 'info',
                 'format': '%(check_job_completion_time)s|%(check_result)s|%(check_system)s|'
                           '%(check_partition)s|%(check_environ)s|%(check_name)s|'
                           '%(check_jobid)s|%(check_benchmark)s|%(check_placement)s|'
                           '%(check_buffers)s|%(check_num_nodes)s|%(check_num_tasks)s|'
                           '%(check_perf_var)s|%(check_perf_value)s|%(check_perf_unit)s',
                 'append': True},
            ],
        },
    ],
    'general': [
        {'report_file': f'{RESULTS}/reports/run-report-{{sessionid}}.json'},
    ],
}
