#pragma once
// Runs one of planck's own Python scripts (python/, embedded in the binary at build time) with
// the system python3 in isolated mode (-I: no user site, no PYTHON* variables), and returns what
// it printed. Used to read Python-format configs with Python's own parser; the user's file is
// only ever parsed by that script, never imported or executed.

#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"

namespace planck::import {

// The torchtitan registry reader (python/planck_torchtitan_registry.py).
const std::string& torchtitan_registry_script();

// stdout of `python3 -I -c SCRIPT ARGS...`, with `input` on its standard input. python3 missing,
// a crash, a non-zero exit or more than `timeout_seconds` of running: an error naming what
// happened and stderr's last lines. python3 runs in its own process group, dies with planck
// (PR_SET_PDEATHSIG) and is killed with its group when a signal ends planck
// (core/base/signal_cleanup.h).
core::Result<std::string> run_python(const std::string& script, const std::vector<std::string>& args,
                                     int timeout_seconds = 60, std::string_view input = {});

}  // namespace planck::import
