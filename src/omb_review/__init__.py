"""omb-review: perflog trend review for the OMB regression suite."""
