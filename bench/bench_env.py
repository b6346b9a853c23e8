# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the Python benchmarks share: the build's binaries and the private bus of tests/integration/vprof_env.py."""
import os
import sys


def setup(build):
    """Point vprof_env at BUILD_DIR's vprofd and vprofctl and the tree's bus policy; returns the module."""
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.environ.update(
        VPROFD=f"{build}/daemon/vprofd", VPROFCTL=f"{build}/client/vprofctl",
        VPROF_POLICY=f"{top}/systemd/org.vprof.Profiler1.conf",
        VPROF_BUS_CONF_IN=f"{top}/tests/integration/private-bus.conf.in")
    sys.path.insert(0, f"{top}/tests/integration")
    import vprof_env
    return vprof_env
