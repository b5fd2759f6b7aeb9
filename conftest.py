"""Top-level conftest.

The attention-claims plugin itself is registered through the ``pytest11`` entry point
(``attention_claims.framework.plugin``); this file enables pytest's ``pytester`` fixture, used by
``tests/`` to run the real plugin on planted records, and shows a cold trained-model measurement's
one-line announcement on the terminal past pytest's output capture
(:data:`attention_claims.models.ANNOUNCERS`).
"""

import sys

pytest_plugins = ["pytester"]


def pytest_configure(config):
    from attention_claims import models  # the package only: no torch import here

    def announce(line: str) -> bool:
        capman = config.pluginmanager.getplugin("capturemanager")
        reporter = config.pluginmanager.getplugin("terminalreporter")
        if capman is None:
            return False
        with capman.global_and_fixture_disabled():
            if reporter is not None and not hasattr(config, "workerinput"):  # the controller, or no xdist
                reporter.write("\n" + line + "\n")  # the progress dots leave the cursor mid-line
            elif sys.__stderr__ is not None:  # an xdist worker: its stdout is execnet's, its stderr the controller's
                sys.__stderr__.write(line + "\n")
                sys.__stderr__.flush()
        return True

    models.ANNOUNCERS.append(announce)
    config.add_cleanup(lambda: models.ANNOUNCERS.remove(announce))
