# ReFrame 3.12 configuration of the history sessions: ReFrame 3's default perflog format.
site_configuration = {
    'systems': [{'name': 'histsys', 'descr': 'throwaway', 'hostnames': ['.*'],
                 'partitions': [{'name': 'cpu', 'scheduler': 'local', 'launcher': 'local',
                                 'environs': ['gnu-ompi']}]}],
    'environments': [{'name': 'gnu-ompi'}],
    'logging': [{
        'handlers': [{'type': 'stream', 'name': 'stdout', 'level': 'info',
                      'format': '%(message)s'}],
        'handlers_perflog': [{
            'type': 'filelog',
            'prefix': '%(check_system)s/%(check_partition)s',
            'level': 'info',
            'format': ('%(check_job_completion_time)s|reframe %(version)s|%(check_info)s|'
                       'jobid=%(check_jobid)s|%(check_perf_var)s=%(check_perf_value)s|'
                       'ref=%(check_perf_ref)s (l=%(check_perf_lower_thres)s, '
                       'u=%(check_perf_upper_thres)s)|%(check_perf_unit)s'),
            'append': True,
        }],
    }],
}
