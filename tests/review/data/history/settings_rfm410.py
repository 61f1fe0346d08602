# ReFrame 4.10 configuration of the history sessions: the suite's perflog format
# (reframe/config/settings.py PERFLOG_COLUMNS, with the columns agreed for issue 14 after
# `algorithm`), multiline records, zone-aware stamps.
COLUMNS = (
    'job_completion_time', 'result', 'system', 'partition', 'environ', 'name',
    'display_name', 'jobid', 'job_nodelist', 'num_nodes', 'num_tasks', 'num_tasks_per_node',
    'benchmark', 'placement', 'mapping', 'algorithm', 'window_size', 'processes', 'rma_window',
    'rma_sync', 'buffers', 'mpi_family', 'mpi_version', 'osu_version', 'osu_spec', 'mpi_spec',
    'spack_lock', 'placement_observed', 'algorithm_evidence', 'session_tag', 'perf_var',
    'perf_value', 'perf_unit', 'perf_ref', 'perf_lower_thres', 'perf_upper_thres', 'perf_result',
)
site_configuration = {
    'systems': [{'name': 'histsys', 'descr': 'throwaway', 'hostnames': ['.*'],
                 'partitions': [{'name': 'cpu', 'scheduler': 'local', 'launcher': 'local',
                                 'environs': ['gnu-ompi']}]}],
    'environments': [{'name': 'gnu-ompi'}],
    'logging': [{
        'perflog_multiline': True,
        'handlers_perflog': [{
            'type': 'filelog',
            'prefix': '%(check_system)s/%(check_partition)s',
            'level': 'info',
            'format': '|'.join(f'%(check_{c})s' for c in COLUMNS),
            'datefmt': '%FT%T%:z',
            'append': True,
        }],
    }],
}
