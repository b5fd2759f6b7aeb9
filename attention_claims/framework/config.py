"""Where a project keeps its claims: the one home of the claims, sources and report folders.

A project configures them the pytest way, as ini options in ``[tool.pytest.ini_options]`` of its
``pyproject.toml`` (or ``pytest.ini``, ``tox.ini``, ``setup.cfg``)::

    [tool.pytest.ini_options]
    claims_dir = "claims"            # the claim records (*.toml)
    claims_sources = "sources"       # the documents they quote, with SHA256SUMS
    claims_report_dir = "reports"    # claims.json, claims.md, claims.html

Relative paths are relative to the ini file's folder (or, without one, to pytest's rootdir); the
defaults are ``claims/``, ``sources/`` and ``reports/`` there. The command-line options
``--claims-dir``, ``--claims-sources`` and ``--claims-report-dir`` override them (relative to the
folder pytest was started in), as ``--cov-config`` overrides coverage.py's ini lookup.

A project without a claims folder (no ``claims/`` and no ``claims_dir`` set) leaves the plugin inert:
no catalog is loaded, no report is written, nothing fails (:attr:`ClaimsPaths.active`), so installing
the package changes nothing for other projects in the same environment.

:func:`current` is what the test kit and the command line read (the paths of the running pytest
session, set by the plugin at configure time; outside pytest, :func:`discover` from the working
folder), so no helper reads this repository's folders behind the options' back.
"""

from __future__ import annotations

import configparser
import copy
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ClaimsPaths", "ConfigFileError", "INI_MAX_BYTES", "INI_OPTIONS", "PATH_OPTIONS", "add_ini_options", "from_pytest", "discover", "current",
           "activate", "repair_rootdir"]

INI_OPTIONS = {
    "claims_dir": ("claims", "folder of the claim records (*.toml), relative to the ini file's folder"),
    "claims_sources": ("sources", "folder of the source documents (with SHA256SUMS), relative to the ini file's "
                                  "folder"),
    "claims_report_dir": ("reports", "where claims.json, claims.md and claims.html are written, relative to the "
                                     "ini file's folder"),
}
"""The ini options: name -> (default folder, help)."""

_OPTION_OF_INI = {"claims_dir": "claims_dir", "claims_sources": "claims_sources", "claims_report_dir": "claims_report_dir"}

PATH_OPTIONS = ("--claims-dir", "--claims-sources", "--claims-report-dir", "--claims-model", "--claims-text")
"""The command-line options whose value is a path (see :func:`repair_rootdir`)."""


@dataclass(frozen=True)
class ClaimsPaths:
    """The folders of one project.

    ``root``: the folder relative paths of the ini file are resolved against (the ini file's folder or
    pytest's rootdir); ``claims_dir``, ``sources_dir``, ``report_dir``: absolute paths; ``explicit``:
    the claims folder was named (on the command line or in the ini file), so a missing one is an error
    rather than a project without claims."""

    root: Path
    claims_dir: Path
    sources_dir: Path
    report_dir: Path
    explicit: bool = False

    @property
    def active(self) -> bool:
        """Whether the plugin decides claims here: the claims folder exists or was named."""
        return self.explicit or self.claims_dir.is_dir()


def add_ini_options(parser) -> None:
    """Declare :data:`INI_OPTIONS` on pytest's ``parser`` (``pytest_addoption``)."""
    for name, (default, help_text) in INI_OPTIONS.items():
        parser.addini(name, f"attention-claims: {help_text} (default: {default}/)", default="")


def _absolute(value: str | Path, base: Path) -> Path:
    p = Path(value).expanduser()
    return p if p.is_absolute() else base / p


def from_pytest(config) -> ClaimsPaths:
    """The folders of the project pytest runs in: each command-line option (relative to the invocation
    folder), else the ini option (relative to the ini file's folder), else the default there."""
    root = Path(config.inipath).parent if config.inipath is not None else Path(config.rootpath)
    invoked = Path(config.invocation_params.dir)
    found, explicit = {}, False
    for ini in INI_OPTIONS:
        option = config.getoption(_OPTION_OF_INI[ini], None)
        value = config.getini(ini)
        if option:
            found[ini] = _absolute(option, invoked)
        elif value:
            found[ini] = _absolute(value, root)
        else:
            found[ini] = root / INI_OPTIONS[ini][0]
        if ini == "claims_dir":
            explicit = bool(option or value)
    return ClaimsPaths(root=root, claims_dir=found["claims_dir"], sources_dir=found["claims_sources"],
                       report_dir=found["claims_report_dir"], explicit=explicit)


INI_MAX_BYTES = 4 << 20
"""The largest ini file (``pyproject.toml``, ``pytest.ini``, ``tox.ini``, ``setup.cfg``) read (a project's is
a few kB)."""


class ConfigFileError(ValueError):
    """An ini file on the way up from the working folder that cannot be read as pytest reads it: not a regular
    file (a FIFO, a device), larger than :data:`INI_MAX_BYTES`, not UTF-8, not TOML or ini syntax, nested too
    deeply, or with ``[tool.pytest.ini_options]`` (or ``tool``) not a table. ``str()`` names the file (and the
    table); the command line exits 4 (:data:`attention_claims.tools.USAGE_ERROR`) with it, as pytest does
    for an ini file it cannot parse."""


def _table(value, path: Path, name: str) -> dict:
    if not isinstance(value, dict):
        raise ConfigFileError(f"{path}: {name} is a {type(value).__name__}, not a table; pytest reads its options "
                              "from [tool.pytest.ini_options]")
    return value


def _ini_values(path: Path) -> dict[str, str] | None:
    """The pytest ini section of ``path`` (None when the file has none), as pytest reads it; the file is read
    through the package's one reader (:func:`attention_claims._files.read_toml` / ``read_text``: a regular
    file only, opened without blocking, at most :data:`INI_MAX_BYTES`).

    Raises:
        ConfigFileError: the file cannot be read or parsed (naming it; see the class).
    """
    from .. import _files

    try:
        if path.name == "pyproject.toml":
            data = _files.read_toml(path, INI_MAX_BYTES)
            tool = _table(data.get("tool", {}), path, "tool")
            section = _table(tool.get("pytest", {}), path, "[tool.pytest]").get("ini_options")
            if section is None:
                return None
            return {k: str(v) for k, v in _table(section, path, "[tool.pytest.ini_options]").items()}
        parser = configparser.ConfigParser(interpolation=None)
        parser.read_string(_files.read_text(path, INI_MAX_BYTES), source=str(path))
    except _files.UnsafeFileError as exc:
        raise ConfigFileError(f"{exc}; pytest and attention-claims read the project's options from it") from None
    except OSError as exc:
        raise ConfigFileError(f"{path}: cannot be read ({exc.strerror or exc}); pytest and attention-claims read "
                              "the project's options from it") from None
    except configparser.Error as exc:
        raise ConfigFileError(f"{path}: not an ini file pytest can read ({' '.join(str(exc).split())})") from None
    name = "tool:pytest" if path.name == "setup.cfg" else "pytest"
    if parser.has_section(name):
        return dict(parser.items(name))
    return {} if path.name == "pytest.ini" else None


def discover(start: Path | None = None) -> ClaimsPaths:
    """The folders of the project around ``start`` (default: the working folder), found as pytest finds
    its ini file: the nearest ``pytest.ini``, ``pyproject.toml``, ``tox.ini`` or ``setup.cfg`` with a
    pytest section, in ``start`` or a parent; without one, ``start`` itself with the defaults.

    Unlike pytest, which passes over an ini name that is not a file, anything but a folder at one of
    those names is read (and a FIFO or a device refused, not skipped), so a tool never takes another
    folder's options silently.

    Raises:
        ConfigFileError: an ini file on the way cannot be read or parsed (naming it).
    """
    start = Path(start or Path.cwd()).resolve()
    for folder in (start, *start.parents):
        for name in ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg"):
            candidate = folder / name
            values = _ini_values(candidate) if candidate.exists() and not candidate.is_dir() else None
            if values is None:
                continue
            dirs = {ini: _absolute(values.get(ini) or default, folder) for ini, (default, _h) in INI_OPTIONS.items()}
            return ClaimsPaths(root=folder, claims_dir=dirs["claims_dir"], sources_dir=dirs["claims_sources"],
                               report_dir=dirs["claims_report_dir"], explicit=bool(values.get("claims_dir")))
    return ClaimsPaths(root=start, claims_dir=start / "claims", sources_dir=start / "sources",
                       report_dir=start / "reports")


_CURRENT: ClaimsPaths | None = None


def activate(paths: ClaimsPaths | None) -> ClaimsPaths | None:
    """Make ``paths`` what :func:`current` returns (the plugin, at configure time; None to forget) and
    return what it returned before (the plugin restores it at unconfigure)."""
    global _CURRENT
    previous, _CURRENT = _CURRENT, paths
    return previous


def current() -> ClaimsPaths:
    """The folders of the running pytest session, or, outside one, :func:`discover` from the working
    folder."""
    return _CURRENT if _CURRENT is not None else discover()


def repair_rootdir(early_config, parser, args: list[str]) -> bool:
    """Undo the rootdir move that a path-valued option of this plugin causes (``--claims-model PATH``).

    pytest picks its rootdir and ini file before it loads plugins from entry points, so it takes the
    value of an option it does not know yet for a file argument: ``pytest --claims-model ../model``
    roots the run at the common ancestor of the project and the model, loses the project's
    ``configfile`` and ``addopts``, and writes the report outside the project. Called from
    ``pytest_load_initial_conftests`` (the first hook after the plugins are loaded, before anything
    reads the rootdir), this determines the setup again with the options known, and when it differs
    puts the project's rootdir, ini file and ``addopts`` back. Returns whether it changed anything.

    It sets the rootdir, ini path and ini values of ``early_config`` (pytest has no public setter for
    them; ``tests/framework/test_config.py`` runs it against the pytest in use).
    """
    if not any(a in PATH_OPTIONS for a in args):
        return False
    from _pytest.config.findpaths import determine_setup

    ns = parser.parse_known_args(args, namespace=copy.copy(early_config.option))
    rootpath, inipath, inicfg, *_ = determine_setup(
        inifile=ns.inifilename, override_ini=ns.override_ini, args=ns.file_or_dir,
        rootdir_cmd_arg=ns.rootdir or None, invocation_dir=early_config.invocation_params.dir)
    if (rootpath, inipath) == (early_config.rootpath, early_config.inipath):
        return False
    early_config._rootpath, early_config._inipath, early_config._inicfg = rootpath, inipath, inicfg
    early_config._inicache.clear()
    parser.extra_info["rootdir"] = str(rootpath)
    parser.extra_info["inifile"] = str(inipath)
    addopts = early_config.getini("addopts")
    if addopts:
        args[:] = list(addopts) + args
    early_config.known_args_namespace = parser.parse_known_args(args, namespace=copy.copy(early_config.option))
    if ns.confcutdir is None:
        early_config.known_args_namespace.confcutdir = str(inipath.parent if inipath is not None else rootpath)
    return True
