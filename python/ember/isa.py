"""NPU descriptions (the ISA JSON): load and check them as every Ember tool does."""

import json as _json
import os as _os

from . import _ember


class Description:
    """A validated NPU description."""

    def __init__(self, info):
        self.name = info["name"]
        self.version = info["version"]
        self.file = info["file"]
        self.sha256 = info["sha256"]
        self.peak_macs_per_cycle = info["peak_macs_per_cycle"]
        self.json = _json.loads(info["json"])

    def __repr__(self):
        return f"<ember.isa.Description {self.name} {self.version} ({self.file})>"


def load(path=None):
    """Loads and validates a description (default: isa/ember-v1.json, or $EMBER_ISA).
    Raises ember.Error naming the file, the JSON path and the reason when it is invalid."""
    return Description(_ember.isa_load(_os.fspath(path) if path is not None else ""))


def check(path):
    """Validates `path`; returns its name, or raises ember.Error with the validator's
    message (as `ember-isa check` prints it)."""
    return load(path).name


def default_path():
    """The description tools use without --isa."""
    return _ember.default_isa_path()
